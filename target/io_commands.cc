// SPDX-License-Identifier: BSD-3-Clause
// CommandProcessor: NVM I/O commands (Read, Write, Flush, Write Zeroes, Dataset Management;
// NVM CS 1.0 §3.2) and the CC.SHN flush. RAM namespaces answer at once; file and block-device
// namespaces go through the IoEngine (NextStep::kBackend) and answer from io_done().
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/log.h"
#include "common/nvme_status.h"
#include "target/command_processor.h"
#include "target/control_lock.h"
#include "target/io_engine.h"
#include "target/lba_range.h"
#include "target/log_limiter.h"

namespace nvmf::target {
namespace {

constexpr uint32_t kBroadcastNsid = 0xFFFFFFFF;
constexpr uint16_t kInvalidNamespace = generic_status(proto::kScInvalidNamespaceOrFormat);
constexpr uint16_t kInvalidField = generic_status(proto::kScInvalidField);
using proto::DsmRange;
using proto::kDsmAttributeDeallocate;
using proto::kWriteZeroesDeac;
// Log at most this many backend errors per queue at WARN (then one line per 1000).
constexpr uint32_t kIoErrorsLogged = 16;

// RAM: zero [offset, offset + length): whole pages given back to the kernel (they read as
// zeroes again), the partial pages at either end cleared.
void zero_ram(std::span<uint8_t> bytes) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(bytes.data());
  uintptr_t end = begin + bytes.size();
  uintptr_t inner_begin = (begin + page - 1) / page * page;
  uintptr_t inner_end = end / page * page;
  if (inner_begin >= inner_end || ::madvise(reinterpret_cast<void*>(inner_begin),
                                            inner_end - inner_begin, MADV_DONTNEED) != 0) {
    std::memset(bytes.data(), 0, bytes.size());
    return;
  }
  std::memset(bytes.data(), 0, inner_begin - begin);
  std::memset(reinterpret_cast<void*>(inner_end), 0, end - inner_end);
}

IoCommand io_command_of(uint8_t opcode) {
  switch (opcode) {
    case proto::kNvmRead:
      return IoCommand::kRead;
    case proto::kNvmWrite:
      return IoCommand::kWrite;
    case proto::kNvmWriteZeroes:
      return IoCommand::kWriteZeroes;
    case proto::kNvmDatasetManagement:
      return IoCommand::kDatasetManagement;
    default:
      return IoCommand::kFlush;
  }
}

}  // namespace

NextStep CommandProcessor::begin_io(Request& r) {
  // ANA (nvmet_check_ana_state): a namespace whose group this port presents inaccessible, lost
  // or changing answers with the path status, whatever the command; looked up only while some
  // group is in such a state.
  if (ana_ != nullptr && ana_->any_restricted()) {
    if (const SubsystemNamespace* n = subsystem_->find_namespace(r.sqe->nsid); n != nullptr) {
      if (uint16_t st = ana_io_status(ana_->state(n->anagrpid)); st != kStatusSuccess) {
        return complete(r, st);
      }
    }
  }
  switch (r.sqe->opcode) {
    case proto::kNvmRead:
      return read_write(r, false);
    case proto::kNvmWrite:
      return read_write(r, true);
    case proto::kNvmFlush:
      return flush(r);
    case proto::kNvmWriteZeroes:
      return write_zeroes(r);
    case proto::kNvmDatasetManagement:
      return dataset_management(r);
    default:
      return complete(r, generic_status(proto::kScInvalidOpcode));
  }
}

Namespace* CommandProcessor::find_namespace(uint32_t nsid) const {
  const SubsystemNamespace* n = subsystem_->find_namespace(nsid);
  return n != nullptr ? n->ns : nullptr;
}

Namespace* CommandProcessor::namespace_of(const Request& r) const {
  Namespace* ns = find_namespace(r.nsid);
  return ns != nullptr && ns->serial() == r.ns_serial ? ns : nullptr;
}

void CommandProcessor::backend_done(Request& r) {
  if (r.io_ns == nullptr) return;
  r.io_ns->io_finished();
  r.io_ns = nullptr;
}

NextStep CommandProcessor::submit_io(Request& r, Namespace& ns, IoOp op, uint64_t offset,
                                     uint64_t length, uint8_t* data) {
  // Counted before the engine sees it: a removed namespace's file stays open until this
  // completes (Target waits for Namespace::io_in_flight() to reach 0).
  ns.io_started();
  r.io_ns = &ns;
  r.io.op = op;
  r.io.fd = ns.fd();
  r.io.offset = offset;
  r.io.length = length;
  r.io.data = data;
  r.io.fua = op == IoOp::kWrite && r.fua;
  r.io.polled = ns.polled();
  (engine_ != nullptr ? engine_ : ns.engine())->submit(r.io);
  return NextStep::kBackend;
}

