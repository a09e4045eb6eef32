// SPDX-License-Identifier: BSD-3-Clause
#include "host/raw/raw_queue.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/sgl.h"
#include "common/verbs/work_request_id.h"

namespace nvmf::host {

namespace {

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

Result<std::unique_ptr<RawQueue>> RawQueue::create(const RawQueueParams& params) {
  std::unique_ptr<RawQueue> q(new RawQueue());
  q->timeout_ms_ = params.timeout_ms;
  if (params.slots != 0) q->slots_ = params.slots;
  q->repost_receives_ = params.repost_receives;
  if (params.send_slot_bytes != 0) q->send_slot_bytes_ = params.send_slot_bytes;
  const size_t data_bytes = params.data_bytes != 0 ? params.data_bytes : kDataBytes;
  if (q->send_slot_bytes_ < sizeof(proto::Sqe) || data_bytes < 8192) {
    return Status::invalid_argument("raw queue send slots under 64 bytes or data under 8 KiB");
  }
  q->slot_busy_.assign(q->slots_, false);
  uint16_t port = 0;
  {
    unsigned long v = 0;
    size_t used = 0;
    try {
      v = std::stoul(params.trsvcid, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != params.trsvcid.size() || v == 0 || v > 65535) {
      return Status::invalid_argument("trsvcid '" + params.trsvcid + "' is not a port number");
    }
    port = static_cast<uint16_t>(v);
  }
  NVMF_ASSIGN_OR_RETURN(q->channel_, verbs::EventChannel::create());
  NVMF_ASSIGN_OR_RETURN(q->id_, verbs::CmId::create(*q->channel_));
  NVMF_RETURN_IF_ERROR(
      q->id_->resolve_addr(params.host_traddr, params.traddr, port, params.timeout_ms));
  NVMF_RETURN_IF_ERROR(q->id_->resolve_route(params.timeout_ms));
  ibv_context* ctx = q->id_->verbs();
  NVMF_ASSIGN_OR_RETURN(ibv_device_attr attr, verbs::query_device(ctx));
  q->max_rd_atom_ = std::max(1, std::min(attr.max_qp_rd_atom, 255));
  NVMF_ASSIGN_OR_RETURN(q->pd_, verbs::ProtectionDomain::create(ctx));
  NVMF_ASSIGN_OR_RETURN(q->comp_channel_, verbs::CompletionChannel::create(ctx));
  NVMF_ASSIGN_OR_RETURN(q->cq_,
                        verbs::CompletionQueue::create(ctx, 4 * q->slots_, &*q->comp_channel_));
  q->send_buf_.assign(size_t{q->slots_} * q->send_slot_bytes_, 0);
  q->cqes_.assign(q->slots_, proto::Cqe{});
  q->data_.assign(data_bytes, 0);
  NVMF_ASSIGN_OR_RETURN(q->send_mr_, verbs::MemoryRegion::create(q->pd_->get(), q->send_buf_.data(),
                                                                 q->send_buf_.size(), 0));
  NVMF_ASSIGN_OR_RETURN(q->cqe_mr_, verbs::MemoryRegion::create(q->pd_->get(), q->cqes_.data(),
                                                                q->slots_ * sizeof(proto::Cqe),
                                                                IBV_ACCESS_LOCAL_WRITE));
  NVMF_ASSIGN_OR_RETURN(
      q->data_mr_, verbs::MemoryRegion::create(
                       q->pd_->get(), q->data_.data(), q->data_.size(),
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE));
  verbs::QpConfig cfg;
  cfg.send_cq = cfg.recv_cq = q->cq_->get();
  cfg.max_send_wr = q->slots_;
  cfg.max_recv_wr = q->slots_;
  cfg.requested_max_inline_data = 0;
  NVMF_ASSIGN_OR_RETURN(q->qp_, verbs::QueuePair::create(*q->id_, q->pd_->get(), cfg));
  for (uint32_t i = 0; i < q->slots_; ++i) NVMF_RETURN_IF_ERROR(q->post_recv(i));
  NVMF_RETURN_IF_ERROR(q->cq_->req_notify());
  return q;
}

RawQueue::~RawQueue() { disconnect(); }

void RawQueue::disconnect() {
  if (connected_ && !disconnected_ && id_) (void)id_->disconnect();
  connected_ = false;
}

Status RawQueue::post_recv(uint32_t index) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(&cqes_[index]), sizeof(proto::Cqe), cqe_mr_->lkey()};
  ibv_recv_wr wr{};
  wr.wr_id = verbs::encode_wr_id(verbs::WrKind::kRecv, index);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  int err = qp_->post_recv(&wr);
  return err == 0 ? ok_status() : Status::from_errno("ibv_post_recv", err);
}

Result<CmOutcome> RawQueue::connect(std::span<const uint8_t> private_data, int responder_resources,
                                    uint8_t initiator_depth) {
  if (private_data.size() > 255) {
    return Status::invalid_argument("CM private data above 255 bytes");
  }
  uint8_t rr = static_cast<uint8_t>(responder_resources < 0 ? max_rd_atom_ : responder_resources);
  NVMF_RETURN_IF_ERROR(id_->connect(private_data.data(), static_cast<uint8_t>(private_data.size()),
                                    rr, initiator_depth, 7, 7));
  NVMF_ASSIGN_OR_RETURN(verbs::CmEvent ev, channel_->get_event(timeout_ms_));
  CmOutcome out;
  out.event = std::string(ev.name());
  if (ev.event() == RDMA_CM_EVENT_ESTABLISHED) {
    out.established = true;
    connected_ = true;
    std::vector<uint8_t> pd = ev.copy_private_data();
    if (pd.size() >= sizeof(proto::CmAcceptPrivateData)) {
      proto::CmAcceptPrivateData acc;
      std::memcpy(&acc, pd.data(), sizeof(acc));
      out.crqsize = acc.crqsize;
    }
  } else if (ev.event() == RDMA_CM_EVENT_REJECTED) {
    out.rejected = true;
    std::vector<uint8_t> pd = ev.copy_private_data();
    if (pd.size() >= sizeof(proto::CmRejectPrivateData)) {
      std::memcpy(&out.reject, pd.data(), sizeof(out.reject));
      out.reject_has_nvme_data = true;
    }
  }
  return out;
}

proto::CmRequestPrivateData cm_request(uint16_t qid, uint16_t hrqsize, uint16_t hsqsize) {
  proto::CmRequestPrivateData p{};
  p.recfmt = proto::kCmRecfmt0;
  p.qid = qid;
  p.hrqsize = hrqsize;
  p.hsqsize = hsqsize;
  return p;
}

proto::ConnectData connect_data_for(const ConnectSpec& spec) {
  proto::ConnectData d{};
  std::memcpy(d.hostid, spec.hostid.data(), sizeof(d.hostid));
  d.cntlid = spec.cntlid;
  std::memcpy(d.subnqn, spec.subnqn.data(), std::min(spec.subnqn.size(), sizeof(d.subnqn)));
  std::memcpy(d.hostnqn, spec.hostnqn.data(), std::min(spec.hostnqn.size(), sizeof(d.hostnqn)));
  if (spec.subnqn_unterminated) {
    for (size_t i = spec.subnqn.size(); i < sizeof(d.subnqn); ++i) d.subnqn[i] = 'x';
  }
  if (spec.hostnqn_unterminated) {
    for (size_t i = spec.hostnqn.size(); i < sizeof(d.hostnqn); ++i) d.hostnqn[i] = 'x';
  }
  return d;
}

proto::Sqe connect_sqe_for(const ConnectSpec& spec) {
  proto::Sqe sqe{};
  auto* c = reinterpret_cast<proto::ConnectCommand*>(&sqe);
  c->opcode = proto::kOpcodeFabrics;
  c->fctype = proto::kFctypeConnect;
  c->recfmt = spec.recfmt;
  c->qid = spec.qid;
  c->sqsize = spec.sqsize;
  c->kato = spec.kato_ms;
  return sqe;
}

Result<CmOutcome> RawQueue::connect_queue(uint16_t qid, uint16_t hrqsize, uint16_t hsqsize) {
  return connect(cm_bytes(cm_request(qid, hrqsize, hsqsize)));
}

Status RawQueue::open(uint16_t qid, uint16_t hsqsize) {
  NVMF_ASSIGN_OR_RETURN(CmOutcome o,
                        connect_queue(qid, static_cast<uint16_t>(hsqsize + 1), hsqsize));
  if (o.established) return ok_status();
  std::string why = o.event;
  if (o.reject_has_nvme_data) {
    char sts[8];
    std::snprintf(sts, sizeof(sts), "%02Xh", o.reject.sts);
    why += std::string(" STS ") + sts;
  }
  return Status::rejected("queue " + std::to_string(qid) + ": " + why);
}

Status RawQueue::post_send_slot(uint32_t slot, size_t bytes) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(send_buf_.data() + slot * send_slot_bytes_),
              static_cast<uint32_t>(bytes), send_mr_->lkey()};
  ibv_send_wr wr{};
  wr.wr_id = verbs::encode_wr_id(verbs::WrKind::kSend, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  int err = qp_->post_send(&wr);
  if (err != 0) return Status::from_errno("ibv_post_send", err);
  slot_busy_[slot] = true;
  return ok_status();
}

