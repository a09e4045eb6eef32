// SPDX-License-Identifier: BSD-3-Clause
// CommandProcessor: dispatch, data phase helpers and the Fabrics commands (Connect, Property
// Get/Set). Admin commands are in admin_commands.cc, NVM I/O in io_commands.cc.
#include "target/command_processor.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "common/log.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "proto/auth.h"
#include "target/control_lock.h"
#include "target/log_limiter.h"
#include "target/port.h"

namespace nvmf::target {
namespace {

constexpr uint16_t kInvalidOpcode = generic_status(proto::kScInvalidOpcode);
constexpr uint16_t kInvalidField = generic_status(proto::kScInvalidField);
constexpr uint16_t kConnectInvalidParameters =
    make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true);
constexpr uint16_t kCommandSequenceError = generic_status(proto::kScCommandSequenceError);
// A command on a connected queue whose controller was freed (listener removed, host or subsystem
// disconnected, keep-alive expiry) before the transport tore the queue down: a path status
// without DNR, so a multipath host (Linux nvme_failover_req) sends it on another path and a
// single-path host retries it after reconnecting, never an error to the application.
constexpr uint16_t kControllerGone = make_status(proto::kSctPath, proto::kScControllerPathingError);
// nvmet_check_auth_status: any command but Authentication Send/Receive on a queue whose host has
// a key and has not authenticated yet.
constexpr uint16_t kAuthRequired =
    make_status(proto::kSctCommandSpecific, proto::kScAuthRequired, true);
// nvmet_alloc_ctrl gives a discovery controller connected with KATO 0 this Keep Alive Timeout
// (NVMET_DISC_KATO_MS), so a host that vanishes does not hold its queues forever.
constexpr uint32_t kDiscoveryDefaultKatoMs = 120000;

// Every this many bytes of a READ's buffer, and in its last 8, a sentinel word is stamped.
constexpr uint32_t kSentinelStride = 512;

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Random once per process: a host cannot know the sentinels (it could only make its own
// command fail anyway).
uint64_t sentinel_seed() {
  static const uint64_t seed = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

// The offsets stamped in a READ of `bytes` (>= 8): every kSentinelStride, and bytes - 8.
template <typename F>
void for_each_sentinel(uint32_t bytes, F&& f) {
  if (bytes < sizeof(uint64_t)) return;
  for (uint32_t off = 0; off + sizeof(uint64_t) <= bytes; off += kSentinelStride) f(off);
  if ((bytes - sizeof(uint64_t)) % kSentinelStride != 0) f(bytes - sizeof(uint64_t));
}

// An NQN field copied out with a guaranteed terminator (a host may fill all 256 bytes).
std::string nqn_field(const char (&field)[proto::kNqnFieldLength]) {
  return std::string(field, strnlen(field, sizeof(field)));
}

}  // namespace

CommandProcessor::CommandProcessor(Subsystem& subsystem, QueueLink& link, QueueCounters& counters,
                                   StatusCounters& statuses, uint16_t cm_qid, uint32_t queue_size,
                                   uint32_t in_capsule_area_bytes)
    : subsystem_(&subsystem),
      link_(link),
      counters_(counters),
      statuses_(statuses),
      qid_(cm_qid),
      queue_size_(queue_size),
      in_capsule_area_bytes_(in_capsule_area_bytes),
      sq_entries_(queue_size == 0 ? 1 : queue_size) {
  if (cm_qid == 0) held_aers_.reserve(size_t{subsystem.config().aerl} + 1);
}

CommandProcessor::~CommandProcessor() {
  detach();
  if (bound_) subsystem_->queues().release();
}

void CommandProcessor::detach() {
  if (controller_ == nullptr) return;
  ControlLock lock(control_mutex());
  std::shared_ptr<Controller> ctrl = std::move(controller_);
  controller_ = nullptr;
  if (freed_.load(std::memory_order_relaxed)) return;  // freed by another group: already left
  ctrl->detach(qid_, this);
  if (qid_ == 0) subsystem_->free_controller(ctrl->cntlid(), "admin queue gone");
}

void CommandProcessor::controller_freed() {
  if (controller_ == nullptr || freed_.load(std::memory_order_relaxed)) return;
  controller_->detach(qid_, this);
  if (link_.on_owner_thread()) {
    controller_ = nullptr;
  } else {
    freed_.store(true, std::memory_order_release);
  }
  if (qid_ != 0) link_.request_disconnect("controller freed");
}

Port* CommandProcessor::port() const { return port_ != nullptr ? port_ : subsystem_->port(); }

void CommandProcessor::bind(Subsystem& chosen, Controller* ctrl, uint16_t sqsize) {
  if (bound_) subsystem_->queues().release();
  chosen.queues().acquire();
  bound_ = true;
  subsystem_ = &chosen;
  state_ = ConnectState::kConnected;
  sq_entries_ = uint32_t{sqsize} + 1;
  sq_head_ = static_cast<uint16_t>(sq_head_ % sq_entries_);
  controller_ = chosen.shared_controller(ctrl->cntlid());
  if (Port* p = port(); p != nullptr) ana_ = p->ana_states(chosen);
  ctrl->note_traffic();  // nvmet_install_queue: a queue connecting counts as traffic
  ctrl->attach(qid_, this);
  subsystem_->registry().set_queue_controller(&counters_, ctrl->cntlid());
}

// ------------------------------------------------------------------------------- dispatch --

NextStep CommandProcessor::begin(Request& r) {
  const proto::Sqe& sqe = *r.sqe;
  counters_.commands.add();
  sq_head_ = static_cast<uint16_t>((sq_head_ + 1u) % sq_entries_);
  r.cqe = proto::Cqe{};
  r.cqe.cid = sqe.cid;
  r.cqe.sqid = qid_;
  r.sgl = DecodedSgl{};
  r.transfer_bytes = 0;
  r.invalidate = false;
  r.pending = PendingOp::kNone;
  r.fua = false;
  r.nsid = 0;
  r.ns_serial = 0;
  r.step = 0;
  r.fallback_tried = false;
  if ((sqe.flags & proto::kFlagsFuseMask) != 0) return complete(r, kInvalidField);
  if (uint16_t st = check_psdt(sqe); st != kStatusSuccess) return complete(r, st);
  // The NVM I/O path: a connected I/O queue's non-Fabrics command, without the control lock.
  if (qid_ != 0 && controller_ != nullptr && sqe.opcode != proto::kOpcodeFabrics &&
      !unauthenticated_ && !freed_.load(std::memory_order_acquire)) {
    controller_->note_traffic();
    if (!controller_->enabled()) {
      return complete(r, generic_status(proto::kScCommandSequenceError));
    }
    return begin_io(r);
  }
  // Authentication Send/Receive: per-queue state and cryptography, never under the control lock
  // (a DH exchange would stall every poll group's Connect and admin work).
  if (controller_ != nullptr && sqe.opcode == proto::kOpcodeFabrics &&
      !freed_.load(std::memory_order_acquire)) {
    const uint8_t fctype = reinterpret_cast<const proto::FabricsCommand*>(r.sqe)->fctype;
    if (fctype == proto::kFctypeAuthSend || fctype == proto::kFctypeAuthReceive) {
      controller_->note_traffic();
      return fctype == proto::kFctypeAuthSend ? auth_send(r) : auth_receive(r);
    }
  }
  ControlLock lock(control_mutex());
  if (controller_ == nullptr || freed_.load(std::memory_order_relaxed)) {
    return begin_unconnected(r);
  }
  controller_->note_traffic();
  // Not authenticated yet: every other command, Property Get/Set included (nvmet lets those
  // through on the admin queue; nothing a host needs before authenticating).
  if (unauthenticated_) return complete(r, kAuthRequired);
  if (sqe.opcode == proto::kOpcodeFabrics) return begin_fabrics(r);
  if (!controller_->enabled()) {
    return complete(r, generic_status(proto::kScCommandSequenceError));
  }
  return begin_admin(r);
}

NextStep CommandProcessor::begin_unconnected(Request& r) {
  const auto& c = *reinterpret_cast<const proto::ConnectCommand*>(r.sqe);
  // Connect must come first, and once: anything else before it, a second Connect while the
  // first is in progress or on a queue whose controller was freed.
  const bool connect = c.opcode == proto::kOpcodeFabrics && c.fctype == proto::kFctypeConnect;
  if (state_ == ConnectState::kConnected && !connect) return complete(r, kControllerGone);
  if (c.opcode != proto::kOpcodeFabrics || c.fctype != proto::kFctypeConnect ||
      state_ != ConnectState::kNone) {
    return complete(r, kCommandSequenceError);
  }
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  NextStep step = receive_data(r, proto::kConnectDataSize, PendingOp::kConnect);
  if (step == NextStep::kReadFromHost) state_ = ConnectState::kInProgress;
  return step;
}

NextStep CommandProcessor::begin_fabrics(Request& r) {
  const auto& f = *reinterpret_cast<const proto::FabricsCommand*>(r.sqe);
  if (f.fctype == proto::kFctypeConnect) return complete(r, kCommandSequenceError);
  if (qid_ != 0) return complete(r, kInvalidOpcode);  // nvmet_parse_fabrics_io_cmd
  switch (f.fctype) {
    case proto::kFctypePropertyGet:
      return property_get(r);
    case proto::kFctypePropertySet:
      return property_set(r);
    default:
      return complete(r, kInvalidOpcode);
  }
}

NextStep CommandProcessor::complete(Request& r, uint16_t status) {
  r.cqe.status = status;
  r.cqe.sqhd = sqhd_disabled_ ? proto::kSqhdDisabled : sq_head_;
  if (status != kStatusSuccess) {
    counters_.errors.add();
    statuses_.add(status);
    NVMF_LOG(DEBUG, "target") << link_.describe() << ": opcode 0x" << std::hex
                              << unsigned{r.sqe->opcode} << " cdw10 0x" << r.sqe->cdw10 << std::dec
                              << " cid " << r.sqe->cid << ": " << status_name(status);
  }
  return NextStep::kRespond;
}

// ----------------------------------------------------------------------------- data phase --

uint16_t CommandProcessor::decode_sgl(Request& r) {
  SglDecodeContext ctx{in_capsule_area_bytes_, r.in_capsule.received_bytes};
  SglDecodeResult d = decode_command_sgl(*r.sqe, ctx);
  if (!d.ok()) return d.status;
  r.sgl = d.sgl;
  // nvmet_rdma_map_sgl_keyed: a zero-length keyed SGL moves nothing and invalidates nothing.
  r.invalidate = d.sgl.kind == SglKind::kKeyed && d.sgl.invalidate && d.sgl.length > 0;
  return kStatusSuccess;
}

NextStep CommandProcessor::respond_with_data(Request& r, uint32_t bytes) {
  r.transfer_bytes = bytes;
  complete(r, kStatusSuccess);
  return bytes == 0 ? NextStep::kRespond : NextStep::kWriteToHostThenRespond;
}

NextStep CommandProcessor::receive_data(Request& r, uint32_t bytes, PendingOp op) {
  if (uint16_t st = check_data_length(r.sgl, bytes); st != kStatusSuccess) return complete(r, st);
  if (bytes > r.buffer.size()) return complete(r, kInvalidField);
  r.pending = op;
  r.transfer_bytes = bytes;
  if (r.sgl.kind == SglKind::kInCapsule) return finish_pending(r, nullptr);
  stamp_read_sentinels(r);
  return NextStep::kReadFromHost;
}

void CommandProcessor::stamp_read_sentinels(Request& r) {
  r.read_sentinel =
      splitmix64(sentinel_seed() ^ reinterpret_cast<uintptr_t>(this) ^ ++reads_armed_);
  uint8_t* buf = r.buffer.data();
  const uint64_t word = r.read_sentinel;
  for_each_sentinel(r.transfer_bytes, [&](uint32_t off) { std::memcpy(buf + off, &word, 8); });
}

int64_t CommandProcessor::read_data_missing(const Request& r) const {
  const uint8_t* buf = r.buffer.data();
  int64_t first = -1;
  for_each_sentinel(r.transfer_bytes, [&](uint32_t off) {
    uint64_t word;
    std::memcpy(&word, buf + off, 8);
    if (first < 0 && word == r.read_sentinel) first = off;
  });
  return first;
}

NextStep CommandProcessor::data_arrived(Request& r) {
  if (const int64_t at = read_data_missing(r); at >= 0) [[unlikely]] {
    // Nothing of the command is executed: the buffer holds whatever was there before.
    ++reads_without_data_;
    if (r.pending == PendingOp::kConnect && state_ == ConnectState::kInProgress) {
      state_ = ConnectState::kNone;
    }
    r.pending = PendingOp::kNone;
    r.transfer_bytes = 0;
    uint64_t suppressed = 0;
    if (refusal_log_limiter().allow("read without data", std::chrono::steady_clock::now(),
                                    &suppressed)) {
      NVMF_LOG(WARN, "target") << link_.describe() << ": opcode 0x" << std::hex
                               << unsigned{r.sqe->opcode} << std::dec << " cid " << r.sqe->cid
                               << ": the RDMA READ of its data completed successfully, but byte "
                               << at << " still holds the sentinel stamped before the READ: the "
                               << "data did not arrive (the RDMA provider reported a failed READ "
                               << "as done); not executed, Data Transfer Error, disconnecting"
                               << suppressed_note(suppressed);
    }
    link_.request_disconnect("an RDMA READ completed without its data");
    return complete(r, generic_status(proto::kScDataTransferError, /*dnr=*/false));
  }
  if ((qid_ != 0 && r.pending != PendingOp::kConnect) || r.pending == PendingOp::kAuthSend) {
    return finish_pending(r, r.buffer.data());  // no shared state: no control lock
  }
  ControlLock lock(control_mutex());  // Connect data, or an admin command's
  return finish_pending(r, r.buffer.data());
}

NextStep CommandProcessor::finish_pending(Request& r, const uint8_t* contiguous) {
  PendingOp op = r.pending;
  r.pending = PendingOp::kNone;
  switch (op) {
    case PendingOp::kConnect: {
      if (state_ == ConnectState::kInProgress) state_ = ConnectState::kNone;
      proto::ConnectData data;
      copy_payload(r, contiguous, {reinterpret_cast<uint8_t*>(&data), sizeof(data)});
      return connect(r, data);
    }
    case PendingOp::kWrite:
      return write_data(r, contiguous);
    case PendingOp::kDsmRanges:
      return dsm_ranges_arrived(r, contiguous);
    case PendingOp::kAuthSend:
      return auth_send_data(r, contiguous);
    case PendingOp::kNone:
      break;
  }
  return complete(r, generic_status(proto::kScInternalError));
}

void CommandProcessor::copy_payload(const Request& r, const uint8_t* contiguous,
                                    std::span<uint8_t> dst) const {
  if (contiguous != nullptr) {
    std::memcpy(dst.data(), contiguous, dst.size());
  } else {
    r.in_capsule.copy_out(r.sgl.addr, dst);
  }
}

// -------------------------------------------------------------------------------- Connect --

NextStep CommandProcessor::connect(Request& r, const proto::ConnectData& data) {
  const auto& c = *reinterpret_cast<const proto::ConnectCommand*>(r.sqe);
  if (c.recfmt != proto::kRecfmt0) {
    return connect_failed(
        r, make_status(proto::kSctCommandSpecific, proto::kScIncompatibleFormat, true), 0,
        "RECFMT " + std::to_string(c.recfmt) + " is not 0");
  }
  if (c.qid != qid_) {  // the CM request sized this queue for another qid
    return connect_failed(r, kConnectInvalidParameters,
                          proto::connect_invalid_param_in_sqe(offsetof(proto::ConnectCommand, qid)),
                          "QID " + std::to_string(c.qid) +
                              " on a queue the CM request set up for QID " + std::to_string(qid_));
  }
  if (c.sqsize == 0 || c.sqsize + 1u > queue_size_) {  // more than the receives we posted
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_sqe(offsetof(proto::ConnectCommand, sqsize)),
        "SQSIZE " + std::to_string(c.sqsize) + " is 0 or not below the queue size " +
            std::to_string(queue_size_));
  }
  // SUBNQN and HOSTNQN are NUL-terminated strings of at most 223 bytes (Base 2.0 §6.3, §4.5):
  // a field with no NUL in its 256 bytes names nothing.
  if (strnlen(data.subnqn, sizeof(data.subnqn)) > proto::kNqnMaxLength) {
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, subnqn)),
        "SUBNQN longer than 223 bytes or not NUL terminated");
  }
  if (strnlen(data.hostnqn, sizeof(data.hostnqn)) > proto::kNqnMaxLength) {
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, hostnqn)),
        "HOSTNQN longer than 223 bytes or not NUL terminated");
  }
  // nvmet_find_get_subsys: the port's discovery subsystem or a linked one, by SUBNQN. Nothing
  // about this queue changes until every check has passed (bind()).
  std::string subnqn = nqn_field(data.subnqn);
  Subsystem* chosen = nullptr;
  if (Port* p = port(); p != nullptr) {
    chosen = p->find(subnqn);
  } else if (subnqn == subsystem_->config().nqn) {
    chosen = subsystem_;
  }
  if (chosen == nullptr) {
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, subnqn)),
        "no subsystem '" + subnqn + "' on this port");
  }
  if (data.hostnqn[0] == '\0') {
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, hostnqn)),
        "empty HOSTNQN");
  }
  NextStep step = qid_ == 0 ? connect_admin(r, *chosen, c, data) : connect_io(r, *chosen, c, data);
  // nvmet_install_queue: SQ flow control disabled from this Connect's response on.
  if (r.cqe.status == kStatusSuccess && (c.cattr & proto::kCattrDisableSqFlowControl) != 0) {
    sqhd_disabled_ = true;
    r.cqe.sqhd = proto::kSqhdDisabled;
  }
  return step;
}