NextStep CommandProcessor::read_write(Request& r, bool is_write) {
  const proto::Sqe& s = *r.sqe;
  Namespace* ns = find_namespace(s.nsid);
  if (ns == nullptr) return complete(r, kInvalidNamespace);
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  uint64_t slba = (static_cast<uint64_t>(s.cdw11) << 32) | s.cdw10;
  uint32_t nlb = (s.cdw12 & proto::kRwNlbMask) + 1;
  if (uint16_t st = check_lba_range(slba, nlb, ns->num_lbas()); st != kStatusSuccess) {
    return complete(r, st);
  }
  uint64_t bytes = io_bytes(nlb, ns->lba_shift());
  if (bytes > subsystem_->config().max_transfer_bytes()) {
    return complete(r, kInvalidField);  // above MDTS
  }
  uint64_t offset = slba << ns->lba_shift();
  r.nsid = s.nsid;
  r.ns_serial = ns->serial();
  if (is_write) {
    r.ns_offset = offset;
    r.fua = (s.cdw12 & proto::kRwFua) != 0;
    return receive_data(r, static_cast<uint32_t>(bytes), PendingOp::kWrite);
  }
  if (uint16_t st = check_data_length(r.sgl, bytes); st != kStatusSuccess) return complete(r, st);
  if (ns->file_backed()) return submit_io(r, *ns, IoOp::kRead, offset, bytes, r.buffer.data());
  std::memcpy(r.buffer.data(), ns->bytes(offset, bytes).data(), bytes);
  counters_.reads.add();
  counters_.read_bytes.add(bytes);
  return respond_with_data(r, static_cast<uint32_t>(bytes));
}

NextStep CommandProcessor::write_data(Request& r, const uint8_t* contiguous) {
  // The data came while other things could happen: the namespace may be gone or smaller now.
  Namespace* ns = namespace_of(r);
  if (ns == nullptr) return complete(r, kInvalidNamespace);
  const uint32_t bytes = r.transfer_bytes;
  if (r.ns_offset > ns->size_bytes() || bytes > ns->size_bytes() - r.ns_offset) {
    return complete(r, generic_status(proto::kScLbaOutOfRange));
  }
  if (contiguous == nullptr) {
    counters_.writes_in_capsule.add();
    counters_.writes_in_capsule_bytes.add(bytes);
  } else {
    counters_.writes_rdma_read.add();
    counters_.writes_rdma_read_bytes.add(bytes);
  }
  r.transfer_bytes = 0;  // nothing goes back to the host
  if (!ns->file_backed()) {
    copy_payload(r, contiguous, ns->bytes(r.ns_offset, bytes));
    return complete(r, kStatusSuccess);
  }
  // The engine writes from one contiguous, page-aligned buffer (O_DIRECT needs the alignment):
  // in-capsule data is gathered from the receive's pages into the slot's buffer first.
  if (contiguous == nullptr) copy_payload(r, nullptr, r.buffer.first(bytes));
  return submit_io(r, *ns, IoOp::kWrite, r.ns_offset, bytes, r.buffer.data());
}

NextStep CommandProcessor::flush(Request& r) {
  const proto::Sqe& s = *r.sqe;
  if (s.nsid != kBroadcastNsid && find_namespace(s.nsid) == nullptr) {
    return complete(r, kInvalidNamespace);
  }
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
  r.step = 0;
  return flush_next(r);
}

NextStep CommandProcessor::flush_next(Request& r) {
  const uint32_t nsid = r.sqe->nsid;
  for (;;) {
    const SubsystemNamespace* n = nsid == kBroadcastNsid ? subsystem_->namespace_after(r.step)
                                  : r.step == 0          ? subsystem_->find_namespace(nsid)
                                                         : nullptr;
    if (n == nullptr) break;
    r.step = n->nsid;
    r.nsid = n->nsid;
    r.ns_serial = n->ns->serial();
    Namespace* ns = n->ns;
    if (!ns->file_backed()) continue;  // RAM: nothing volatile to write back
    // A broadcast Flush leaves out the namespaces this port cannot reach (their ANA group
    // refuses I/O here); a Flush of one such namespace was answered in begin_io.
    if (ana_ != nullptr && ana_->any_restricted() &&
        ana_io_status(ana_->state(n->anagrpid)) != kStatusSuccess) {
      continue;
    }
    if (ns->flush_error() != 0) {
      return complete(r, status_for_io_error(IoCommand::kFlush, ns->flush_error()));
    }
    return submit_io(r, *ns, IoOp::kFlush, 0, 0, nullptr);
  }
  counters_.flushes.add();
  return complete(r, kStatusSuccess);
}