Result<uint32_t> RawQueue::free_slot() {
  NVMF_RETURN_IF_ERROR(poll_once());
  for (uint32_t n = 0; n < slots_; ++n) {
    uint32_t slot = (next_slot_ + n) % slots_;
    if (slot_busy_[slot]) continue;
    next_slot_ = (slot + 1) % slots_;
    return slot;
  }
  return Status::resource_exhausted("every send slot is in flight");
}

Status RawQueue::send_truncated(const proto::Sqe& sqe, size_t bytes) {
  if (!failed_.ok()) return failed_;
  if (bytes > send_slot_bytes_) return Status::invalid_argument("capsule above the send slot");
  NVMF_ASSIGN_OR_RETURN(uint32_t slot, free_slot());
  uint8_t* p = send_buf_.data() + slot * send_slot_bytes_;
  std::memset(p, 0, std::max<size_t>(bytes, sizeof(sqe)));
  std::memcpy(p, &sqe, sizeof(sqe));
  return post_send_slot(slot, bytes);
}

Status RawQueue::send(const proto::Sqe& sqe, std::span<const uint8_t> data) {
  if (!failed_.ok()) return failed_;
  if (sizeof(sqe) + data.size() > send_slot_bytes_) {
    return Status::invalid_argument("capsule above the send slot");
  }
  NVMF_ASSIGN_OR_RETURN(uint32_t slot, free_slot());
  uint8_t* p = send_buf_.data() + slot * send_slot_bytes_;
  std::memcpy(p, &sqe, sizeof(sqe));
  if (!data.empty()) std::memcpy(p + sizeof(sqe), data.data(), data.size());
  return post_send_slot(slot, sizeof(sqe) + data.size());
}

