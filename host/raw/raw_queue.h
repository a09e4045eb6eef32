// SPDX-License-Identifier: BSD-3-Clause
// RawQueue: one RDMA connection to a target that speaks raw capsules. Unlike host::Queue it
// sends whatever the caller built (any CM private data, any SQE, any number of bytes after it,
// more capsules than the target posted receives) and reports whatever comes back (CQEs, CM
// rejects, the connection going away). It is the layer of `nvmf-host conform` and of the
// hostile-host end-to-end tests; nothing in the normal host path uses it.
//
// Memory: send slots of kSendSlotBytes each (kSlots of them), kSlots receives of one 16-byte
// CQE, and a kDataBytes data buffer registered for remote read and write, which keyed SGLs
// (id 40h) point into (RawQueueParams may make each smaller). All allocated in create(); not a
// fast path.
#ifndef NVMF_HOST_RAW_RAW_QUEUE_H_
#define NVMF_HOST_RAW_RAW_QUEUE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/verbs/verbs.h"
#include "host/commands.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"

namespace nvmf::host {

// Where a RawQueue connects and how big it is.
struct RawQueueParams {
  std::string traddr;
  std::string trsvcid = "4420";
  std::string host_traddr;  // empty: any local address
  int timeout_ms = 2000;    // address/route resolution and CM answer
  // Sizes (defaults: RawQueue::kSlots, kSendSlotBytes, kDataBytes); smaller ones let one
  // process hold hundreds of queues (the scale bench). data_bytes is at least 8192.
  uint32_t slots = 0;
  size_t send_slot_bytes = 0;
  size_t data_bytes = 0;
  // False: each CQE receive is posted once and never again, as a host that stops giving the
  // target room for its responses (the target's SENDs then meet RNR NAKs).
  bool repost_receives = true;
};

// What the CM said to rdma_connect.
struct CmOutcome {
  bool established = false;
  bool rejected = false;
  // A reject carrying the 4-byte NVMe-oF RDMA_CM_REJECT private data (RECFMT, STS).
  bool reject_has_nvme_data = false;
  proto::CmRejectPrivateData reject{};
  uint16_t crqsize = 0;  // from the accept private data, when established
  std::string event;     // the CM event's name ("RDMA_CM_EVENT_ESTABLISHED", ...)
};

// RDMA 1.0 §3.3 CM REQUEST private data: RECFMT 0, `qid`, HRQSIZE `hrqsize`, HSQSIZE `hsqsize`
// (0-based), exactly as given (no bound checked: the caller may be testing the target's).
proto::CmRequestPrivateData cm_request(uint16_t qid, uint16_t hrqsize, uint16_t hsqsize);
// The 32 bytes of `p` as connect() takes them.
inline std::span<const uint8_t> cm_bytes(const proto::CmRequestPrivateData& p) {
  return {reinterpret_cast<const uint8_t*>(&p), sizeof(p)};
}

// A Fabrics Connect (Base 2.0 §6.3), any field of it wrong on purpose.
struct ConnectSpec {
  uint16_t qid = 0;
  uint16_t sqsize = 31;  // 0-based
  uint16_t cntlid = 0xFFFF;
  uint32_t kato_ms = 0;
  uint16_t recfmt = 0;
  uint32_t data_length = 1024;  // keyed SGL length (bytes)
  HostId hostid{};
  std::string subnqn, hostnqn;       // cut at 256 bytes
  bool subnqn_unterminated = false;  // fill all 256 bytes, no NUL
  bool hostnqn_unterminated = false;
};
// The 1024 bytes of Connect data `spec` describes (Base 2.0 §6.3, Figure "Connect Data").
proto::ConnectData connect_data_for(const ConnectSpec& spec);
// The Connect SQE `spec` describes (CID 0, SGL1 zero: the caller sets both).
proto::Sqe connect_sqe_for(const ConnectSpec& spec);

// What a RawQueue work completion is, from its wr_id (common/verbs/work_request_id.h, the one
// encoding of the host's and the target's queues): the SEND of send slot `index`, the receive
// of CQE buffer `index`, or an id this queue never posted (any other kind, or an index at or
// above `slots`), which fails the queue instead of indexing past its slots.
enum class RawCompletion { kSend, kRecv, kForeign };
RawCompletion classify_raw_completion(uint64_t wr_id, uint32_t slots);

// A host queue with no protocol of its own, for the conformance checker and the hostile-host
// tests: it sends exactly the CM private data, capsules and Connects it is given (malformed
// ones included) and returns what came back, judging nothing. Not thread-safe; setup path only.
class RawQueue {
 public:
  static constexpr uint32_t kSlots = 64;                   // send slots and CQE receives
  static constexpr size_t kSendSlotBytes = 64 + 32768;     // one SQE + up to 32 KiB after it
  static constexpr size_t kDataBytes = (1u << 20) + 8192;  // keyed SGL target memory

  // Resolves address and route, creates PD, CQ, QP (kSlots send and receive WRs) and the MRs,
  // and posts kSlots receives. Does not connect. Errors name the failing step.
  static Result<std::unique_ptr<RawQueue>> create(const RawQueueParams& params);
  ~RawQueue();
  RawQueue(const RawQueue&) = delete;
  RawQueue& operator=(const RawQueue&) = delete;

