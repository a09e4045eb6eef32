// SPDX-License-Identifier: BSD-3-Clause
// Queue: one NVMe-oF RDMA queue of the host (admin qid 0 or I/O qid >= 1): its rdma_cm
// connection, QP, CQ, registered SQE and CQE buffers, and the command engine (slots matched by
// CID, completions polled busy or on a completion channel).
#ifndef NVMF_HOST_QUEUE_H_
#define NVMF_HOST_QUEUE_H_

#include <infiniband/verbs.h>
#include <poll.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/in_capsule.h"
#include "common/status.h"
#include "common/verbs/registered_buffer.h"
#include "common/verbs/verbs.h"
#include "host/channel.h"
#include "host/io_channel.h"
#include "host/io_plan.h"
#include "host/options.h"
#include "host/slot_table.h"
#include "proto/nvme.h"

namespace nvmf::host {

// What Queue::connect needs.
struct QueueParams {
  uint16_t qid = 0;
  uint16_t queue_size = 32;  // CM hrqsize; hsqsize = queue_size - 1
  std::string traddr;
  std::string trsvcid = "4420";
  std::string host_traddr;  // empty: any
  uint32_t requested_max_inline_data = 64;
  PollMode poll_mode = PollMode::kEvent;
  int timeout_ms = 5000;
  uint8_t ack_timeout = 0;  // HostOptions::ack_timeout (0: rdma_cm's)
};

// The parameters of queue `qid` of `queue_size` entries for a connection made with `options`
// (address, source address, max_inline_data request, poll mode, timeout). The one mapping used
// by Controller (admin and I/O queues) and discover() (the discovery controller's admin queue).
QueueParams queue_params(const HostOptions& options, uint16_t qid, uint16_t queue_size);
// The same on one of the failover paths (HostOptions::failover_paths) instead of
// options.traddr / options.trsvcid.
QueueParams queue_params(const HostOptions& options, const TransportPath& path, uint16_t qid,
                         uint16_t queue_size);

// One connected queue. Not thread-safe: one thread submits and polls (no lock on the fast path).
// Everything (slots, SQE/CQE buffers, work requests) is allocated in connect(); post() and
// wait() allocate nothing unless they fail.
class Queue : public CommandChannel, public IoChannel {
 public:
  // Resolves the address and route (bound to `host_traddr` when given), shares or creates the
  // PD in `pd` (the first queue creates it; later ones must land on the same device), creates
  // CQ/QP (asking requested_max_inline_data; the QP wrapper falls back to none), registers the
  // buffers, posts queue_size receives and connects with the RDMA CM private data of RDMA 1.0
  // §3.3. Errors: kUnavailable "connection refused"/unreachable, kTimeout, kRejected "CM
  // reject: invalid HSQSIZE (4)", verbs errors naming the call. All prefixed "queue <qid>".
  static Result<std::unique_ptr<Queue>> connect(const QueueParams& params,
                                                std::optional<verbs::ProtectionDomain>& pd);
  ~Queue() override;
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  uint16_t qid() const override { return qid_; }
  // Entries (SQSIZE + 1 as sent in Connect).
  uint16_t queue_size() const { return queue_size_; }
  // Bytes of max_inline_data the QP got, and whether the asked size was refused and 0 used
  // instead (common/verbs/queue_pair.h).
  uint32_t granted_max_inline_data() const { return qp_->granted_max_inline_data(); }
  bool inline_fallback() const { return qp_->inline_fallback(); }
  // The IBV_SEND_INLINE ceiling (common/inline_send.h usable_max_inline_data()).
  uint32_t usable_max_inline_data() const { return qp_->usable_max_inline_data(); }
  // The QP's local ACK timeout once connected (4.096 us x 2^N; ibv_query_qp at connect):
  // QueueParams::ack_timeout, or rdma_cm's own when that was 0. 0 when the query failed.
  uint8_t ack_timeout() const { return ack_timeout_; }
  // SGEs per SEND the QP got (the SQE plus in-capsule pieces must fit).
  uint32_t granted_max_send_sge() const { return qp_->granted_max_send_sge(); }
  // Posts and completions of this queue (the caller's thread only).
  const QueueCounters& counters() const { return counters_; }
  QueueCounters capsule_counters() const override { return counters_; }
  // Set after connect by the controller once Identify says what in-capsule data the target takes.
  // Also used for the I/O queue's Connect data (sent in-capsule when it fits, like Linux).
  void set_in_capsule_policy(const HostInCapsulePolicy& policy) { in_capsule_ = policy; }
  const HostInCapsulePolicy& in_capsule_policy() const override { return in_capsule_; }
  // Slots available for concurrent commands (queue_size - 1).
  uint16_t num_slots() const override { return slots_ ? slots_->size() : 0; }
  // Slots not in flight now.
  uint16_t free_slots() const override { return slots_ ? slots_->free_count() : 0; }

