// SPDX-License-Identifier: BSD-3-Clause
// RdmaQueue: one NVMe-oF queue on an RDMA RC connection: its QP, its place on a shared CQ,
// registered buffers, receive and send work requests, and the CommandProcessor that executes
// its commands.
#ifndef NVMF_TARGET_RDMA_QUEUE_H_
#define NVMF_TARGET_RDMA_QUEUE_H_

#include <infiniband/verbs.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/verbs/cm_id.h"
#include "common/verbs/queue_pair.h"
#include "common/verbs/registered_buffer.h"
#include "target/command_processor.h"
#include "target/counters.h"
#include "target/credits.h"
#include "target/device_context.h"
#include "target/poll_group.h"
#include "target/queue_link.h"
#include "target/request_pipeline.h"
#include "target/stall_report.h"
#include "target/stall_watch.h"
#include "target/subsystem.h"

namespace nvmf::target {

// Sizes of one queue, decided from the CM request and the target settings.
class Port;

struct RdmaQueueParams {
  uint16_t qid = 0;
  uint32_t queue_size = 0;        // hsqsize + 1: receives posted and command slots
  uint16_t hrqsize = 0;           // host receive queue entries
  uint32_t in_capsule_bytes = 0;  // advertised in-capsule size; receives get whole pages
  uint32_t page_size = 4096;
  uint32_t max_transfer_bytes = 0;  // data buffer per slot (MDTS)
  // > 0: once connected, commands take their data buffer from the device's shared pool of this
  // many chunks of max_transfer_bytes (target/buffer_pool.h) instead of one per slot.
  uint32_t shared_buffers = 0;
  uint32_t requested_max_inline_data = 16;
  // The QP's local ACK timeout set before rdma_accept (TargetOptions::ack_timeout; 0: rdma_cm's).
  uint8_t ack_timeout = 0;
  // Command slots beyond queue_size for held Async Event Requests (admin queue: AERL + 1), so
  // that AERs never take the slots the host's other commands need.
  uint32_t held_slots = 0;
  // Milliseconds with commands outstanding and no completion before check_stall() logs a WARN
  // (TargetOptions::stall_warn_ms; 0: never).
  uint32_t stall_warn_ms = 1000;
  std::string peer;       // "addr:port"
  std::string peer_host;  // "addr"
  // The port whose listener took the CM request: its subsystems are what Connect may name, its
  // in-capsule size is what Identify reports. Null: the subsystem's own port (unit tests).
  Port* port = nullptr;
  // The device's shared receive queue (target/shared_receive_queue.h), or null: the queue posts
  // its own receives. Its in-capsule area must be at least in_capsule_bytes.
  SharedReceiveQueue* srq = nullptr;
  // The poll group that owns the queue (target/event_loop.h): its eventfd, written when another
  // group asks this queue to disconnect (-1: none); its IoEngine for file-backed namespaces
  // (null: the namespace's); the gauges its device's shared buffer pool reports to (null: the
  // registry's first).
  int wake_fd = -1;
  IoEngine* engine = nullptr;
  SharedBufferGauges* buffer_gauges = nullptr;
  uint32_t group = 0;  // that poll group's index (QueueStats::group)
};

// Buffers and command slots (made in two steps, never per command):
//  - at creation, before any Connect: every receive's 64-byte SQE slot, every slot's 16-byte CQE
//    buffer, two command slots, and for receive 0 only its in-capsule pages, plus one page those
//    slots use as their data buffer for the Connect data (the processor lets one Connect at a
//    time move data).
//    Only receive 0 is posted: a Connect is all a queue may receive before it has one. This is
//    what a connection that never sends a Connect costs (tens of KiB; no queue_size x MDTS);
//  - once a Connect passed its checks (connect_accepted(), before its response): the in-capsule
//    pages of receives 1..queue_size-1 (posted then), the other command slots, and each slot's
//    data buffer of max_transfer_bytes (RDMA READ target / WRITE source); with shared buffers
//    (params.shared_buffers > 0) no data buffer: a command whose SGL1 describes data takes one
//    of the device's pool (made by the first such queue) and gives it back when its response
//    is ready if that response has no RDMA WRITE, else when its SEND completes (the WRITE read
//    the chunk), or waits for one (waiting_for_buffer).
// Receives use the layout nvmet-rdma uses: the SQE (one SGE) + in_capsule_bytes / page_size
// pages (one SGE each).
// With a shared receive queue (params.srq) the queue has no receives and no SQE or in-capsule
// buffers of its own: its QP is created on the SRQ, a capsule arrives in one of the SRQ's
// receives (completed on its shared CQ; wc.qp_num names this QP) and is read in place; the
// receive goes back to the SRQ when it would have been reposted here (before the response
// SEND), or when the queue is torn down (QP moved to error, shared CQs drained, then every
// receive it still holds, ReceiveTable). Either way a queue holds at most as many capsules as it
// would have posted receives, queue_size, once its Connect was accepted, and 2 before (one Connect
// and one more capsule, which gets its answer, as a second capsule waiting in RNR retry would
// without an SRQ). A host that sends more (it ignored sqhd and hsqsize) has its queue torn down
// (its QP is moved to the error state at once, so it takes no more SRQ receives); per-queue
// receives would have RNR-NAKed it. A command keeps its receive until its response: the receive is
// reposted just before the response SEND (the host may send the next command as soon as it sees the
// CQE). A slot is freed when its SEND completes; a receive that finds no free slot waits in a ring.
// Each slot's Request moves through the states of target/request_state.h in the queue's
// RequestPipeline (target/request_pipeline.h), which this class feeds with its work completions
// and whose READs, WRITEs, SENDs and receives it posts. Two resources are counted, and a
// request short of one waits in its state's FIFO, in arrival order, until a completion gives
// one back: RDMA READ credits (the initiator depth given to rdma_accept: at most that many
// READs outstanding; state waiting_for_read_credit) and send-queue entries (the QP's
// max_send_wr; a READ takes one, a response one, or two with its RDMA WRITE; a response waits
// in ready_to_complete).
// Event-loop thread only.
class RdmaQueue : public QueueLink, public PipelineTransport {
 public:
  // Allocates and registers the buffers, joins one of the device's shared CQs (dev.cqs; a new
  // one, on dev.channel, when none has the room this queue may need: target/shared_cq.h), creates
  // the QP on it through the QueuePair wrapper (inline-send fallback included), enters the QP
  // number in dev.qps, and posts the first receive. `id` is the adopted CONNECT_REQUEST id.
  // Errors name the failing verb; kResourceExhausted when the device's max_cqe cannot hold the
  // SRQ's receives plus this queue's work requests (lower --max-srq-depth).
  // On error `id` is left with the caller (no QP on it), so it can still be rejected.
  static Result<std::unique_ptr<RdmaQueue>> create(verbs::CmId& id, DeviceContext& dev,
                                                   const RdmaQueueParams& params,
                                                   Subsystem& subsystem, StatusCounters& statuses);
  // Destroys the processor first (detaching from, or freeing, the controller), then moves the
  // QP to error, drains the shared CQs (dev.drain: every completion of this QP is handed here
  // and dropped, SRQ receives go back), destroys the QP, drains again, leaves dev.qps and gives
  // its CQ entries back; then the buffers (each MR before its memory) and the CM id.
  ~RdmaQueue() override;