Status RawQueue::send_connect(const ConnectSpec& spec, bool in_capsule, uint16_t cid) {
  proto::ConnectData d = connect_data_for(spec);
  proto::Sqe sqe = connect_sqe_for(spec);
  sqe.cid = cid;
  if (in_capsule) {
    sqe.flags = static_cast<uint8_t>((sqe.flags & ~proto::kFlagsPsdtMask) | proto::kFlagsPsdtSgl);
    encode_in_capsule_sgl(sqe.dptr, 0, sizeof(d));
    return send(sqe, {reinterpret_cast<const uint8_t*>(&d), sizeof(d)});
  }
  std::memcpy(data_.data() + connect_data_offset(), &d, sizeof(d));
  set_keyed(sqe, connect_data_offset(), spec.data_length);
  return send(sqe);
}

Result<proto::Cqe> RawQueue::run_connect(const ConnectSpec& spec, bool in_capsule, int timeout_ms) {
  uint16_t cid = next_cid_++;
  if (next_cid_ == 0xFFFF) next_cid_ = 1;
  NVMF_RETURN_IF_ERROR(send_connect(spec, in_capsule, cid));
  NVMF_ASSIGN_OR_RETURN(proto::Cqe c, next_cqe(timeout_ms));
  if (c.cid != cid) {
    return Status::io("CQE for CID " + std::to_string(c.cid) + ", expected " + std::to_string(cid));
  }
  return c;
}

