// SPDX-License-Identifier: BSD-3-Clause
// RequestPipeline: process() and the events that kick it.
#include "target/request_pipeline.h"

#include <cstring>

#include "target/stall_report.h"

namespace nvmf::target {
namespace {

constexpr uint32_t kSqeBytes = sizeof(proto::Sqe);

// The data length SGL1 describes (keyed data block: 24-bit length; others: 32-bit), whatever
// the command: a command with 0 moves no data and takes no shared buffer.
uint32_t sgl1_bytes(const proto::Sqe& sqe) {
  return (sqe.dptr.id >> 4) == proto::kSglTypeKeyedDataBlock ? sqe.dptr.keyed_length()
                                                             : sqe.dptr.unkeyed.length;
}

}  // namespace

RequestPipeline::RequestPipeline(PipelineTransport& transport, QueueCounters& counters,
                                 const PipelineParams& params)
    : transport_(transport), counters_(counters), params_(params) {
  slots_.reserve(params.slot_count);
  free_slots_.reserve(params.slot_count);
  parked_.assign(params.queue_size, Parked{});
  read_waiters_.reset(params.slot_count);
  response_waiters_.reset(params.slot_count);
}

uint32_t RequestPipeline::add_slot(std::span<uint8_t> buffer) {
  const auto index = static_cast<uint32_t>(slots_.size());
  Slot& s = slots_.emplace_back();  // within the reserved room: no slot moves
  s.req.buffer = buffer;
  s.req.io.done = this;
  s.req.io.tag = index;
  s.waiter.owner = this;
  s.waiter.slot = index;
  counters_.state_now[static_cast<size_t>(RequestState::kDone)].add();  // a free slot
  free_slots_.push_back(index);
  return index;
}

// ------------------------------------------------------------------------------- events --

void RequestPipeline::on_capsule(uint32_t recv, uint32_t byte_len) {
  if (!capsules_.take(1)) {
    fail("the host sent more than " + std::to_string(capsules_.limit()) +
         " command capsules without waiting for their responses (" +
         (accepted_ ? "hsqsize + 1" : "two before its Connect is accepted") + ")");
    return;
  }
  if (byte_len < kSqeBytes) {
    fail("capsule of " + std::to_string(byte_len) + " bytes is shorter than an SQE");
    return;
  }
  if (free_slots_.empty()) {  // every slot waits for a SEND completion: queue the capsule
    park(recv, byte_len);
    return;
  }
  const uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  if (load(slot, recv, byte_len, nullptr)) process(slot);
}

void RequestPipeline::on_read_done(uint32_t slot) {
  reads_.give_back(1);
  send_queue_.give_back(1);
  if (move(slot, RequestState::kReadyToExecute)) process(slot);
  serve_waiters();
}

void RequestPipeline::on_send_done(uint32_t slot) {
  send_queue_.give_back(slots_[slot].sq_held);
  slots_[slot].sq_held = 0;
  if (move(slot, RequestState::kDone)) process(slot);
}

void RequestPipeline::io_done(IoRequest& io) {
  --backend_in_flight_;
  ++progress_;
  CommandProcessor::backend_done(slots_[io.tag].req);
  if (transport_.wants_teardown()) return;  // nobody to answer
  if (decide(io.tag, processor_->io_done(slots_[io.tag].req))) process(io.tag);
}

void RequestPipeline::chunk_ready(uint32_t slot, uint8_t* chunk) {
  --buffer_waiters_;
  ++progress_;
  attach_chunk(slot, chunk);
  process(slot);
}

void RequestPipeline::respond_held(Request& r) {
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (&slots_[slot].req != &r) continue;
    if (!move(slot, RequestState::kReadyToComplete)) return;
    // Its receive went back when it was held.
    slots_[slot].with_data = false;
    transport_.response_ready();
    if (!transport_.wants_teardown()) release_chunk(slot);
    process(slot);
    return;
  }
}

// ------------------------------------------------------------------------------ process --