NextStep CommandProcessor::connect_admin(Request& r, Subsystem& chosen,
                                         const proto::ConnectCommand& c,
                                         const proto::ConnectData& data) {
  if (data.cntlid != proto::kAdminQueueCntlid) {
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, cntlid)),
        "admin Connect with CNTLID " + std::to_string(data.cntlid) + ", not FFFFh");
  }
  const std::string hostnqn = nqn_field(data.hostnqn);
  // nvmet_alloc_ctrl: a host not allowed on the subsystem gets Connect Invalid Host (SCT 1h,
  // SC 84h) with DNR, IATTR/IPO pointing at HOSTNQN in the Connect data. Base 2.0 §6.3.
  if (!chosen.host_allowed(hostnqn)) {
    return connect_failed(
        r, make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidHost, true),
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, hostnqn)),
        "host '" + hostnqn + "' not allowed on " + chosen.config().nqn);
  }
  // Controller limits, on the whole port and per host (its NQN from its peer address), NVM
  // subsystems and discovery counted apart (Port::controller_count): Connect Controller Busy
  // without DNR (the Linux host reports "controller is busy"; a retry may find room once one is
  // freed).
  const uint16_t busy = make_status(proto::kSctCommandSpecific, proto::kScControllerBusy, false);
  Port* port = chosen.port();
  const bool discovery = chosen.config().discovery;
  const char* kind = discovery ? " discovery" : "";
  const std::string peer = link_.peer_host();
  size_t total = port != nullptr ? port->controller_count(discovery) : chosen.controller_count();
  if (total >= chosen.config().max_controllers) {
    return connect_failed(r, busy, 0,
                          "the port has " + std::to_string(total) + kind +
                              " controllers, the limit (--max-controllers " +
                              std::to_string(chosen.config().max_controllers) + ")");
  }
  size_t of_host = port != nullptr ? port->controller_count_for(hostnqn, peer, discovery)
                                   : chosen.controller_count_for(hostnqn, peer);
  if (of_host >= chosen.config().max_controllers_per_host) {
    return connect_failed(r, busy, 0,
                          "host '" + hostnqn + "' at " + (peer.empty() ? "?" : peer) + " has " +
                              std::to_string(of_host) + kind +
                              " controllers, the limit (--max-controllers-per-host " +
                              std::to_string(chosen.config().max_controllers_per_host) + ")");
  }
  if (!link_.connect_accepted()) {
    return connect_failed(r, generic_status(proto::kScInternalError, false), 0,
                          "queue resources could not be set up");
  }
  std::array<uint8_t, 16> hostid;
  std::memcpy(hostid.data(), data.hostid, hostid.size());
  uint32_t kato = c.kato;
  if (chosen.config().discovery && kato == 0) kato = kDiscoveryDefaultKatoMs;
  Controller* ctrl = chosen.create_controller(hostnqn, hostid, kato, link_.peer_host());
  if (ctrl == nullptr) {
    return connect_failed(r,
                          make_status(proto::kSctCommandSpecific, proto::kScControllerBusy, true),
                          0, "no free CNTLID");
  }
  bind(chosen, ctrl, c.sqsize);
  r.cqe.dw0 = ctrl->cntlid();
  require_authentication(r, chosen, hostnqn);
  if (uint64_t suppressed = 0; connection_log_limiter().allow(
          "admin queue connected", std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(INFO, "target") << link_.describe() << ": admin queue connected, controller "
                             << ctrl->cntlid() << suppressed_note(suppressed);
  }
  return complete(r, kStatusSuccess);
}