  // rdma_connect with `private_data` exactly as given (at most 255 bytes on the wire; the CM
  // may pad it) and the given RDMA READ resources (`responder_resources` < 0: the device's
  // max_qp_rd_atom), retry count 7 and RNR retry 7 (forever: capsules beyond the target's
  // posted receives wait instead of failing). Then waits for the answer. A reject or an
  // unreachable peer is an outcome, not an error; errors are local failures and kTimeout.
  Result<CmOutcome> connect(std::span<const uint8_t> private_data, int responder_resources = -1,
                            uint8_t initiator_depth = 0);
  // connect() with RDMA 1.0 §3.3 REQUEST private data: RECFMT 0, `qid`, HRQSIZE `hrqsize`,
  // HSQSIZE `hsqsize` (0-based).
  Result<CmOutcome> connect_queue(uint16_t qid, uint16_t hrqsize, uint16_t hsqsize);
  // connect_queue(qid, hsqsize + 1, hsqsize); kRejected (naming the CM event, and the reject's
  // STS when it carried one) unless the target accepted.
  Status open(uint16_t qid, uint16_t hsqsize);

  // Posts one capsule: `sqe` followed by `data` in one SEND from a free send slot. kIo if the
  // queue failed or ibv_post_send refused; kResourceExhausted when every slot is in flight.
  Status send(const proto::Sqe& sqe, std::span<const uint8_t> data = {});
  // Posts the first `bytes` of a capsule whose SQE is `sqe` and whose remaining bytes are
  // zero: for capsules shorter than an SQE (bytes < 64) or longer than anything sane.
  Status send_truncated(const proto::Sqe& sqe, size_t bytes);
  // The next CQE, waiting up to `timeout_ms`. kTimeout when none came, kUnavailable when the
  // target disconnected, kIo on a work completion error (the QP is then unusable).
  Result<proto::Cqe> next_cqe(int timeout_ms);
  // send() then next_cqe(); the CID is set to a running counter and checked in the answer
  // (a CQE for another CID is kIo "CQE for CID n, expected m").
  Result<proto::Cqe> run(proto::Sqe sqe, std::span<const uint8_t> data, int timeout_ms);
  // Posts the Connect `spec` with CID `cid`: its data in-capsule after the SQE (SGL id 01h,
  // offset 0, 1024 bytes) or keyed (the target RDMA READs spec.data_length bytes from
  // data() + connect_data_offset()). Does not wait for the answer.
  Status send_connect(const ConnectSpec& spec, bool in_capsule, uint16_t cid);
  // Like run() for the Connect `spec`.
  Result<proto::Cqe> run_connect(const ConnectSpec& spec, bool in_capsule, int timeout_ms);
  // Byte offset in data() of the keyed Connect data send_connect() uses (the last 4 KiB).
  size_t connect_data_offset() const { return data_.size() - 4096; }

  // True once the CM reports the connection gone (DISCONNECTED, or a work completion error
  // after which the target tears down), within `timeout_ms`.
  bool wait_disconnected(int timeout_ms);
  bool disconnected() const { return disconnected_; }
  // rdma_disconnect (idempotent).
  void disconnect();

  // The keyed SGL buffer: bytes [0, data_bytes()) at remote address data_addr(), key rkey().
  size_t data_bytes() const { return data_.size(); }
  uint8_t* data() { return data_.data(); }
  uint64_t data_addr(size_t offset = 0) const {
    return reinterpret_cast<uint64_t>(data_.data()) + offset;
  }
  uint32_t rkey() const { return data_mr_->rkey(); }
  // Sets `sqe`'s SGL1 to a Keyed SGL Data Block (id 40h) of `length` bytes at data()+offset.
  void set_keyed(proto::Sqe& sqe, size_t offset, uint32_t length) const;

 private:
  RawQueue() = default;
  Status post_recv(uint32_t index);
  Status post_send_slot(uint32_t slot, size_t bytes);
  // A free send slot's index after one poll pass; kResourceExhausted when all are in flight.
  Result<uint32_t> free_slot();
  // One ibv_poll_cq pass: send completions free slots, receive completions queue CQEs.
  Status poll_once();
  void check_cm();

  int timeout_ms_ = 2000;
  uint32_t slots_ = kSlots;
  bool repost_receives_ = true;
  size_t send_slot_bytes_ = kSendSlotBytes;
  uint16_t next_cid_ = 1;
  uint32_t next_slot_ = 0;
  std::vector<bool> slot_busy_;
  std::vector<uint8_t> send_buf_;
  std::vector<proto::Cqe> cqes_;
  std::vector<uint8_t> data_;
  std::vector<proto::Cqe> pending_;  // CQEs received, not yet returned
  Status failed_;
  bool disconnected_ = false;
  bool connected_ = false;
  int max_rd_atom_ = 1;

  std::optional<verbs::EventChannel> channel_;
  std::optional<verbs::CmId> id_;
  std::optional<verbs::ProtectionDomain> pd_;
  std::optional<verbs::CompletionChannel> comp_channel_;
  std::optional<verbs::CompletionQueue> cq_;
  std::optional<verbs::MemoryRegion> send_mr_, cqe_mr_, data_mr_;
  std::optional<verbs::QueuePair> qp_;
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_RAW_RAW_QUEUE_H_
