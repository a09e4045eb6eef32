// SPDX-License-Identifier: BSD-3-Clause
// Raw commands on a Controller's queues; see raw_commands.h.
#include "host/raw/raw_commands.h"

#include <array>

#include "host/io_queue.h"

namespace nvmf::host {

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
  std::array<Piece, kMaxInCapsuleSegments> pieces{};
  for (size_t i = 0; i < in_capsule_data.size(); ++i) {
    const DataSegment& d = in_capsule_data[i];
    pieces[i] =
        Piece{reinterpret_cast<uint64_t>(d.addr), static_cast<uint32_t>(d.length), d.lkey, d.rkey};
  }
  return c.submit_admin_raw(sqe, std::span<const Piece>(pieces.data(), in_capsule_data.size()));
}

}  // namespace nvmf::host
