// SPDX-License-Identifier: BSD-3-Clause
// FakeQueue: slots, data phases and the per-response checks.
#include "target/testing/fake_queue.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvmf::target::testing {

using target::NextStep;

namespace {
constexpr uint32_t kPage = 4096;
}  // namespace

void require(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

FakeQueue::FakeQueue(target::Subsystem& subsystem, target::StatusCounters& statuses, uint16_t qid,
                     uint32_t queue_size, uint32_t in_capsule_bytes)
    : qid_(qid),
      in_capsule_bytes_(in_capsule_bytes),
      max_transfer_bytes_(subsystem.config().max_transfer_bytes()),
      slots_(queue_size) {
  processor_ = std::make_unique<target::CommandProcessor>(subsystem, *this, counters_, statuses,
                                                          qid, queue_size, in_capsule_bytes);
}

FakeQueue::~FakeQueue() {
  processor_->detach();  // as RdmaQueue: leave the controller before the slots go
  processor_.reset();
}

void FakeQueue::request_disconnect(std::string_view reason) {
  if (disconnect_reason_.empty()) disconnect_reason_ = reason.empty() ? "(no reason)" : reason;
}

std::string FakeQueue::describe() const { return "fake qid " + std::to_string(qid_); }

bool FakeQueue::connect_accepted() {
  require(!accepted_, "a second Connect was accepted on one queue");
  if (fail_setup_) return false;
  accepted_ = true;
  return true;
}

void FakeQueue::respond_held(target::Request& r) {
  auto it = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) { return &s.req == &r; });
  require(it != slots_.end(), "respond_held() for a request of no slot");
  require(it->busy && it->held, "respond_held() for a command that is not held");
  require(r.cqe.cid == it->cid && r.cqe.sqid == qid_,
          "a held command's CQE has the wrong CID/SQID");
  last_cqe_ = r.cqe;
  ++responses_;
  it->held = false;
  release(static_cast<uint32_t>(it - slots_.begin()));
}

std::optional<NextStep> FakeQueue::deliver(const proto::Sqe& sqe,
                                           std::span<const uint8_t> in_capsule) {
  auto usable = slots_.begin() +
                (accepted_ ? slots_.size() : std::min<size_t>(slots_.size(), kSlotsBeforeConnect));
  auto it = std::find_if(slots_.begin(), usable, [](const Slot& s) { return !s.busy; });
  if (it == usable) return std::nullopt;
  auto index = static_cast<uint32_t>(it - slots_.begin());
  Slot& s = *it;
  s.busy = true;
  s.cid = sqe.cid;
  s.sqe = std::make_unique<proto::Sqe>(sqe);
  uint32_t received = static_cast<uint32_t>(std::min<size_t>(in_capsule.size(), in_capsule_bytes_));
  s.pages.assign((in_capsule_bytes_ + kPage - 1) / kPage, std::vector<uint8_t>(kPage, 0xA5));
  s.page_ptrs.clear();
  for (auto& p : s.pages) s.page_ptrs.push_back(p.data());
  for (uint32_t i = 0; i < received; ++i) s.pages[i / kPage][i % kPage] = in_capsule[i];
  if (s.buffer.size() != max_transfer_bytes_) s.buffer.assign(max_transfer_bytes_, 0);
  s.req = target::Request{};
  s.req.sqe = s.sqe.get();
  s.req.in_capsule = target::InCapsuleArea{s.page_ptrs, kPage, received};
  s.req.buffer = s.buffer;
  return act(index, processor_->begin(s.req));
}

std::optional<NextStep> FakeQueue::complete_read(std::span<const uint8_t> data) {
  if (reads_.empty()) return std::nullopt;
  uint32_t index = reads_.front();
  reads_.erase(reads_.begin());
  Slot& s = slots_[index];
  size_t n = std::min<size_t>(data.size(), s.req.transfer_bytes);
  if (n > 0) std::memcpy(s.buffer.data(), data.data(), n);
  std::memset(s.buffer.data() + n, 0, s.req.transfer_bytes - n);
  return act(index, processor_->data_arrived(s.req));
}

std::optional<NextStep> FakeQueue::complete_read_partly(std::span<const uint8_t> data,
                                                        size_t placed) {
  if (reads_.empty()) return std::nullopt;
  uint32_t index = reads_.front();
  reads_.erase(reads_.begin());
  Slot& s = slots_[index];
  size_t n = std::min({data.size(), placed, static_cast<size_t>(s.req.transfer_bytes)});
  if (n > 0) std::memcpy(s.buffer.data(), data.data(), n);
  return act(index, processor_->data_arrived(s.req));
}

NextStep FakeQueue::act(uint32_t index, NextStep step) {
  Slot& s = slots_[index];
  const target::Request& r = s.req;
  switch (step) {
    case NextStep::kRespond:
    case NextStep::kWriteToHostThenRespond:
      require(r.cqe.cid == s.sqe->cid, "the CQE's CID is not the command's");
      require(r.cqe.sqid == qid_, "the CQE's SQID is not this queue's");
      require(r.pending == target::PendingOp::kNone, "a response while data is pending");
      if (step == NextStep::kWriteToHostThenRespond) {
        require(r.cqe.status == 0, "data sent to the host with an error status");
        require(r.transfer_bytes > 0 && r.transfer_bytes <= s.buffer.size(),
                "RDMA WRITE longer than the slot buffer");
        require(r.sgl.kind == SglKind::kKeyed && r.sgl.length >= r.transfer_bytes,
                "RDMA WRITE beyond the host's keyed SGL");
      }
      last_cqe_ = r.cqe;
      ++responses_;
      release(index);
      break;
    case NextStep::kReadFromHost:
      require(r.transfer_bytes > 0 && r.transfer_bytes <= s.buffer.size(),
              "RDMA READ longer than the slot buffer");
      require(r.sgl.kind == SglKind::kKeyed && r.sgl.length >= r.transfer_bytes,
              "RDMA READ beyond the host's keyed SGL");
      require(r.pending != target::PendingOp::kNone, "an RDMA READ with nothing to finish");
      reads_.push_back(index);
      break;
    case NextStep::kBackend:
      // The fake target's namespace is RAM, which the processor serves on the spot.
      require(false, "kBackend from a RAM namespace");
      break;
    case NextStep::kHold:
      s.held = true;
      s.sqe.reset();  // the receive is posted again: its SQE is gone
      s.pages.clear();
      s.page_ptrs.clear();
      break;
  }
  return step;
}

void FakeQueue::release(uint32_t index) {
  Slot& s = slots_[index];
  s.busy = false;
  s.sqe.reset();
  s.pages.clear();
  s.page_ptrs.clear();
}

}  // namespace nvmf::target::testing