void RequestPipeline::process(uint32_t slot) {
  Slot& s = slots_[slot];
  Request& r = s.req;
  for (;;) {
    const RequestState before = r.state;
    switch (r.state) {
      case RequestState::kNew:
        if (pool_ != nullptr && s.chunk == nullptr && sgl1_bytes(*r.sqe) > 0) {
          if (!pool_->unclaimed()) {  // waiters go before newcomers
            if (!move(slot, RequestState::kWaitingForBuffer)) return;
            counters_.buffer_waits.add();
            if (!pool_->wait(s.waiter)) return fail("buffer waiters: a slot waits twice");
            ++buffer_waiters_;
            return;
          }
          attach_chunk(slot, pool_->take(*this));
        }
        if (!decide(slot, processor_->begin(r))) return;
        break;
      case RequestState::kWaitingForBuffer:
        if (s.chunk == nullptr) return;  // chunk_ready() kicks it
        if (!decide(slot, processor_->begin(r))) return;
        break;
      case RequestState::kWaitingForReadCredit:
        // In arrival order: a newcomer goes behind every waiter, whatever the credits.
        if (!s.served) {
          if (!read_waiters_.empty() || !reads_.available(1) || !send_queue_.available(1)) {
            counters_.rdma_read_waits.add();
            if (!read_waiters_.push(slot)) fail("RDMA READ waiters: more than one entry per slot");
            return;  // serve_waiters() kicks it
          }
        }
        s.served = false;
        reads_.take(1);
        send_queue_.take(1);
        if (!move(slot, RequestState::kTransferringFromHost)) return;
        counters_.rdma_reads_in_flight_max.set(reads_.high_water());
        transport_.post_read(slot, r);
        return;  // on_read_done() kicks it
      case RequestState::kTransferringFromHost:
        return;
      case RequestState::kReadyToExecute:
        if (!decide(slot, processor_->data_arrived(r))) return;
        break;
      case RequestState::kExecuting:  // io_done() kicks it
      case RequestState::kHeld:       // respond_held() kicks it
        return;
      case RequestState::kReadyToComplete: {
        const uint32_t need = s.with_data ? 2 : 1;
        if (!s.served) {
          if (!response_waiters_.empty() || !send_queue_.available(need)) {
            counters_.send_queue_waits.add();
            if (!response_waiters_.push(slot)) {
              fail("response waiters: more than one entry per slot");
            }
            return;  // serve_waiters() kicks it
          }
        }
        s.served = false;
        if (!move(slot,
                  s.with_data ? RequestState::kTransferringToHost : RequestState::kCompleting)) {
          return;
        }
        s.sq_held = need;
        send_queue_.take(need);
        transport_.post_response(slot, r, s.with_data);
        return;  // on_send_done() kicks it
      }
      case RequestState::kTransferringToHost:
      case RequestState::kCompleting:
        return;
      case RequestState::kDone: {
        release_chunk(slot);
        serve_waiters();  // before the slot takes a parked capsule: those waited longer
        if (parked_count_ == 0) {
          free_slots_.push_back(slot);
          return;
        }
        const Parked p = parked_[parked_head_];  // a copy: the ring entry may be reused
        parked_head_ = (parked_head_ + 1) % parked_.size();
        --parked_count_;
        if (p.recv != kNoReceive && params_.shared_receives) {
          --parked_receives_;
          transport_.parked_receives_changed(-1);
        }
        if (!load(slot, p.recv, p.byte_len, p.recv == kNoReceive ? &p.sqe : nullptr)) return;
        break;
      }
    }
    if (r.state == before || transport_.wants_teardown()) return;
  }
}