  // rdma_accept with the NVMe-oF accept private data (crqsize = queue_size); on success the
  // queue appears in stats(). `initiator_depth` is also the queue's RDMA READ depth.
  Status accept(uint8_t responder_resources, uint8_t initiator_depth);
  // Fast path, from the event loop, which polls the shared CQ and finds the queue by
  // wc.qp_num: one work completion of this queue's QP. The RDMA WRITEs and response SENDs it
  // leads to are chained for flush(); RDMA READs go out at once, one post each (see post_read).
  void on_completion(const ibv_wc& wc) {
    ++events_;
    handle(wc);
  }
  // Posts what was chained since the last flush() with one ibv_post_send (one doorbell per
  // poll batch: on rxe each ibv_post_send is a write() to uverbs). A queue that chains work
  // puts itself on dev.touched; the event loop flushes those after each batch of completions.
  void flush() {
    touched_ = false;
    flush_sends();
  }
  // The shared CQ this queue's QP completes on.
  SharedCq* shared_cq() const { return cq_; }
  // rdma_disconnect, once; errors are ignored (the peer may be gone already).
  void disconnect();

  // QueueLink. request_disconnect() from another thread only records the reason and wakes the
  // owning group (wake_fd), whose take_remote_disconnect() carries it out.
  void request_disconnect(std::string_view reason) override;
  bool on_owner_thread() const override { return std::this_thread::get_id() == owner_; }
  // Owner thread: carries out a request_disconnect() made from another thread, if any.
  void take_remote_disconnect() {
    if (remote_disconnect_.load(std::memory_order_acquire)) take_remote_disconnect_slow();
  }
  std::string describe() const override;
  std::string peer_host() const override { return params_.peer_host; }
  // Commands whose backend operation has not completed yet (their IoRequest's completion is
  // the pipeline's): the queue (its buffers, which the kernel may still be writing) must not
  // be destroyed before this is 0.
  uint32_t backend_in_flight() const { return pipeline_.backend_in_flight(); }
  // RDMA READs posted and not completed; never above the READ depth.
  uint32_t rdma_reads_in_flight() const { return pipeline_.reads().in_use(); }
  // For the stall check (EventLoop, housekeeping; target/stall_report.h): the start of the current
  // stall of this queue's posted send work (nullopt: nothing posted, or progress since the last
  // look), the shared chunks its commands hold, and whether commands of any queue wait for one.
  std::optional<StallWatch::Clock::time_point> send_stalled_since(
      StallWatch::Clock::time_point now) {
    return stall_.observe(pipeline_.send_queue().in_use(), send_completions_, now);
  }
  uint32_t chunks_held() const { return pipeline_.pool_chunks_held(); }
  // SRQ receives its parked capsules hold: those with in-capsule data (a dataless capsule's SQE
  // is copied and its receive given back when it is parked); 0 without an SRQ (its own
  // receives are nobody else's).
  uint32_t srq_receives_parked() const { return pipeline_.parked_receives(); }
  const SharedReceiveQueue* shared_receive_queue() const { return srq_; }
  // Command capsules received with no free command slot (every slot waits for its SEND).
  uint32_t capsules_parked() const { return pipeline_.capsules_parked(); }
  bool buffers_waited_for() const {
    return pipeline_.pool() != nullptr && pipeline_.pool()->waiting() > 0;
  }