NextStep CommandProcessor::connect_io(Request& r, Subsystem& chosen, const proto::ConnectCommand& c,
                                      const proto::ConnectData& data) {
  Controller* ctrl = chosen.find_controller(data.cntlid);
  if (ctrl == nullptr) {
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, cntlid)),
        "I/O Connect for CNTLID " + std::to_string(data.cntlid) + ", which is not live");
  }
  if (nqn_field(data.hostnqn) != ctrl->hostnqn()) {
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, hostnqn)),
        "HOSTNQN differs from the admin queue's");
  }
  // I/O queues belong to an enabled controller: an I/O Connect before CC.EN = 1 and CSTS.RDY = 1,
  // or after the host cleared CC.EN, is Connect Invalid Parameters (DNR, IPO at QID), as SPDK's
  // target answers it (Base 2.0 §3.5.1: the host enables the controller, then creates I/O
  // queues).
  if (!ctrl->enabled()) {
    return connect_failed(r, kConnectInvalidParameters,
                          proto::connect_invalid_param_in_sqe(offsetof(proto::ConnectCommand, qid)),
                          "I/O Connect for controller " + std::to_string(ctrl->cntlid()) +
                              ", which is not enabled (CC.EN 0)");
  }
  // Base 2.0 §6.3: a QID the controller did not grant (Set Features Number of Queues, or every
  // queue when the host never sent it) is Connect Invalid Parameters, DNR, IATTR 0 IPO at QID;
  // the status and IPO nvmet gives a QID above the subsystem's queue count.
  if (c.qid > ctrl->io_qid_limit()) {
    return connect_failed(r, kConnectInvalidParameters,
                          proto::connect_invalid_param_in_sqe(offsetof(proto::ConnectCommand, qid)),
                          "QID " + std::to_string(c.qid) + " above the " +
                              std::to_string(ctrl->io_qid_limit()) + " I/O queues granted");
  }
  // nvmet_install_queue: a qid already live on the controller is refused with Command Sequence
  // Error (DNR) and the live queue is left alone. A host that reconnects does so with a new
  // admin queue, hence a new controller; replacing the live queue would let anyone who knows a
  // host NQN and its (small, lowest-first) CNTLID tear that host's I/O queues down.
  if (ctrl->queue(c.qid) != nullptr) {
    return connect_failed(r, kCommandSequenceError,
                          proto::connect_invalid_param_in_sqe(offsetof(proto::ConnectCommand, qid)),
                          "QID " + std::to_string(c.qid) + " is already live on controller " +
                              std::to_string(ctrl->cntlid()));
  }
  // Base 2.0 §6.3: the host identifier of every queue is the admin queue's.
  if (std::memcmp(data.hostid, ctrl->hostid().data(), sizeof(data.hostid)) != 0) {
    return connect_failed(
        r, kConnectInvalidParameters,
        proto::connect_invalid_param_in_data(offsetof(proto::ConnectData, hostid)),
        "HOSTID differs from the admin queue's");
  }
  if (!link_.connect_accepted()) {
    return connect_failed(r, generic_status(proto::kScInternalError, false), 0,
                          "queue resources could not be set up");
  }
  bind(chosen, ctrl, c.sqsize);
  r.cqe.dw0 = ctrl->cntlid();
  require_authentication(r, chosen, ctrl->hostnqn());
  if (uint64_t suppressed = 0; connection_log_limiter().allow(
          "I/O queue connected", std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(INFO, "target") << link_.describe() << ": I/O queue connected to controller "
                             << ctrl->cntlid() << ", " << queue_size_ << " entries"
                             << suppressed_note(suppressed);
  }
  return complete(r, kStatusSuccess);
}

