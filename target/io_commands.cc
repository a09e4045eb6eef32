// CommandProcessor: NVM I/O commands (Read, Write, Flush). NVM CS 1.0 §3.2.
#include <cstring>

#include "common/nvme_status.h"
#include "target/command_processor.h"
#include "target/lba_range.h"

namespace nvmf::target {
namespace {

constexpr uint32_t kBroadcastNsid = 0xFFFFFFFF;

}  // namespace

NextStep CommandProcessor::begin_io(Request& r) {
  switch (r.sqe->opcode) {
    case proto::kNvmRead:
      return read_write(r, false);
    case proto::kNvmWrite:
      return read_write(r, true);
    case proto::kNvmFlush:
      return flush(r);
    default:
      return complete(r, generic_status(proto::kScInvalidOpcode));
  }
}

NextStep CommandProcessor::read_write(Request& r, bool is_write) {
  const proto::Sqe& s = *r.sqe;
  if (s.nsid != 1) return complete(r, generic_status(proto::kScInvalidNamespaceOrFormat));
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  Namespace& ns = subsystem_->ns();
  uint64_t slba = (static_cast<uint64_t>(s.cdw11) << 32) | s.cdw10;
  uint32_t nlb = (s.cdw12 & proto::kRwNlbMask) + 1;
  if (uint16_t st = check_lba_range(slba, nlb, ns.num_lbas()); st != kStatusSuccess) {
    return complete(r, st);
  }
  uint64_t bytes = io_bytes(nlb, ns.lba_shift());
  if (bytes > subsystem_->config().max_transfer_bytes()) {
    return complete(r, generic_status(proto::kScInvalidField));  // above MDTS
  }
  uint64_t offset = slba << ns.lba_shift();
  if (is_write) {
    r.ns_offset = offset;
    return receive_data(r, static_cast<uint32_t>(bytes), PendingOp::kWrite);
  }
  if (uint16_t st = check_data_length(r.sgl, bytes); st != kStatusSuccess) return complete(r, st);
  std::memcpy(r.buffer.data(), ns.bytes(offset, bytes).data(), bytes);
  counters_.reads.add();
  counters_.read_bytes.add(bytes);
  return respond_with_data(r, static_cast<uint32_t>(bytes));
}

NextStep CommandProcessor::write_data(Request& r, const uint8_t* contiguous) {
  std::span<uint8_t> dst = subsystem_->ns().bytes(r.ns_offset, r.transfer_bytes);
  copy_payload(r, contiguous, dst);
  if (contiguous == nullptr) {
    counters_.writes_in_capsule.add();
    counters_.writes_in_capsule_bytes.add(r.transfer_bytes);
  } else {
    counters_.writes_rdma_read.add();
    counters_.writes_rdma_read_bytes.add(r.transfer_bytes);
  }
  r.transfer_bytes = 0;  // nothing goes back to the host
  return complete(r, kStatusSuccess);
}

NextStep CommandProcessor::flush(Request& r) {
  const proto::Sqe& s = *r.sqe;
  if (s.nsid != 1 && s.nsid != kBroadcastNsid) {
    return complete(r, generic_status(proto::kScInvalidNamespaceOrFormat));
  }
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
  if (!subsystem_->ns().flush().ok()) {
    return complete(r, generic_status(proto::kScInternalError, false));
  }
  counters_.flushes.add();
  return complete(r, kStatusSuccess);
}

}  // namespace nvmf::target