bool RequestPipeline::decide(uint32_t slot, NextStep next) {
  Slot& s = slots_[slot];
  switch (next) {
    case NextStep::kRespond:
    case NextStep::kWriteToHostThenRespond: {
      if (!move(slot, RequestState::kReadyToComplete)) return false;
      s.with_data = next == NextStep::kWriteToHostThenRespond;
      // A successful Connect's queue stops pending now, before the host can see the CQE.
      transport_.response_ready();
      // Without an RDMA WRITE the response needs no data buffer (what the command moved was
      // consumed): the chunk goes back now, not at the SEND completion, so that a stall of this
      // QP's SENDs in the transport (on rxe, retransmit rounds of 2 s each) holds no buffer that
      // commands of other queues wait for. Not on a queue being torn down: its QP may still be
      // placing data there (a READ the provider reported done without its data, see
      // CommandProcessor::read_data_missing), so its chunks go back after the QP is destroyed.
      if (!s.with_data && !transport_.wants_teardown()) release_chunk(slot);
      // Before the SEND: the host may send its next command as soon as it sees the CQE.
      return return_receive(s.recv);
    }
    case NextStep::kReadFromHost:
      return move(slot, RequestState::kWaitingForReadCredit);
    case NextStep::kHold:  // the SQE is no longer needed: give the receive back; no data moves
      release_chunk(slot);
      return move(slot, RequestState::kHeld) && return_receive(s.recv);
    case NextStep::kBackend:  // io_done() continues; the SQE stays in its receive until then
      if (!move(slot, RequestState::kExecuting)) return false;
      ++backend_in_flight_;
      return true;
  }
  return false;
}

bool RequestPipeline::move(uint32_t slot, RequestState to) {
  Slot& s = slots_[slot];
  Request& r = s.req;
  if (!transition_allowed(r.state, to)) {
    fail("slot " + std::to_string(slot) + ": request state " +
         std::string(request_state_name(r.state)) + " cannot move to " +
         std::string(request_state_name(to)));
    return false;
  }
  counters_.count_move(r.state, to);
  r.state = to;
  if (is_transfer_state(to)) {
    s.transfer_ticket = ++transfer_tickets_;
    // Before the READ the SQE is still in its receive; a response's CQE carries the cid.
    s.transfer_cid =
        to == RequestState::kTransferringFromHost && r.sqe != nullptr ? r.sqe->cid : r.cqe.cid;
    s.transfer_bytes = to == RequestState::kCompleting ? 0 : r.transfer_bytes;
  }
  return true;
}

bool RequestPipeline::load(uint32_t slot, uint32_t recv, uint32_t byte_len,
                           const proto::Sqe* parked_sqe) {
  Slot& s = slots_[slot];
  s.recv = recv;
  Request& r = s.req;
  if (parked_sqe != nullptr) {  // parked without its receive: the SQE was copied
    s.sqe_copy = *parked_sqe;
    r.sqe = &s.sqe_copy;
    r.in_capsule.pages = {};
  } else {
    r.sqe = transport_.capsule_sqe(recv);
    r.in_capsule.pages = transport_.capsule_pages(recv);
  }
  r.in_capsule.page_size = params_.page_size;
  r.in_capsule.received_bytes = byte_len - kSqeBytes;
  return move(slot, RequestState::kNew);
}

void RequestPipeline::park(uint32_t recv, uint32_t byte_len) {
  Parked& p = parked_[(parked_head_ + parked_count_) % parked_.size()];
  ++parked_count_;
  p.byte_len = byte_len;
  if (params_.shared_receives && byte_len == kSqeBytes) {
    // A capsule without in-capsule data: its SQE is all it carries, so it waits in this
    // queue's own ring and its receive goes back to the shared receive queue now. A host that
    // takes no responses (our SENDs never complete) and keeps sending dataless commands pins
    // no receive of the other hosts; the stall bound tears its queue down.
    std::memcpy(&p.sqe, transport_.capsule_sqe(recv), kSqeBytes);
    p.recv = kNoReceive;
    (void)transport_.repost_receive(recv);  // a failure asked for the teardown
    return;
  }
  // Its in-capsule data is read in place: it keeps its receive until it starts (at most
  // SQSIZE such per queue, capsules_; the device's share: EventLoop::evict_srq_parkers).
  p.recv = recv;
  if (params_.shared_receives) {
    ++parked_receives_;
    transport_.parked_receives_changed(1);
  }
}

bool RequestPipeline::return_receive(uint32_t recv) {
  capsules_.give_back(1);
  if (recv == kNoReceive) return true;  // went back when its capsule was parked
  return transport_.repost_receive(recv);
}