NextStep CommandProcessor::shutdown_next(Request& r) {
  while (const SubsystemNamespace* n = subsystem_->namespace_after(r.step)) {
    r.step = n->nsid;
    r.nsid = n->nsid;
    r.ns_serial = n->ns->serial();
    if (n->ns->file_backed()) return submit_io(r, *n->ns, IoOp::kFlush, 0, 0, nullptr);
  }
  if (controller_ != nullptr) controller_->registers().shutdown_complete();
  if (uint64_t suppressed = 0; connection_log_limiter().allow(
          "shutdown complete", std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(INFO, "target") << link_.describe() << ": shutdown complete (namespaces flushed)"
                             << suppressed_note(suppressed);
  }
  return complete(r, kStatusSuccess);
}

NextStep CommandProcessor::write_zeroes(Request& r) {
  const proto::Sqe& s = *r.sqe;
  Namespace* ns = find_namespace(s.nsid);
  if (ns == nullptr) return complete(r, kInvalidNamespace);
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
  uint64_t slba = (static_cast<uint64_t>(s.cdw11) << 32) | s.cdw10;
  uint32_t nlb = (s.cdw12 & proto::kRwNlbMask) + 1;
  if (uint16_t st = check_lba_range(slba, nlb, ns->num_lbas()); st != kStatusSuccess) {
    return complete(r, st);
  }
  uint64_t offset = slba << ns->lba_shift();
  uint64_t bytes = io_bytes(nlb, ns->lba_shift());
  if (!ns->file_backed()) {
    zero_ram(ns->bytes(offset, bytes));
    return complete(r, kStatusSuccess);
  }
  // DEAC: punch a hole (reads as zeroes, frees the space); otherwise zero the range in place.
  // The other of the two is tried when the backing lacks one (io_done, EOPNOTSUPP).
  bool deac = (s.cdw12 & kWriteZeroesDeac) != 0;
  r.nsid = s.nsid;
  r.ns_serial = ns->serial();
  return submit_io(r, *ns, deac ? IoOp::kPunchHole : IoOp::kZeroRange, offset, bytes, nullptr);
}

NextStep CommandProcessor::dataset_management(Request& r) {
  const proto::Sqe& s = *r.sqe;
  const Namespace* ns = find_namespace(s.nsid);
  if (ns == nullptr) return complete(r, kInvalidNamespace);
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  const uint32_t needed = ((s.cdw10 & 0xFF) + 1) * static_cast<uint32_t>(sizeof(DsmRange));
  // A longer SGL is accepted and only NR + 1 ranges are moved: the Linux host always sends its
  // whole 4096-byte range buffer (nvme_setup_discard), and nvmet checks DSM data with
  // "at least" (nvmet_check_data_len_lte) where other commands need the exact length.
  if (r.sgl.length < needed) return complete(r, generic_status(proto::kScDataSglLengthInvalid));
  r.sgl.length = needed;
  r.nsid = s.nsid;
  r.ns_serial = ns->serial();
  return receive_data(r, needed, PendingOp::kDsmRanges);
}

NextStep CommandProcessor::dsm_ranges_arrived(Request& r, const uint8_t* contiguous) {
  Namespace* ns = namespace_of(r);
  if (ns == nullptr) return complete(r, kInvalidNamespace);
  // The ranges, whole, into the slot's buffer (in-capsule data included), then checked.
  if (contiguous == nullptr) copy_payload(r, nullptr, r.buffer.first(r.transfer_bytes));
  const uint32_t count = r.transfer_bytes / sizeof(DsmRange);
  r.transfer_bytes = 0;
  for (uint32_t i = 0; i < count; ++i) {
    DsmRange range;
    std::memcpy(&range, r.buffer.data() + i * sizeof(DsmRange), sizeof(range));
    if (range.nlb == 0) continue;
    if (range.slba >= ns->num_lbas() || range.nlb > ns->num_lbas() - range.slba) {
      return complete(r, generic_status(proto::kScLbaOutOfRange));
    }
  }
  // Without AD the attributes are hints only: nothing to do (as nvmet).
  if ((r.sqe->cdw11 & kDsmAttributeDeallocate) == 0) return complete(r, kStatusSuccess);
  r.step = 0;
  return dsm_next(r);
}

NextStep CommandProcessor::dsm_next(Request& r) {
  Namespace* ns = namespace_of(r);
  if (ns == nullptr) return complete(r, kInvalidNamespace);
  const uint32_t count = (r.sqe->cdw10 & 0xFF) + 1;
  while (r.step < count) {
    DsmRange range;
    std::memcpy(&range, r.buffer.data() + r.step * sizeof(DsmRange), sizeof(range));
    ++r.step;
    r.fallback_tried = false;
    if (range.nlb == 0) continue;
    // Checked again: the namespace may have shrunk since the ranges arrived.
    if (range.slba >= ns->num_lbas() || range.nlb > ns->num_lbas() - range.slba) {
      return complete(r, generic_status(proto::kScLbaOutOfRange));
    }
    uint64_t offset = range.slba << ns->lba_shift();
    uint64_t bytes = io_bytes(range.nlb, ns->lba_shift());
    if (!ns->file_backed()) {
      zero_ram(ns->bytes(offset, bytes));
      continue;
    }
    return submit_io(r, *ns, IoOp::kPunchHole, offset, bytes, nullptr);
  }
  return complete(r, kStatusSuccess);
}

NextStep CommandProcessor::io_failed(Request& r, IoCommand command) {
  const int err = static_cast<int>(-r.io.result);
  uint16_t status = status_for_io_error(command, err);
  ++io_errors_logged_;
  if (io_errors_logged_ <= kIoErrorsLogged || io_errors_logged_ % 1000 == 0) {
    NVMF_LOG(WARN, "target") << link_.describe() << ": " << io_op_name(r.io.op) << " of "
                             << r.io.length << " bytes at offset " << r.io.offset << ": "
                             << errno_string(err) << " -> " << status_name(status) << " ("
                             << io_errors_logged_ << " backend error(s) on this queue)";
  }
  return complete(r, status);
}

NextStep CommandProcessor::io_done(Request& r) {
  backend_done(r);  // no-op when the transport did it already
  const IoRequest& io = r.io;
  if (r.sqe->opcode == proto::kOpcodeFabrics) {  // the CC.SHN flush
    ControlLock lock(control_mutex());
    if (io.result < 0) {
      if (uint64_t suppressed = 0; refusal_log_limiter().allow(
              "flush at shutdown failed", std::chrono::steady_clock::now(), &suppressed)) {
        NVMF_LOG(WARN, "target") << link_.describe() << ": flush at shutdown failed: "
                                 << errno_string(static_cast<int>(-io.result))
                                 << suppressed_note(suppressed);
      }
      if (Namespace* ns = namespace_of(r)) ns->set_flush_error(static_cast<int>(-io.result));
    }
    return shutdown_next(r);
  }
  const IoCommand command = io_command_of(r.sqe->opcode);
  if (io.result < 0) {
    const int err = static_cast<int>(-io.result);
    if (command == IoCommand::kFlush) {
      if (Namespace* ns = namespace_of(r)) ns->set_flush_error(err);
    }
    // Zeroing: the backing may lack one fallocate mode (tmpfs has no ZERO_RANGE; a block
    // device may not unmap): the other one gives the same zeroes. Once per operation.
    if (err == EOPNOTSUPP && !r.fallback_tried &&
        (command == IoCommand::kWriteZeroes || command == IoCommand::kDatasetManagement)) {
      if (Namespace* ns = namespace_of(r)) {
        r.fallback_tried = true;
        IoOp other = io.op == IoOp::kPunchHole ? IoOp::kZeroRange : IoOp::kPunchHole;
        return submit_io(r, *ns, other, io.offset, io.length, nullptr);
      }
    }
    return io_failed(r, command);
  }
  switch (command) {
    case IoCommand::kRead:
      counters_.reads.add();
      counters_.read_bytes.add(io.length);
      return respond_with_data(r, static_cast<uint32_t>(io.length));
    case IoCommand::kWrite:
    case IoCommand::kWriteZeroes:
      return complete(r, kStatusSuccess);
    case IoCommand::kFlush:
      return flush_next(r);
    case IoCommand::kDatasetManagement:
      return dsm_next(r);
  }
  return complete(r, generic_status(proto::kScInternalError));
}

}  // namespace nvmf::target