NextStep CommandProcessor::connect_failed(Request& r, uint16_t status, uint32_t dw0,
                                          std::string_view why) {
  r.cqe.dw0 = dw0;
  // At most one line a second per status: a host must not be able to flood the log.
  char key[32];
  std::snprintf(key, sizeof(key), "connect refused 0x%04x", status);
  uint64_t suppressed = 0;
  if (refusal_log_limiter().allow(key, std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(INFO, "target") << link_.describe() << ": Connect refused: " << status_name(status)
                             << " (" << why << ")" << suppressed_note(suppressed);
  }
  return complete(r, status);
}

// ------------------------------------------------------------------------- Authentication --

void CommandProcessor::require_authentication(Request& r, const Subsystem& chosen,
                                              const std::string& hostnqn) {
  const HostKey* key = chosen.host_key(hostnqn);
  if (key == nullptr) return;
  auth_ = std::make_unique<AuthResponder>(*key, hostnqn, chosen.config().nqn);
  unauthenticated_ = true;
  r.cqe.dw0 |= proto::kConnectRespAuthreqAtr;
}

NextStep CommandProcessor::auth_send(Request& r) {
  const auto& c = *reinterpret_cast<const proto::AuthCommand*>(r.sqe);
  // nvmet_execute_auth_send: only DH-HMAC-CHAP's SECP/SPSP, a message of 1..max bytes, and only
  // on a queue whose host has a key.
  if (c.secp != proto::kAuthSecp || c.spsp0 != proto::kAuthSpsp0 || c.spsp1 != proto::kAuthSpsp1 ||
      c.length == 0 || c.length > kAuthMaxSendBytes) {
    return complete(r, kInvalidField);
  }
  if (!auth_) return complete(r, kCommandSequenceError);
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  return receive_data(r, c.length, PendingOp::kAuthSend);
}

NextStep CommandProcessor::auth_send_data(Request& r, const uint8_t* contiguous) {
  const uint32_t length = r.transfer_bytes;  // TL, checked against kAuthMaxSendBytes
  std::array<uint8_t, kAuthMaxSendBytes> message;
  copy_payload(r, contiguous, {message.data(), length});
  if (length >= 2 && message[0] == proto::kAuthTypeCommon &&
      message[1] == proto::kAuthIdNegotiate) {
    // The key as configured now (a configuration loaded since the Connect may have changed or
    // removed it): looked up under the control lock, the transaction's cryptography outside it.
    std::optional<HostKey> key;
    {
      ControlLock lock(control_mutex());
      if (const HostKey* k = subsystem_->host_key(auth_->hostnqn()); k != nullptr) key = *k;
    }
    auth_->set_key(std::move(key));
  }
  auth_->send({message.data(), length});
  auth_settled();
  return complete(r, kStatusSuccess);
}

NextStep CommandProcessor::auth_receive(Request& r) {
  const auto& c = *reinterpret_cast<const proto::AuthCommand*>(r.sqe);
  if (c.secp != proto::kAuthSecp || c.spsp0 != proto::kAuthSpsp0 || c.spsp1 != proto::kAuthSpsp1 ||
      c.length == 0) {
    return complete(r, kInvalidField);
  }
  if (!auth_) return complete(r, kCommandSequenceError);
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, c.length); st != kStatusSuccess) {
    return complete(r, st);
  }
  const uint32_t al = std::min<uint32_t>(c.length, static_cast<uint32_t>(r.buffer.size()));
  const uint32_t n = auth_->receive(al, r.buffer);
  auth_settled();
  return respond_with_data(r, n);
}

