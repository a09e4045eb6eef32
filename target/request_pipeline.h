// SPDX-License-Identifier: BSD-3-Clause
// RequestPipeline: the commands of one queue on their way through the request states
// (target/request_state.h), without verbs. It owns the command slots, the ring of capsules
// waiting for a slot, the credits a request needs (capsules held, RDMA READ depth, send-queue
// entries), the FIFOs of the requests short of one and the slots' place in the shared buffer
// pool; it moves every request with one function, process(), which advances a request until
// its state stops changing (SPDK's nvmf_rdma_request_process has the same shape). Completions
// and freed resources only kick it: a capsule arriving (on_capsule), an RDMA READ or response
// SEND completing (on_read_done, on_send_done), a backend operation finishing (io_done), a
// shared chunk given to a waiter (chunk_ready), an event for a held command (respond_held).
//
// What it asks of the wire goes through a PipelineTransport: RdmaQueue posts the READs, WRITEs
// and SENDs and gives receives back; the request pipeline fuzzer (fuzz/) fakes it.
// Event-loop thread only. The fast path allocates nothing: slots, ring and FIFOs are sized when
// the queue is set up.
#ifndef NVMF_TARGET_REQUEST_PIPELINE_H_
#define NVMF_TARGET_REQUEST_PIPELINE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "proto/nvme.h"
#include "target/chunk_list.h"
#include "target/command_processor.h"
#include "target/counters.h"
#include "target/credits.h"
#include "target/io_engine.h"
#include "target/request.h"
#include "target/request_state.h"

namespace nvmf::target {

// What the pipeline needs from the transport that carries its queue. `recv` names one of the
// transport's receives (its own or its shared receive queue's); `slot` one of the pipeline's
// command slots.
class PipelineTransport {
 public:
  // The SQE and the in-capsule pages of the capsule in receive `recv`.
  virtual const proto::Sqe* capsule_sqe(uint32_t recv) = 0;
  virtual std::span<uint8_t* const> capsule_pages(uint32_t recv) = 0;
  // Posts receive `recv` again. False when the post failed: the transport has asked for the
  // queue's teardown (and logged why).
  virtual bool repost_receive(uint32_t recv) = 0;
  // Parked capsules holding a receive of the shared receive queue went up or down by `delta`
  // (the device's share of parked receives: EventLoop::evict_srq_parkers).
  virtual void parked_receives_changed(int32_t delta) = 0;
  // Post an RDMA READ of r.transfer_bytes from r.sgl into r.buffer now. Its completion comes
  // back as on_read_done(slot).
  virtual void post_read(uint32_t slot, const Request& r) = 0;
  // Queue the response r.cqe (after an RDMA WRITE of r.buffer[0, r.transfer_bytes) to r.sgl
  // when `with_data`). Its SEND completion comes back as on_send_done(slot).
  virtual void post_response(uint32_t slot, const Request& r, bool with_data) = 0;
  // A request is ready to complete: a successful Connect's queue stops pending now, before
  // the host can see the CQE.
  virtual void response_ready() = 0;
  // Tear the queue down (a transport bug or a host's protocol violation): logs `what` once.
  virtual void fail(const std::string& what) = 0;
  virtual bool wants_teardown() const = 0;

 protected:
  ~PipelineTransport() = default;
};

// The pipeline's sizes, from the queue's parameters.
struct PipelineParams {
  uint32_t queue_size = 0;  // hsqsize + 1: capsules a connected host may have outstanding
  uint32_t slot_count = 0;  // queue_size + slots for held Async Event Requests
  uint32_t page_size = 4096;
  // Receives come from a shared receive queue: a parked dataless capsule gives its receive back
  // at once (its SQE is copied), and parked receives are reported to parked_receives_changed().
  bool shared_receives = false;
};

class RequestPipeline : public IoCompletion, public ChunkWaiterOwner {
 public:
  // Marks a parked capsule whose SQE was copied and whose receive went back.
  static constexpr uint32_t kNoReceive = ~uint32_t{0};

  RequestPipeline(PipelineTransport& transport, QueueCounters& counters,
                  const PipelineParams& params);
  RequestPipeline(const RequestPipeline&) = delete;
  RequestPipeline& operator=(const RequestPipeline&) = delete;

  // ---- set-up (not the fast path) ----
  // The processor that decides each command (made after the pipeline; outlives no request).
  void set_processor(CommandProcessor* processor) { processor_ = processor; }
  // Adds a free command slot whose data buffer is `buffer` (empty with a shared pool). At most
  // params.slot_count; slots never move (requests and work requests point into them).
  uint32_t add_slot(std::span<uint8_t> buffer);
  void set_buffer(uint32_t slot, std::span<uint8_t> buffer) { slots_[slot].req.buffer = buffer; }
  // From now on commands with data take a chunk of `pool` (no buffer of their own).
  void use_pool(ChunkList* pool) { pool_ = pool; }
  // Capsules the host may have outstanding (received and not yet given back): 1 or 2 before
  // its Connect is accepted, queue_size after (`accepted`).
  void set_capsule_limit(uint32_t limit, bool accepted) {
    capsules_.set_limit(limit);
    accepted_ = accepted;
  }
  void set_send_queue_depth(uint32_t entries) { send_queue_.set_limit(entries); }
  void set_read_depth(uint32_t reads) { reads_.set_limit(reads); }

