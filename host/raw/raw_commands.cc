// SPDX-License-Identifier: BSD-3-Clause
// Raw commands on a Controller's queues; see raw_commands.h.
#include "host/raw/raw_commands.h"

#include <array>
#include <mutex>

#include "host/io_queue.h"
#include "host/queue.h"

namespace nvmf::host {

// Controller's admin queue, for submit_raw(qid 0) (a friend of Controller).
struct RawAdminAccess {
  static Result<proto::Cqe> submit(Controller& c, proto::Sqe sqe,
                                   std::span<const DataSegment> in_capsule_data) {
    std::lock_guard<std::mutex> admin_lock(c.admin_mutex_);
    if (!c.admin_) return Status::invalid_argument("no queue 0");
    std::array<Piece, kMaxInCapsuleSegments> pieces{};
    for (size_t i = 0; i < in_capsule_data.size(); ++i) {
      const DataSegment& d = in_capsule_data[i];
      pieces[i] = Piece{reinterpret_cast<uint64_t>(d.addr), static_cast<uint32_t>(d.length), d.lkey,
                        d.rkey};
    }
    NVMF_ASSIGN_OR_RETURN(
        uint16_t slot,
        c.admin_->post(sqe, std::span<const Piece>(pieces.data(), in_capsule_data.size())));
    Result<proto::Cqe> cqe = c.admin_->wait(slot, c.admin_->deadline());
    c.nudge_admin_thread_locked();
    return cqe;
  }
};

namespace {
// submit_raw() on an I/O queue: the passthrough command's answer.
struct RawAnswer {
  bool done = false;
  IoCompletion completion;
  static void finished(void* arg, const IoCompletion& c) {
    auto* a = static_cast<RawAnswer*>(arg);
    a->done = true;
    a->completion = c;
  }
};
}  // namespace

Result<proto::Cqe> submit_raw(Controller& c, uint16_t qid, proto::Sqe sqe,
                              std::span<const DataSegment> in_capsule_data) {
  if (in_capsule_data.size() > kMaxInCapsuleSegments) {
    return Status::invalid_argument("more than 4 in-capsule segments");
  }
  if (qid >= 1) {
    if (qid > c.num_io_queues()) return Status::invalid_argument("no queue " + std::to_string(qid));
    NVMF_ASSIGN_OR_RETURN(IoQueue * q, c.io_queue(qid - 1));
    RawAnswer answer;
    NVMF_RETURN_IF_ERROR(q->submit_raw(sqe, in_capsule_data, &RawAnswer::finished, &answer));
    Status failed;  // `answer` is the callback's: its command completes before this returns
    while (!answer.done) {
      Result<int> n = q->process_completions();
      if (!n.ok() && failed.ok()) failed = n.status();
      if ((!n.ok() || *n == 0) && !answer.done) q->wait(Deadline::max());
    }
    NVMF_RETURN_IF_ERROR(failed);
    proto::Cqe cqe{};
    cqe.dw0 = answer.completion.dw0;
    cqe.sqid = qid;
    cqe.status = answer.completion.status;
    return cqe;
  }
  return RawAdminAccess::submit(c, sqe, in_capsule_data);
}

}  // namespace nvmf::host