  // Fast path. Copies `sqe` into a free slot's registered SQE buffer, sets CID = slot index and
  // posts it signalled: SGE 0 is the SQE, SGEs 1..n are `in_capsule` (registered caller memory,
  // not copied). SGL1 is sent as given. Posted with IBV_SEND_INLINE when choose_send_mode()
  // allows (no in-capsule data, 64 <= usable_max_inline_data()); the SGE then still points at
  // the slot's SQE buffer, which the CPU copies at post time. Returns the slot.
  // kResourceExhausted when no slot is free; kInvalidArgument for too many SGEs; kIo when the
  // queue has failed before or ibv_post_send fails.
  // `defer`: the capsule's work request is chained instead of posted, and post_deferred() posts
  // every chained one with one ibv_post_send (on rxe each ibv_post_send is a write() to uverbs,
  // so a bench round that refills 16 slots makes one system call instead of 16). Until then the
  // slot is taken and counted, but the capsule is not on the wire: call post_deferred() before
  // waiting for it.
  Result<uint16_t> post(const proto::Sqe& sqe, std::span<const Piece> in_capsule,
                        bool defer) override;
  Result<uint16_t> post(const proto::Sqe& sqe, std::span<const Piece> in_capsule) {
    return post(sqe, in_capsule, false);
  }
  // Posts what post(..., true) chained. On an ibv_post_send error the capsules from the failing
  // one on were not sent: their slots are abandoned and the queue is failed (kIo, as post()); the
  // caller recovers as after any transport error. No allocation.
  Status post_deferred() override;
  // Waits until `slot` has both its response and its send completion, then frees it and returns
  // the CQE. kTimeout at `deadline` (the queue is then marked failed: the slot cannot be reused
  // safely); kIo on a work completion error. Completions of other slots found meanwhile are
  // stored for their own wait().
  Result<proto::Cqe> wait(uint16_t slot, Deadline deadline);
  // Deadline `timeout_ms` (QueueParams) from now.
  Deadline deadline() const;

  // Asynchronous completion API, for callers that keep many commands in flight and reap them
  // in any order (the benchmark; one thread per queue). post() as above, then:
  // - poll_completions(): one ibv_poll_cq; handles what it found and returns how many work
  //   completions that was (0: nothing yet). Errors as wait().
  // - wait_for_completions(deadline): event mode sleeps on the completion channel until work
  //   may be there; busy mode returns at once. kTimeout once `deadline` passed (the queue is
  //   then failed).
  // - slot_done(slot) / release_slot(slot): as SlotTable::done() and release().
  // None of them allocates on success.
  Result<int> poll_completions() override;
  Status wait_for_completions(Deadline deadline) { return wait_for_work(deadline); }
  bool slot_done(uint16_t slot) const override { return slots_->done(slot); }
  // One thread sleeping on many queues at once (bench --threads), in place of
  // wait_for_completions(): the caller fills a pollfd set with wait_fds() of every queue, sleeps
  // in one poll() or epoll set (no longer than the earliest deadline), then calls after_wait() on
  // each queue with its two entries. No allocation.
  // - wait_fds(fds): fds[0] = the completion channel (fd -1 in busy mode: poll() skips it),
  //   fds[1] = the rdma_cm event channel, both POLLIN, revents 0. The CQ's notification is armed
  //   at connect and re-armed whenever an event is consumed, so after a poll_completions() that
  //   found nothing, the completion channel becomes readable on the next completion.
  // - after_wait(fds, deadline): consumes the completion event when fds[0] fired
  //   (ibv_get_cq_event, ibv_ack_cq_events, re-arm), reads the rdma_cm event when fds[1] fired
  //   (kUnavailable, sticky, once the target disconnected), then kTimeout (the queue is failed)
  //   once `deadline` passed: wait_for_completions()'s results.
  void wait_fds(pollfd fds[2]) const override;
  Status after_wait(const pollfd fds[2], Deadline deadline) override;
  proto::Cqe release_slot(uint16_t slot) override { return slots_->release(slot); }

