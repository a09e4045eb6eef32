// SPDX-License-Identifier: BSD-3-Clause
#include "host/io_queue.h"

#include <poll.h>

#include <algorithm>
#include <string>

#include "common/nvme_status.h"
#include "common/sgl.h"
#include "host/commands.h"

namespace nvmf::host {

namespace {

constexpr uint16_t kPathError = make_status(proto::kSctPath, proto::kScHostPathingError);
constexpr uint16_t kAbortedByHost = make_status(proto::kSctPath, proto::kScCommandAbortedByHost);
// Empty polls between two looks at the clock for the command timeout (a clock read can be a
// system call where the clock source has no vDSO, as in the soft-RoCE guest).
constexpr uint32_t kPollsPerClockRead = 64;

Status path_error_status(LinkState state) {
  return Status::nvme_error(
      kPathError, std::string("Host Pathing Error: the association is ") + link_state_name(state));
}

}  // namespace

IoQueueStats IoQueue::stats() const {
  IoQueueStats s = stats_;
  if (channel_) s.capsules += channel_->capsule_counters();
  return s;
}

const char* link_state_name(LinkState state) {
  switch (state) {
    case LinkState::kLive:
      return "live";
    case LinkState::kReconnecting:
      return "reconnecting";
    case LinkState::kFailFast:
      return "reconnecting past fast_io_fail_tmo";
    case LinkState::kDeleted:
      return "deleted";
  }
  return "?";
}

IoQueue::IoQueue(const Params& params, IoQueueLink& link, std::unique_ptr<IoChannel> channel)
    : params_(params),
      link_(link),
      generation_(link.generation()),
      seen_generation_(link.generation().load(std::memory_order_acquire)),
      channel_(std::move(channel)) {
  uint16_t slots = channel_ ? channel_->num_slots() : params.depth;
  depth_ = params.depth == 0 ? slots : std::min(params.depth, slots == 0 ? params.depth : slots);
  if (depth_ == 0) depth_ = 1;
  if (!channel_) state_ = LinkState::kReconnecting;
  requests_.resize(depth_);
  free_.resize(depth_);
  for (uint16_t i = 0; i < depth_; ++i) free_[i] = static_cast<uint16_t>(depth_ - 1 - i);
  n_free_ = depth_;
  posted_.resize(depth_);
  held_.resize(depth_);
  done_.resize(depth_);
}

IoQueue::~IoQueue() = default;

Status IoQueue::refuse_if_failing() const {
  if (state_ == LinkState::kFailFast || state_ == LinkState::kDeleted) {
    return path_error_status(state_);
  }
  return ok_status();
}

Status IoQueue::submit_read(uint64_t slba, const DataSegment& dst, IoCallback cb, void* arg,
                            bool fua) {
  const TransferLimits& l = params_.limits;
  NVMF_RETURN_IF_ERROR(validate_transfer(std::span<const DataSegment>(&dst, 1), l));
  if (dst.length > l.max_command_bytes) {
    return Status::invalid_argument("Read of " + std::to_string(dst.length) +
                                    " bytes: one command moves at most " +
                                    std::to_string(l.max_command_bytes));
  }
  TransferCursor cursor;
  CommandPlan plan = next_read_command(dst, cursor, l);
  proto::Sqe sqe = read_sqe(params_.nsid, slba, plan.bytes / l.lba_size);
  if (fua) sqe.cdw12 |= proto::kRwFua;
  encode_data(sqe, plan);
  plan.num_pieces = 0;  // keyed: nothing follows the SQE
  return accept(sqe, plan, cb, arg);
}

Status IoQueue::submit_write(uint64_t slba, std::span<const DataSegment> src, IoCallback cb,
                             void* arg, bool fua) {
  const TransferLimits& l = params_.limits;
  NVMF_RETURN_IF_ERROR(validate_transfer(src, l));
  const uint64_t total = total_bytes(src);
  if (total > l.max_command_bytes) {
    return Status::invalid_argument("Write of " + std::to_string(total) +
                                    " bytes: one command moves at most " +
                                    std::to_string(l.max_command_bytes));
  }
  TransferCursor cursor;
  NVMF_ASSIGN_OR_RETURN(CommandPlan plan, next_write_command(src, cursor, l));
  if (cursor.done != total) {
    return Status::invalid_argument(
        "Write: " + std::to_string(src.size()) +
        " segments cannot go in one command (keyed: one contiguous piece; in-capsule: at most " +
        std::to_string(l.in_capsule.max_segments) + " pieces within " +
        std::to_string(l.in_capsule.max_bytes) + " bytes)");
  }
  return submit_write_command(slba, plan, cb, arg, fua);
}

Status IoQueue::submit_write_command(uint64_t slba, const CommandPlan& plan, IoCallback cb,
                                     void* arg, bool fua) {
  const TransferLimits& l = params_.limits;
  if (plan.bytes == 0 || l.lba_size == 0 || plan.bytes % l.lba_size != 0 ||
      plan.bytes > l.max_command_bytes || plan.num_pieces == 0 ||
      plan.num_pieces > kMaxInCapsuleSegments) [[unlikely]] {
    return Status::invalid_argument("Write command of " + std::to_string(plan.bytes) +
                                    " bytes in " + std::to_string(plan.num_pieces) +
                                    " pieces: not a planned command for these limits");
  }
  proto::Sqe sqe = write_sqe(params_.nsid, slba, plan.bytes / l.lba_size);
  if (fua) sqe.cdw12 |= proto::kRwFua;
  CommandPlan posted = plan;
  std::span<const Piece> pieces = encode_data(sqe, posted);
  posted.num_pieces = static_cast<uint32_t>(pieces.size());
  return accept(sqe, posted, cb, arg);
}

Status IoQueue::submit_flush(IoCallback cb, void* arg) {
  proto::Sqe sqe = flush_sqe(params_.nsid);
  encode_null_sgl(sqe.dptr);
  return accept(sqe, CommandPlan{}, cb, arg);
}

Status IoQueue::submit_write_zeroes(uint64_t slba, uint32_t nlb, IoCallback cb, void* arg) {
  if (nlb == 0 || nlb > proto::kRwNlbMask + 1) {
    return Status::invalid_argument("Write Zeroes of " + std::to_string(nlb) +
                                    " blocks: 1 to 65536");
  }
  proto::Sqe sqe = write_zeroes_sqe(params_.nsid, slba, nlb);
  encode_null_sgl(sqe.dptr);
  return accept(sqe, CommandPlan{}, cb, arg);
}

Status IoQueue::submit_deallocate(const DataSegment& ranges, uint32_t nr, IoCallback cb,
                                  void* arg) {
  if (nr == 0 || nr > proto::kDsmMaxRanges) {
    return Status::invalid_argument("Deallocate of " + std::to_string(nr) + " ranges: 1 to 256");
  }
  const uint32_t bytes = nr * static_cast<uint32_t>(sizeof(proto::DsmRange));
  if (ranges.addr == nullptr || ranges.length < bytes) {
    return Status::invalid_argument("Deallocate: " + std::to_string(nr) + " ranges need " +
                                    std::to_string(bytes) + " bytes of registered memory");
  }
  // The ranges are host-to-controller data: in-capsule when the policy takes them, else keyed
  // (the same choice as a write's).
  CommandPlan plan = plan_one_piece_write(
      params_.limits.in_capsule,
      Piece{reinterpret_cast<uint64_t>(ranges.addr), bytes, ranges.lkey, ranges.rkey});
  proto::Sqe sqe = deallocate_sqe(params_.nsid, nr);
  std::span<const Piece> pieces = encode_data(sqe, plan);
  plan.num_pieces = static_cast<uint32_t>(pieces.size());
  return accept(sqe, plan, cb, arg);
}

Status IoQueue::submit_raw(const proto::Sqe& sqe, std::span<const DataSegment> in_capsule_data,
                           IoCallback cb, void* arg) {
  if (in_capsule_data.size() > kMaxInCapsuleSegments) {
    return Status::invalid_argument("passthrough: " + std::to_string(in_capsule_data.size()) +
                                    " in-capsule segments, at most 4");
  }
  CommandPlan plan;
  plan.path = WritePath::kInCapsule;
  for (const DataSegment& d : in_capsule_data) {
    plan.pieces[plan.num_pieces++] =
        Piece{reinterpret_cast<uint64_t>(d.addr), static_cast<uint32_t>(d.length), d.lkey, d.rkey};
    plan.bytes += static_cast<uint32_t>(d.length);
  }
  return accept(sqe, plan, cb, arg, /*passthrough=*/true);
}

Status IoQueue::accept(const proto::Sqe& sqe, const CommandPlan& plan, IoCallback cb, void* arg,
                       bool passthrough) {
  if (generation_.load(std::memory_order_acquire) != seen_generation_) [[unlikely]] {
    follow_link();
  }
  NVMF_RETURN_IF_ERROR(refuse_if_failing());
  if (n_free_ == 0) {
    return Status::resource_exhausted("I/O queue: " + std::to_string(depth_) +
                                      " commands outstanding");
  }
  const uint16_t r = free_[--n_free_];
  Request& q = requests_[r];
  q.sqe = sqe;
  q.plan = plan;
  q.cb = cb;
  q.arg = arg;
  q.seq = next_seq_++;
  q.resubmissions = 0;
  q.passthrough = passthrough;
  q.abort = false;
  q.slot = kNone;
  ++stats_.submitted;
  // Behind commands already held (their order stands), or with no connection: held.
  if (n_held_ > 0 || state_ != LinkState::kLive || !channel_ || channel_->free_slots() == 0) {
    held_[(held_head_ + n_held_++) % depth_] = r;
    drain_held();
    return ok_status();
  }
  post(r);
  return ok_status();
}

bool IoQueue::post(uint16_t r) {
  Request& q = requests_[r];
  std::span<const Piece> pieces(q.plan.pieces.data(), q.plan.num_pieces);
  Result<uint16_t> slot = channel_->post(q.sqe, pieces, params_.delay_cmd_submit);
  if (!slot.ok()) [[unlikely]] {
    if (slot.status().code() == StatusCode::kInvalidArgument) {
      // This connection can never carry it (more in-capsule pieces than its SGEs): aborted,
      // not a loss.
      ++stats_.aborted;
      finish(r, kAbortedByHost, 0);
      return true;
    }
    // Not sent: held first, so that it goes out again in its place.
    held_head_ = static_cast<uint16_t>((held_head_ + depth_ - 1) % depth_);
    held_[held_head_] = r;
    ++n_held_;
    if (slot.status().code() != StatusCode::kResourceExhausted) lose_channel(slot.status());
    return false;
  }
  q.slot = *slot;
  delayed_ = params_.delay_cmd_submit;
  if (n_posted_ == 0) {
    progress_deadline_ = std::chrono::steady_clock::now() + params_.command_timeout;
  }
  posted_[n_posted_++] = r;
  return true;
}

void IoQueue::drain_held() {
  while (n_held_ > 0 && state_ == LinkState::kLive && channel_ && channel_->free_slots() > 0) {
    const uint16_t r = held_[held_head_];
    held_head_ = static_cast<uint16_t>((held_head_ + 1) % depth_);
    --n_held_;
    if (requests_[r].abort) [[unlikely]] {
      ++stats_.aborted;
      finish(r, kAbortedByHost, 0);
      continue;
    }
    if (requests_[r].resubmissions > 0) {
      ++stats_.resubmitted;
      link_.count_resubmission(params_.index);
    }
    if (!post(r)) return;
  }
}

void IoQueue::hold_posted() {
  if (n_posted_ == 0) return;
  // In submission order, ahead of what is held already (submitted after every posted one).
  std::sort(posted_.begin(), posted_.begin() + n_posted_,
            [&](uint16_t a, uint16_t b) { return requests_[a].seq < requests_[b].seq; });
  for (uint16_t i = n_posted_; i-- > 0;) {
    const uint16_t r = posted_[i];
    Request& q = requests_[r];
    q.slot = kNone;
    if (q.passthrough || q.resubmissions >= kMaxResubmissions) {
      ++stats_.aborted;
      finish(r, kAbortedByHost, 0);
      continue;
    }
    ++q.resubmissions;
    held_head_ = static_cast<uint16_t>((held_head_ + depth_ - 1) % depth_);
    held_[held_head_] = r;
    ++n_held_;
  }
  n_posted_ = 0;
}

void IoQueue::post_delayed_now() {
  delayed_ = false;
  if (!channel_) return;
  Status st = channel_->post_deferred();
  if (!st.ok()) [[unlikely]]
    lose_channel(st);
}

void IoQueue::drop_channel() {
  delayed_ = false;
  if (!channel_) return;
  link_.channel_dropped(params_.index, *channel_);
  stats_.capsules += channel_->capsule_counters();
  channel_.reset();  // rdma_disconnect, then its resources go
}

void IoQueue::take_channel(std::unique_ptr<IoChannel> channel) {
  drop_channel();
  channel_ = std::move(channel);
  ++stats_.connections;
  params_.limits.in_capsule = channel_->in_capsule_policy();
  const HostInCapsulePolicy& policy = params_.limits.in_capsule;
  for (uint16_t i = 0; i < n_held_; ++i) {
    Request& q = requests_[held_[(held_head_ + i) % depth_]];
    if (q.passthrough || q.plan.path != WritePath::kInCapsule || q.plan.num_pieces == 0 ||
        choose_write_path(policy, q.plan.bytes, q.plan.num_pieces) == WritePath::kInCapsule) {
      continue;
    }
    if (q.plan.num_pieces == 1) {
      // One piece: the target reads it (keyed SGL) instead.
      q.plan.path = WritePath::kKeyed;
      encode_data(q.sqe, q.plan);
      q.plan.num_pieces = 0;
    } else {
      q.abort = true;  // several pieces cannot go keyed (MSDBD 1): completes aborted
    }
  }
}

void IoQueue::lose_channel(const Status& why) {
  ++stats_.losses;
  hold_posted();
  drop_channel();
  if (state_ == LinkState::kLive) state_ = LinkState::kReconnecting;
  link_.report_loss(params_.index, seen_generation_, why);
}

void IoQueue::fail_held() {
  while (n_held_ > 0) {
    const uint16_t r = held_[held_head_];
    held_head_ = static_cast<uint16_t>((held_head_ + 1) % depth_);
    --n_held_;
    ++stats_.path_failures;
    finish(r, kPathError, 0);
  }
}

void IoQueue::follow_link() {
  if (closed_) {
    seen_generation_ = generation_.load(std::memory_order_acquire);  // closed stays closed
    return;
  }
  IoQueueLink::Update u = link_.update(params_.index);
  seen_generation_ = u.generation;
  if (u.channel) {
    // A new association: whatever was in flight on the old connection is void.
    hold_posted();
    take_channel(std::move(u.channel));
  } else if (u.state != LinkState::kLive && channel_) {
    // The association went down through another queue or the admin queue: this connection
    // belongs to it.
    hold_posted();
    drop_channel();
  }
  state_ = channel_ ? u.state : (u.state == LinkState::kLive ? LinkState::kReconnecting : u.state);
  if (state_ == LinkState::kFailFast || state_ == LinkState::kDeleted) {
    hold_posted();
    drop_channel();
    fail_held();
    return;
  }
  drain_held();
}

void IoQueue::close() {
  hold_posted();
  drop_channel();
  closed_ = true;  // the link's later moves are not followed
  state_ = LinkState::kDeleted;
  fail_held();
}

void IoQueue::finish(uint16_t r, uint16_t status, uint32_t dw0) {
  Request& q = requests_[r];
  q.status = status;
  q.dw0 = dw0;
  done_[(done_head_ + n_done_++) % depth_] = r;
}

int IoQueue::run_callbacks(int max) {
  int ran = 0;
  while (n_done_ > 0 && (max <= 0 || ran < max)) {
    const uint16_t r = done_[done_head_];
    done_head_ = static_cast<uint16_t>((done_head_ + 1) % depth_);
    --n_done_;
    Request& q = requests_[r];
    const IoCallback cb = q.cb;
    void* const arg = q.arg;
    const IoCompletion c{q.status, q.dw0, q.resubmissions};
    free_[n_free_++] = r;  // free before the callback: it may submit again
    ++stats_.completed;
    ++ran;
    if (cb != nullptr) cb(arg, c);
  }
  return ran;
}

Result<int> IoQueue::process_completions(int max) {
  if (generation_.load(std::memory_order_acquire) != seen_generation_) [[unlikely]] {
    follow_link();
  }
  post_delayed();
  if (channel_ && n_posted_ > 0) {
    // Until a look finds nothing: a completion queue hands out a batch at a time, and the
    // event wait() sleeps on comes only for completions that arrive after it was armed.
    int found = 0;
    Status failed;
    for (;;) {
      Result<int> n = channel_->poll_completions();
      if (!n.ok()) [[unlikely]] {
        failed = n.status();
        break;
      }
      if (*n == 0) break;
      found += *n;
    }
    if (!failed.ok()) [[unlikely]] {
      lose_channel(failed);
    } else if (found > 0) {
      idle_polls_ = 0;
      progress_deadline_ = std::chrono::steady_clock::now() + params_.command_timeout;
      for (uint16_t i = 0; i < n_posted_;) {
        const uint16_t r = posted_[i];
        const uint16_t slot = requests_[r].slot;
        if (!channel_->slot_done(slot)) {
          ++i;
          continue;
        }
        const proto::Cqe cqe = channel_->release_slot(slot);
        requests_[r].slot = kNone;
        posted_[i] = posted_[--n_posted_];
        finish(r, status_without_phase(cqe.status), cqe.dw0);
      }
      drain_held();
    } else if (++idle_polls_ >= kPollsPerClockRead) {
      idle_polls_ = 0;
      if (std::chrono::steady_clock::now() >= progress_deadline_) {
        lose_channel(Status::timeout("I/O queue: no completion within " +
                                     std::to_string(params_.command_timeout.count()) + " ms"));
      }
    }
  }
  return run_callbacks(max);
}

void IoQueue::wait(Deadline deadline, int also_fd) {
  post_delayed();
  if (n_done_ > 0) return;
  if (generation_.load(std::memory_order_acquire) != seen_generation_) return;
  if (!channel_) {
    if (also_fd < 0) {
      link_.wait_for_change(seen_generation_, deadline);
      return;
    }
    pollfd other{also_fd, POLLIN, 0};
    const Deadline recheck = std::chrono::steady_clock::now() + kLinkRecheck;
    (void)::poll(&other, 1, remaining_ms(std::min(deadline, recheck)));
    return;
  }
  if (n_posted_ > 0) deadline = std::min(deadline, progress_deadline_);
  pollfd fds[3];
  channel_->wait_fds(fds);
  if (fds[0].fd < 0) return;            // busy-polled: process_completions() looks again at once
  fds[2] = pollfd{also_fd, POLLIN, 0};  // poll() skips a negative fd
  (void)::poll(fds, 3, remaining_ms(deadline));
  Status st = channel_->after_wait(fds, n_posted_ > 0 ? progress_deadline_ : Deadline::max());
  if (!st.ok()) lose_channel(st);
}

void IoQueue::wait_fds(pollfd fds[2]) {
  post_delayed();
  if (!channel_) {
    fds[0] = pollfd{-1, POLLIN, 0};
    fds[1] = pollfd{-1, POLLIN, 0};
    return;
  }
  channel_->wait_fds(fds);
}

void IoQueue::after_wait(const pollfd fds[2]) {
  if (!channel_ || generation_.load(std::memory_order_acquire) != seen_generation_) return;
  Status st = channel_->after_wait(fds, n_posted_ > 0 ? progress_deadline_ : Deadline::max());
  if (!st.ok()) lose_channel(st);
}

}  // namespace nvmf::host