  // Commands received and not done: capsules waiting for a slot plus slots in any state but
  // done and held (an AER may rightly be held for hours).
  uint32_t outstanding() const { return pipeline_.outstanding(); }
  // Feeds the queue's IdleWatch; when it reports a stall, logs a WARN (describe_stall: the
  // request states, receives posted, send-queue and READ credits, backend operations, shared
  // buffers, the QP's transport retry settings, the oldest transfer), and an INFO when
  // completions resume. Also watches the oldest request in a transfer state: when the same one
  // has waited stall_warn_ms for its RDMA READ or response SEND while other completions went on,
  // a WARN names it (describe_transfer_stall). The event loop calls it at least every
  // stall_check_interval() while outstanding() > 0 (and every
  // few dozen rounds of a busy loop): the slots are walked only when the per-state gauges show a
  // request in a transfer state.
  void check_stall(IdleWatch::Clock::time_point now);
  IdleWatch::Clock::duration stall_check_interval() const { return idle_.check_interval(); }
  bool stall_watch_enabled() const { return idle_.enabled(); }
  // What the stall WARN shows (ibv_query_qp included: a syscall, never on the I/O path).
  StallSnapshot stall_snapshot() const;
  // Receive WRs this queue posted on its own QP and not yet completed (0 with an SRQ).
  uint32_t receives_posted() const { return receives_posted_; }

  bool connect_accepted() override;
  void respond_held(Request& r) override { pipeline_.respond_held(r); }
  // QueueLink: records that events wait and wakes the owning group, whose
  // take_remote_events() delivers them.
  void wake_for_events() override;
  // Owner thread: delivers the asynchronous events another thread queued, if any.
  void take_remote_events() {
    if (events_pending_.load(std::memory_order_acquire)) take_remote_events_slow();
  }

  // PipelineTransport.
  const proto::Sqe* capsule_sqe(uint32_t recv) override;
  std::span<uint8_t* const> capsule_pages(uint32_t recv) override;
  bool repost_receive(uint32_t recv) override;
  void parked_receives_changed(int32_t delta) override;
  void post_read(uint32_t slot, const Request& r) override;
  void post_response(uint32_t slot, const Request& r, bool with_data) override;
  void response_ready() override;
  void fail(const std::string& what) override;

  // A Connect succeeded on this queue (see CommandProcessor::connected()).
  bool connected() const { return processor_ && processor_->connected(); }
  // Connected, and its DH-HMAC-CHAP authentication has not succeeded yet.
  bool awaiting_authentication() const {
    return processor_ && processor_->awaiting_authentication();
  }
  // The queue's place among the connections waiting for their Connect (--max-pending-connections,
  // target/poll_group.h): given back when its Connect succeeds (before the response is posted),
  // when it is asked to disconnect (owner thread), or when it is destroyed.
  void hold_pending(PendingSlot slot) { pending_ = std::move(slot); }
  bool holds_pending() const { return pending_.held(); }
  // When the CM request was accepted (the start of the Connect deadline).
  std::chrono::steady_clock::time_point accepted_at() const { return accepted_at_; }

  bool wants_teardown() const override { return !disconnect_reason_.empty(); }
  const std::string& disconnect_reason() const { return disconnect_reason_; }
  rdma_cm_id* cm_id() const { return id_.get(); }
  const RdmaQueueParams& params() const { return params_; }
  uint32_t granted_max_inline_data() const { return qp_->granted_max_inline_data(); }
  bool inline_fallback() const { return qp_->inline_fallback(); }
  uint32_t usable_max_inline_data() const { return qp_->usable_max_inline_data(); }