  // CommandChannel: a setup command through this queue's 4 KiB registered bounce buffer.
  Result<proto::Cqe> run(const proto::Sqe& sqe, std::span<const uint8_t> data_out,
                         std::span<uint8_t> data_in, bool allow_in_capsule) override;

  // rdma_disconnect (idempotent); posted work flushes. Resources go with the destructor.
  void disconnect();

 private:
  // The send WR of one slot and its SGEs, built in place (no allocation on the fast path).
  struct SlotWr {
    ibv_sge sges[1 + kMaxInCapsuleSegments] = {};
    ibv_send_wr wr = {};
  };
  explicit Queue(const QueueParams& params);

  Status resolve(const QueueParams& params);
  Status create_resources(std::optional<verbs::ProtectionDomain>& pd,
                          uint32_t requested_max_inline_data);
  Status register_buffers(ibv_pd* pd, uint32_t nslots);
  Status post_receive(uint32_t index);
  Status cm_connect();
  Status poll_once(int* found);
  void handle_completion(const ibv_wc& wc);
  Status wait_for_work(Deadline deadline);
  // Fails the queue with kTimeout "no completion within timeout_ms".
  Status timed_out();
  // Non-blocking look at the CM channel: kUnavailable (sticky) once the target disconnected.
  Status check_cm_events();
  // Polls the CQ until it is empty: the responses that arrived before a disconnect reach their
  // slots before the queue is failed.
  void drain_completions();
  // Records the first fatal error of the queue (sticky); fail() also returns it.
  void mark_failed(Status status);
  Status fail(Status status);

  uint16_t qid_;
  uint16_t queue_size_;
  PollMode poll_mode_;
  int timeout_ms_;
  std::string peer_;  // "traddr:trsvcid" for messages

  std::vector<SlotWr> slot_wrs_;    // one per slot
  std::optional<SlotTable> slots_;  // which slots are in flight, their CQEs
  std::vector<ibv_recv_wr> recv_wrs_;
  std::vector<ibv_sge> recv_sges_;
  QueueCounters counters_;
  HostInCapsulePolicy in_capsule_;
  Status failed_;  // sticky: set on timeout or completion error
  bool connected_ = false;
  uint8_t ack_timeout_ = 0;               // the QP's, queried once connected
  ibv_send_wr* deferred_head_ = nullptr;  // post(..., defer) chain, posted by post_deferred()
  ibv_send_wr* deferred_tail_ = nullptr;
  uint32_t idle_spins_ = 0;  // busy mode: empty polls, for check_cm_events() now and then
  int max_qp_rd_atom_ = 1;   // device limit, offered as responder_resources

  // Verbs objects, destroyed bottom-up: QP, registered buffers (MR, then its memory), CQ,
  // completion channel, CM id, event channel (common/verbs/verbs.h order). The PD belongs to the
  // Controller and outlives all queues.
  std::optional<verbs::EventChannel> channel_;
  std::optional<verbs::CmId> id_;
  std::optional<verbs::CompletionChannel> comp_channel_;
  std::optional<verbs::CompletionQueue> cq_;
  std::optional<verbs::RegisteredBuffer> sqe_buf_;     // one 64-byte SQE per slot
  std::optional<verbs::RegisteredBuffer> cqe_buf_;     // one 16-byte CQE per receive
  std::optional<verbs::RegisteredBuffer> bounce_buf_;  // setup commands' data (Connect, Identify)
  std::optional<verbs::QueuePair> qp_;
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_QUEUE_H_