void RawQueue::check_cm() {
  if (disconnected_) return;
  auto ev = channel_->get_event(0);
  if (ev.ok() &&
      (ev->event() == RDMA_CM_EVENT_DISCONNECTED || ev->event() == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
       ev->event() == RDMA_CM_EVENT_DEVICE_REMOVAL)) {
    disconnected_ = true;
  }
}

RawCompletion classify_raw_completion(uint64_t wr_id, uint32_t slots) {
  const verbs::WrId id = verbs::decode_wr_id(wr_id);
  if (id.index >= slots) return RawCompletion::kForeign;
  if (id.kind == verbs::WrKind::kSend) return RawCompletion::kSend;
  if (id.kind == verbs::WrKind::kRecv) return RawCompletion::kRecv;
  return RawCompletion::kForeign;
}

Status RawQueue::poll_once() {
  ibv_wc wc[16];
  int n = cq_->poll(wc);
  if (n < 0) return failed_ = Status::io("ibv_poll_cq failed");
  for (int i = 0; i < n; ++i) {
    const RawCompletion kind = classify_raw_completion(wc[i].wr_id, slots_);
    const uint32_t index = verbs::decode_wr_id(wc[i].wr_id).index;
    if (kind == RawCompletion::kForeign) {
      if (failed_.ok()) {
        failed_ = Status::internal("completion with wr_id " + std::to_string(wc[i].wr_id) +
                                   ", which this queue never posted");
      }
      continue;
    }
    if (kind == RawCompletion::kSend) slot_busy_[index] = false;
    if (wc[i].status != IBV_WC_SUCCESS) {
      if (failed_.ok()) {
        failed_ =
            Status::io(std::string("work completion error: ") + ibv_wc_status_str(wc[i].status));
      }
      continue;
    }
    if (kind != RawCompletion::kRecv) continue;
    pending_.push_back(cqes_[index]);
    if (!repost_receives_) continue;
    Status s = post_recv(index);
    if (!s.ok() && failed_.ok()) failed_ = s;
  }
  return ok_status();
}

Result<proto::Cqe> RawQueue::next_cqe(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    NVMF_RETURN_IF_ERROR(poll_once());
    if (!pending_.empty()) {
      proto::Cqe c = pending_.front();
      pending_.erase(pending_.begin());
      return c;
    }
    if (!failed_.ok()) return failed_;
    const bool was_disconnected = disconnected_;
    check_cm();
    if (disconnected_) {
      // A response that arrived before the disconnect is delivered first.
      if (!was_disconnected) continue;
      return Status::unavailable("the target disconnected");
    }
    int left = remaining_ms(deadline);
    if (left == 0)
      return Status::timeout("no response within " + std::to_string(timeout_ms) + " ms");
    auto got = cq_->wait_event(std::min(left, 20));
    if (!got.ok()) return got.status();
  }
}

Result<proto::Cqe> RawQueue::run(proto::Sqe sqe, std::span<const uint8_t> data, int timeout_ms) {
  uint16_t cid = next_cid_++;
  if (next_cid_ == 0xFFFF) next_cid_ = 1;
  sqe.cid = cid;
  NVMF_RETURN_IF_ERROR(send(sqe, data));
  NVMF_ASSIGN_OR_RETURN(proto::Cqe c, next_cqe(timeout_ms));
  if (c.cid != cid) {
    return Status::io("CQE for CID " + std::to_string(c.cid) + ", expected " + std::to_string(cid));
  }
  return c;
}

bool RawQueue::wait_disconnected(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!disconnected_) {
    (void)poll_once();
    int left = remaining_ms(deadline);
    auto ev = channel_->get_event(std::min(left, 50));
    if (ev.ok() &&
        (ev->event() == RDMA_CM_EVENT_DISCONNECTED || ev->event() == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
         ev->event() == RDMA_CM_EVENT_DEVICE_REMOVAL)) {
      disconnected_ = true;
    }
    if (left == 0) break;
  }
  return disconnected_;
}

void RawQueue::set_keyed(proto::Sqe& sqe, size_t offset, uint32_t length) const {
  sqe.flags = static_cast<uint8_t>((sqe.flags & ~proto::kFlagsPsdtMask) | proto::kFlagsPsdtSgl);
  (void)encode_keyed_sgl(sqe.dptr, data_addr(offset), length, rkey());
}

}  // namespace nvmf::host
