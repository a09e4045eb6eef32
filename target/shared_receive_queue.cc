// SPDX-License-Identifier: BSD-3-Clause
// SharedReceiveQueue and its ReceiveTable.
#include "target/shared_receive_queue.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/log.h"
#include "common/verbs/work_request_id.h"

namespace nvmf::target {

constexpr uint32_t kSqeBytes = 64;

ReceiveTable::ReceiveTable(uint32_t count) : owner_(count, kNever) {}

bool ReceiveTable::posted(uint32_t index) {
  if (index >= count() || owner_[index] == kPosted) return false;
  owner_[index] = kPosted;
  posted_.add();
  return true;
}

bool ReceiveTable::consumed(uint32_t index, uint32_t qp_num) {
  if (index >= count() || owner_[index] != kPosted) return false;
  owner_[index] = qp_num;
  posted_.sub();
  if (!low_set_ || posted_.get() < low_.get()) {
    low_.set(posted_.get());
    low_set_ = true;
  }
  return true;
}

std::vector<uint32_t> ReceiveTable::held_by(uint32_t qp_num) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < count(); ++i) {
    if (owner_[i] == qp_num) out.push_back(i);
  }
  return out;
}

Result<std::unique_ptr<SharedReceiveQueue>> SharedReceiveQueue::create(ibv_pd* pd,
                                                                       const ibv_device_attr& attr,
                                                                       uint32_t depth,
                                                                       uint32_t in_capsule_bytes,
                                                                       uint32_t page_size) {
  if (attr.max_srq <= 0) return Status::unavailable("the device has no SRQ (max_srq 0)");
  const uint32_t pages = (in_capsule_bytes + page_size - 1) / page_size;
  const int sges = pages > 0 ? 2 : 1;
  if (attr.max_srq_sge < sges) {
    return Status::unavailable("the device's SRQ takes " + std::to_string(attr.max_srq_sge) +
                               " SGEs per receive, " + std::to_string(sges) + " needed");
  }
  if (attr.max_srq_wr > 0 && depth > static_cast<uint32_t>(attr.max_srq_wr)) {
    NVMF_LOG(WARN, "target") << "--max-srq-depth " << depth << " is above the device's max_srq_wr "
                             << attr.max_srq_wr << "; using " << attr.max_srq_wr;
    depth = static_cast<uint32_t>(attr.max_srq_wr);
  }
  std::unique_ptr<SharedReceiveQueue> q(new SharedReceiveQueue(depth, pages, page_size));
  const size_t sqe_bytes = (size_t{depth} * kSqeBytes + page_size - 1) / page_size * page_size;
  const size_t area = size_t{pages} * page_size;
  NVMF_ASSIGN_OR_RETURN(
      auto buffer, verbs::RegisteredBuffer::create(pd, sqe_bytes + size_t{depth} * area, page_size,
                                                   IBV_ACCESS_LOCAL_WRITE, "SRQ receive buffers"));
  q->buffer_.emplace(std::move(buffer));
  ibv_srq_init_attr init{};
  init.srq_context = q.get();
  init.attr.max_wr = depth;
  init.attr.max_sge = static_cast<uint32_t>(sges);
  q->srq_ = ibv_create_srq(pd, &init);
  if (q->srq_ == nullptr) return Status::from_errno("ibv_create_srq", errno);
  q->wrs_.assign(depth, ibv_recv_wr{});
  q->sges_.assign(size_t{depth} * 2, ibv_sge{});
  q->page_ptrs_.assign(size_t{depth} * pages, nullptr);
  for (uint32_t i = 0; i < depth; ++i) {
    ibv_sge* sge = &q->sges_[size_t{i} * 2];
    sge[0] = q->buffer_->sge(size_t{i} * kSqeBytes, kSqeBytes);
    const size_t at = sqe_bytes + size_t{i} * area;
    if (pages > 0) sge[1] = q->buffer_->sge(at, static_cast<uint32_t>(area));
    for (uint32_t p = 0; p < pages; ++p) {
      q->page_ptrs_[size_t{i} * pages + p] = q->buffer_->data() + at + size_t{p} * page_size;
    }
    q->wrs_[i].wr_id = verbs::encode_wr_id(verbs::WrKind::kRecv, i);
    q->wrs_[i].sg_list = sge;
    q->wrs_[i].num_sge = sges;
  }
  for (uint32_t i = 0; i < depth; ++i) {
    if (int err = q->repost(i); err != 0) {
      return Status::from_errno("ibv_post_srq_recv", err,
                                "receive " + std::to_string(i) + " of " + std::to_string(depth));
    }
  }
  q->counters_.depth.set(depth);
  q->counters_.posted_low.set(depth);
  q->limit_ = std::max<uint32_t>(1, depth / 8);
  q->counters_.limit.set(q->limit_);
  if (Status st = q->arm_limit(); !st.ok()) {
    // Not fatal: the receives work without it; only the early warning is lost.
    NVMF_LOG(WARN, "target") << "SRQ limit not armed: " << st.to_string();
  }
  return q;
}

SharedReceiveQueue::~SharedReceiveQueue() {
  if (srq_ != nullptr) {
    if (int err = ibv_destroy_srq(srq_); err != 0) {
      NVMF_LOG(WARN, "target") << "ibv_destroy_srq: " << errno_string(err);
    }
  }
}

Status SharedReceiveQueue::arm_limit() {
  ibv_srq_attr attr{};
  attr.srq_limit = limit_;
  if (int err = ibv_modify_srq(srq_, &attr, IBV_SRQ_LIMIT); err != 0) {
    limit_armed_ = false;
    return Status::from_errno("ibv_modify_srq(IBV_SRQ_LIMIT)", err);
  }
  limit_armed_ = true;
  return ok_status();
}

bool SharedReceiveQueue::consumed(uint32_t index, uint32_t qp_num) {
  if (!table_.consumed(index, qp_num)) return false;
  counters_.posted_now.set(table_.posted_now());
  counters_.posted_low.set(table_.posted_low());
  return true;
}

int SharedReceiveQueue::repost(uint32_t index) {
  if (index >= depth() || table_.is_posted(index)) return EINVAL;
  ibv_recv_wr* bad = nullptr;
  wrs_[index].next = nullptr;
  int err = ibv_post_srq_recv(srq_, &wrs_[index], &bad);
  if (err != 0) return err;
  table_.posted(index);
  counters_.posted_now.set(table_.posted_now());
  return 0;
}

uint32_t SharedReceiveQueue::repost_held_by(uint32_t qp_num) {
  uint32_t n = 0;
  for (uint32_t index : table_.held_by(qp_num)) {
    if (int err = repost(index); err != 0) {
      NVMF_LOG(ERROR, "target") << "ibv_post_srq_recv of receive " << index
                                << " at teardown: " << errno_string(err)
                                << "; the SRQ has one receive fewer";
      continue;
    }
    ++n;
  }
  return n;
}

void SharedReceiveQueue::limit_reached() {
  counters_.limit_events.add();
  limit_fired_.store(true, std::memory_order_relaxed);
}

bool SharedReceiveQueue::maintain() {
  if (!limit_fired_.load(std::memory_order_relaxed)) return false;
  if (table_.posted_now() <= limit_) return false;  // still low: re-arming would fire at once
  limit_fired_.store(false, std::memory_order_relaxed);
  if (Status st = arm_limit(); !st.ok()) {
    NVMF_LOG(WARN, "target") << "SRQ limit not re-armed: " << st.to_string();
  }
  return true;
}

}  // namespace nvmf::target