void CommandProcessor::auth_settled() {
  unauthenticated_ = !auth_->authenticated();
  if (auth_failures_seen_ == auth_->failures()) return;
  auth_failures_seen_ = auth_->failures();
  // One line per host a window: a host retrying with a wrong key must not flood the log. The
  // reason names the step, never a key.
  uint64_t suppressed = 0;
  const std::string& host = auth_->hostnqn();
  if (refusal_log_limiter().allow("authentication failed " + host, std::chrono::steady_clock::now(),
                                  &suppressed)) {
    NVMF_LOG(WARN, "target") << link_.describe() << ": host '" << host
                             << "': DH-HMAC-CHAP authentication failed: " << auth_->failure_reason()
                             << suppressed_note(suppressed);
  }
}

// ----------------------------------------------------------------------------- Properties --

NextStep CommandProcessor::property_get(Request& r) {
  const auto& p = *reinterpret_cast<const proto::PropertyGetCommand*>(r.sqe);
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
  uint64_t value = 0;
  uint16_t st = controller_->registers().property_get(p.attrib, p.ofst, &value);
  r.cqe.dw0 = static_cast<uint32_t>(value);
  r.cqe.dw1 = static_cast<uint32_t>(value >> 32);
  return complete(r, st);
}

NextStep CommandProcessor::property_set(Request& r) {
  const auto& p = *reinterpret_cast<const proto::PropertySetCommand*>(r.sqe);
  if (uint16_t st = decode_sgl(r); st != kStatusSuccess) return complete(r, st);
  if (uint16_t st = check_data_length(r.sgl, 0); st != kStatusSuccess) return complete(r, st);
  CcTransition t = CcTransition::kNone;
  uint16_t st = controller_->registers().property_set(p.attrib, p.ofst, p.value, &t);
  if (t == CcTransition::kDisabled || t == CcTransition::kShutdown) {
    // A controller reset or shutdown ends the outstanding Async Event Requests: completed with
    // Command Abort Requested (as SPDK's nvmf target does on CC.EN 1 -> 0), the count back to 0.
    complete_held_aers(generic_status(proto::kScAbortRequested, false));
  }
  if (t != CcTransition::kNone) {
    // A host may toggle CC.EN at will: rate-limited like the other per-connection lines.
    if (uint64_t suppressed = 0; connection_log_limiter().allow(
            "cc transition", std::chrono::steady_clock::now(), &suppressed)) {
      NVMF_LOG(INFO, "target") << "controller " << controller_->cntlid() << ": "
                               << cc_transition_name(t) << suppressed_note(suppressed);
    }
    subsystem_->registry().set_controller_ready(controller_->cntlid(),
                                                controller_->registers().ready());
  }
  if (t == CcTransition::kShutdown) {  // flush every namespace, then SHST complete
    r.step = 0;
    return shutdown_next(r);
  }
  return complete(r, st);
}