void RequestPipeline::serve_waiters() {
  while (!response_waiters_.empty()) {
    const uint32_t slot = response_waiters_.front();
    if (!send_queue_.available(slots_[slot].with_data ? 2 : 1)) return;  // READs wait too
    response_waiters_.pop();
    slots_[slot].served = true;
    process(slot);
  }
  while (!read_waiters_.empty() && reads_.available(1) && send_queue_.available(1)) {
    const uint32_t slot = read_waiters_.front();
    read_waiters_.pop();
    slots_[slot].served = true;
    process(slot);
  }
}

void RequestPipeline::attach_chunk(uint32_t slot, uint8_t* chunk) {
  Slot& s = slots_[slot];
  s.chunk = chunk;
  s.req.buffer = {chunk, pool_->chunk_bytes()};
}

void RequestPipeline::release_chunk(uint32_t slot) {
  Slot& s = slots_[slot];
  if (s.chunk == nullptr) return;
  if (!pool_->give(s.chunk, *this)) fail("shared buffer given back twice");
  s.chunk = nullptr;
  s.req.buffer = {};
}

// ----------------------------------------------------------------------------- teardown --

void RequestPipeline::abandon_waiters() {
  // Its commands waiting for a shared buffer will never start: withdrawn now, so that they
  // neither hold back other queues' newcomers (ChunkList::unclaimed) nor keep the event loop
  // polling for them while the queue waits for a backend operation before its teardown.
  if (pool_ != nullptr && buffer_waiters_ > 0) {
    for (Slot& s : slots_) pool_->withdraw(s.waiter);
    buffer_waiters_ = 0;
  }
  // Its parked capsules will never start. Their shared receives go back now, not when the
  // queue is swept (after its last backend operation), so that they count against no other
  // queue's share meanwhile. Without a shared receive queue the receives are the queue's own.
  if (params_.shared_receives) {
    for (size_t i = 0; i < parked_count_; ++i) {
      const Parked& p = parked_[(parked_head_ + i) % parked_.size()];
      // A failed post leaves the receive held by this QP: the teardown posts it again.
      if (p.recv != kNoReceive) (void)transport_.repost_receive(p.recv);
    }
    transport_.parked_receives_changed(-static_cast<int32_t>(parked_receives_));
    parked_receives_ = 0;
  }
  parked_head_ = 0;
  parked_count_ = 0;
}

void RequestPipeline::release_all() {
  if (parked_receives_ > 0) {
    transport_.parked_receives_changed(-static_cast<int32_t>(parked_receives_));
    parked_receives_ = 0;
  }
  if (pool_ == nullptr) return;
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) release_chunk(slot);
  if (buffer_waiters_ > 0) {
    for (Slot& s : slots_) pool_->withdraw(s.waiter);
    buffer_waiters_ = 0;
  }
}

// ------------------------------------------------------------------------- what it shows --

uint32_t RequestPipeline::outstanding() const {
  const uint64_t idle = counters_.state_now[static_cast<size_t>(RequestState::kDone)].get() +
                        counters_.state_now[static_cast<size_t>(RequestState::kHeld)].get();
  const uint64_t slots = slots_.size();
  return static_cast<uint32_t>((slots > idle ? slots - idle : 0) + parked_count_);
}

RequestPipeline::TransferScan RequestPipeline::scan_transfers() const {
  TransferScan t;
  // The per-state gauges say whether there is anything to find: a queue with no request in a
  // transfer state (most of them, most of the time) costs three loads, not a walk of its slots.
  uint64_t in_transfer = 0;
  for (RequestState st : {RequestState::kTransferringFromHost, RequestState::kTransferringToHost,
                          RequestState::kCompleting}) {
    in_transfer += counters_.state_now[static_cast<size_t>(st)].get();
  }
  if (in_transfer == 0) return t;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!is_transfer_state(s.req.state)) continue;
    if (t.transfers++ == 0 || s.transfer_ticket < t.oldest_ticket) {
      t.oldest_ticket = s.transfer_ticket;
      t.oldest_slot = i;
    }
  }
  return t;
}

}  // namespace nvmf::target