 private:
  // A command slot's work requests (the slot's Request is the pipeline's).
  struct SlotWrs {
    ibv_sge data_sge{};
    ibv_sge cqe_sge{};
    ibv_send_wr data_wr{};
    ibv_send_wr send_wr{};
  };
  RdmaQueue(verbs::CmId id, DeviceContext& dev, const RdmaQueueParams& params, Subsystem& subsystem,
            StatusCounters& statuses);
  Status setup();
  // Takes room for shared_cq_need() entries on a shared CQ of dev_ (cq_, cq_need_).
  Status join_shared_cq();
  Status allocate_buffers();
  Status create_qp();
  void build_work_requests();
  // Adds a command slot to the pipeline and its work requests, with `bytes` of data buffer at
  // `buffer` (lkey `lkey`).
  void add_slot(uint8_t* buffer, uint32_t bytes, uint32_t lkey);
  bool post_receive(uint32_t index);
  // Moves the QP to the error state (it takes no more receives); errors ignored.
  void stop_qp();

  void handle(const ibv_wc& wc);
  // Appends the chain first..last (last->next is overwritten) to the WRs posted by flush(), and
  // puts the queue on dev_.touched (once).
  void queue_send(ibv_send_wr* first, ibv_send_wr* last);
  void flush_sends();
  void take_remote_disconnect_slow();
  void take_remote_events_slow();

  DeviceContext& dev_;
  SharedReceiveQueue* srq_ = nullptr;  // params.srq
  uint32_t qp_num_ = 0;
  RdmaQueueParams params_;
  Subsystem& subsystem_;
  StatusCounters& statuses_;
  uint32_t pages_per_recv_ = 0;
  uint32_t slot_count_ = 0;  // queue_size + held_slots
  bool grown_ = false;       // connect_accepted() set up the rest
  // What this queue added to StatsRegistry::add_resources, given back in the destructor.
  int64_t mr_bytes_ = 0, mrs_ = 0, posted_receives_ = 0;
  void account(int64_t mr_bytes, int64_t mrs, int64_t posted_receives);
  std::chrono::steady_clock::time_point accepted_at_;

  verbs::CmId id_;  // destroyed last, after the QP
  // first_buf_: receive 0's in-capsule pages, then the Connect data page.
  std::optional<verbs::RegisteredBuffer> sqe_buf_, first_buf_, page_buf_, data_buf_, cqe_buf_;
  SharedCq* cq_ = nullptr;              // dev_.cqs's, which outlive every queue
  int cq_need_ = 0;                     // entries promised to this queue on cq_
  bool in_qps_ = false;                 // entered in dev_.qps
  bool touched_ = false;                // on dev_.touched
  std::optional<verbs::QueuePair> qp_;  // destroyed before the buffers' MRs

  std::vector<ibv_recv_wr> recv_wrs_;
  std::vector<ibv_sge> recv_sges_;
  std::vector<uint8_t*> recv_pages_;
  std::vector<SlotWrs> wrs_;             // per command slot, capacity slot_count_ (never moves)
  ibv_send_wr* pending_head_ = nullptr;  // WRs to post at the end of poll()
  ibv_send_wr* pending_tail_ = nullptr;
  bool disconnected_ = false;
  uint64_t events_ = 0;           // completions handled (IdleWatch input)
  uint32_t receives_posted_ = 0;  // receive WRs on the QP now (without an SRQ)
  IdleWatch idle_;
  // The oldest request in a transfer state: a READ or SEND of this QP with no work completion
  // for stall_warn_ms while the queue's other completions go on (which idle_ does not see).
  IdleWatch transfer_watch_;
  uint64_t transfer_stalls_ = 0;   // transfer stalls reported while completions went on
  uint64_t send_completions_ = 0;  // RDMA READ and SEND work completions (the stall check)
  StallWatch stall_;
  BufferPool* pool_ = nullptr;  // dev_.pool once connected with shared buffers
  std::string disconnect_reason_;
  PendingSlot pending_;  // until the Connect succeeded or the queue wants teardown
  const std::thread::id owner_ = std::this_thread::get_id();  // the thread that created it
  std::atomic<bool> remote_disconnect_{false};
  std::atomic<bool> events_pending_{false};
  std::mutex remote_mutex_;
  std::string remote_reason_;  // guarded by remote_mutex_

  QueueCounters counters_;
  RequestPipeline pipeline_;
  std::optional<CommandProcessor> processor_;  // destroyed first
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_RDMA_QUEUE_H_