void CommandProcessor::deliver_events() {
  ControlLock lock(control_mutex());
  if (controller_ == nullptr || freed_.load(std::memory_order_acquire)) return;
  while (!held_aers_.empty()) {
    const std::optional<uint32_t> event = controller_->take_event();
    if (!event) return;
    Request* held = held_aers_.front();
    held_aers_.erase(held_aers_.begin());
    held->cqe.status = kStatusSuccess;
    held->cqe.dw0 = *event;
    held->cqe.sqhd = sqhd_disabled_ ? proto::kSqhdDisabled : sq_head_;
    log_event_sent(*event);
    link_.respond_held(*held);
  }
}

void CommandProcessor::log_event_sent(uint32_t dw0) const {
  if (uint64_t suppressed = 0; connection_log_limiter().allow(
          "async event", std::chrono::steady_clock::now(), &suppressed)) {
    char text[11];
    std::snprintf(text, sizeof(text), "0x%08x", dw0);
    NVMF_LOG(INFO, "target") << "controller " << controller_->cntlid() << ": asynchronous event "
                             << text << " (log page " << ((dw0 >> 16) & 0xFF) << ") sent"
                             << suppressed_note(suppressed);
  }
}

void CommandProcessor::request_event_delivery() {
  if (link_.on_owner_thread()) {
    deliver_events();
  } else {
    link_.wake_for_events();
  }
}

void CommandProcessor::complete_held_aers(uint16_t status) {
  for (Request* held : held_aers_) {
    held->cqe.status = status;
    held->cqe.sqhd = sqhd_disabled_ ? proto::kSqhdDisabled : sq_head_;
    counters_.errors.add();
    statuses_.add(status);
    link_.respond_held(*held);
  }
  held_aers_.clear();
}

}  // namespace nvmf::target