  // ---- events ----
  // A capsule of `byte_len` bytes arrived in receive `recv`. More capsules than the limit
  // (the host ignored sqhd and hsqsize) or one shorter than an SQE fail the queue.
  void on_capsule(uint32_t recv, uint32_t byte_len);
  // The RDMA READ of `slot` completed (successfully).
  void on_read_done(uint32_t slot);
  // The response SEND of `slot` completed: the slot is free for the next capsule.
  void on_send_done(uint32_t slot);
  // IoCompletion: a backend operation of the command in slot io.tag finished.
  void io_done(IoRequest& io) override;
  // ChunkWaiterOwner: the pool gave the command waiting in `slot` its chunk.
  void chunk_ready(uint32_t slot, uint8_t* chunk) override;
  // A held command (Async Event Request) was completed by the processor: respond.
  void respond_held(Request& r);

  // ---- teardown ----
  // The queue is going: its commands waiting for a chunk leave the pool's FIFO and its parked
  // capsules are dropped, their shared receives given back now.
  void abandon_waiters();
  // After the transport can no longer touch a chunk (its QP destroyed): every chunk held goes
  // back to the pool, and parked receives stop counting.
  void release_all();

  // ---- what the stall report and the stats show ----
  const Request& request(uint32_t slot) const { return slots_[slot].req; }
  uint32_t slot_count() const { return static_cast<uint32_t>(slots_.size()); }
  // Commands received and not done: capsules waiting for a slot plus slots in any state but
  // done and held.
  uint32_t outstanding() const;
  uint32_t capsules_parked() const { return static_cast<uint32_t>(parked_count_); }
  uint32_t parked_receives() const { return parked_receives_; }
  const Credits& capsules() const { return capsules_; }
  const Credits& reads() const { return reads_; }
  const Credits& send_queue() const { return send_queue_; }
  uint32_t responses_waiting() const { return response_waiters_.size(); }
  uint32_t reads_waiting() const { return read_waiters_.size(); }
  uint32_t buffer_waiters() const { return buffer_waiters_; }
  uint32_t backend_in_flight() const { return backend_in_flight_; }
  ChunkList* pool() const { return pool_; }
  // Work done other than the transport's completions (chunks given, backend completions): the
  // queue's idle watch adds it to its completions.
  uint64_t progress() const { return progress_; }
  // The requests in a transfer state (READ, WRITE or SEND posted) and the oldest of them.
  struct TransferScan {
    uint32_t transfers = 0;
    uint32_t oldest_slot = 0;
    uint64_t oldest_ticket = 0;
  };
  TransferScan scan_transfers() const;
  // The cid and byte count of `slot`'s current transfer (set when it entered the state).
  uint16_t transfer_cid(uint32_t slot) const { return slots_[slot].transfer_cid; }
  uint32_t transfer_bytes(uint32_t slot) const { return slots_[slot].transfer_bytes; }

 private:
  struct Slot {
    Request req;
    uint32_t recv = 0;         // kNoReceive: started from a parked copy of its SQE
    proto::Sqe sqe_copy{};     // that copy (req.sqe points here then)
    uint8_t* chunk = nullptr;  // the shared pool's chunk it holds
    ChunkWaiter waiter;        // its place in the pool's FIFO while waiting_for_buffer
    bool with_data = false;    // its response has an RDMA WRITE in front
    bool served = false;       // taken out of its state's FIFO: its credits are free
    uint32_t sq_held = 0;      // send-queue entries its posted work requests hold
    uint64_t transfer_ticket = 0;
    uint16_t transfer_cid = 0;
    uint32_t transfer_bytes = 0;
  };
  struct Parked {
    uint32_t recv = 0;  // kNoReceive: the SQE below is a copy, the receive is posted again
    uint32_t byte_len = 0;
    proto::Sqe sqe{};
  };

  // Advances the request in `slot` until its state stops changing: it then waits for a
  // completion, a credit or a chunk (the event that kicks it again), or its slot is free.
  void process(uint32_t slot);
  // Carries out the processor's decision for the request (its next state and what entering
  // it takes). False when the queue failed on the way.
  bool decide(uint32_t slot, NextStep next);
  // Moves the request to `to` (counted); a move the table lacks fails the queue.
  bool move(uint32_t slot, RequestState to);
  // Fills the request in `slot` from the capsule (its SQE copied when `parked_sqe`).
  bool load(uint32_t slot, uint32_t recv, uint32_t byte_len, const proto::Sqe* parked_sqe);
  void park(uint32_t recv, uint32_t byte_len);
  // Gives the command's receive back (a capsule is no longer held).
  bool return_receive(uint32_t recv);
  // Kicks the oldest waiters while their credits last: responses, then READs.
  void serve_waiters();
  void attach_chunk(uint32_t slot, uint8_t* chunk);
  void release_chunk(uint32_t slot);
  void fail(const std::string& what) { transport_.fail(what); }

  PipelineTransport& transport_;
  QueueCounters& counters_;
  PipelineParams params_;
  CommandProcessor* processor_ = nullptr;
  ChunkList* pool_ = nullptr;
  bool accepted_ = false;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;  // a stack
  std::vector<Parked> parked_;        // ring of queue_size
  size_t parked_head_ = 0, parked_count_ = 0;
  uint32_t parked_receives_ = 0;  // parked capsules keeping a shared receive
  Credits capsules_;              // capsules received and not given back
  Credits reads_;                 // RDMA READs outstanding, limit = the initiator depth
  Credits send_queue_;            // send work requests outstanding, limit = max_send_wr
  SlotFifo read_waiters_;         // waiting_for_read_credit, oldest first
  SlotFifo response_waiters_;     // ready_to_complete without send-queue room, oldest first
  uint32_t buffer_waiters_ = 0;   // slots in the pool's FIFO (waiting_for_buffer)
  uint32_t backend_in_flight_ = 0;
  uint64_t transfer_tickets_ = 0;
  uint64_t progress_ = 0;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_REQUEST_PIPELINE_H_
