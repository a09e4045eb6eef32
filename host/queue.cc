// SPDX-License-Identifier: BSD-3-Clause
// The host queue engine: rdma_cm connect, buffers, post and completion matching; see queue.h.
#include "host/queue.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/inline_send.h"
#include "common/log.h"
#include "common/sgl.h"
#include "common/verbs/fd_wait.h"
#include "common/verbs/work_request_id.h"
#include "host/commands.h"

namespace nvmf::host {
namespace {

using verbs::encode_wr_id;
using verbs::WrKind;

constexpr size_t kBounceBytes = 4096;  // Identify data, the largest setup transfer
constexpr int kPollBatch = 16;

}  // namespace

int remaining_ms(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX));
}

QueueParams queue_params(const HostOptions& o, uint16_t qid, uint16_t queue_size) {
  return queue_params(o, TransportPath{o.traddr, o.trsvcid}, qid, queue_size);
}

QueueParams queue_params(const HostOptions& o, const TransportPath& path, uint16_t qid,
                         uint16_t queue_size) {
  QueueParams p;
  p.qid = qid;
  p.queue_size = queue_size;
  p.traddr = path.traddr;
  p.trsvcid = path.trsvcid;
  p.host_traddr = o.host_traddr;
  p.requested_max_inline_data = o.requested_max_inline_data;
  p.poll_mode = o.poll_mode;
  p.timeout_ms = o.timeout_ms;
  p.ack_timeout = o.ack_timeout;
  return p;
}

Queue::Queue(const QueueParams& params)
    : qid_(params.qid),
      queue_size_(params.queue_size),
      poll_mode_(params.poll_mode),
      timeout_ms_(params.timeout_ms),
      peer_(params.traddr + ":" + params.trsvcid) {}

Queue::~Queue() { disconnect(); }

Result<std::unique_ptr<Queue>> Queue::connect(const QueueParams& params,
                                              std::optional<verbs::ProtectionDomain>& pd) {
  if (params.queue_size < 2) {
    return Status::invalid_argument("queue " + std::to_string(params.qid) + ": queue size " +
                                    std::to_string(params.queue_size) + " is below 2");
  }
  std::unique_ptr<Queue> q(new Queue(params));
  std::string context = "queue " + std::to_string(params.qid) + " to " + q->peer_;
  Status st = q->resolve(params);
  if (st.ok()) st = q->create_resources(pd, params.requested_max_inline_data);
  if (st.ok()) st = q->cm_connect();
  if (!st.ok()) return std::move(st).annotate(context);
  NVMF_LOG(DEBUG, "host") << context << ": connected, max_inline_data requested "
                          << params.requested_max_inline_data << " granted "
                          << q->granted_max_inline_data() << " usable "
                          << q->usable_max_inline_data()
                          << (q->inline_fallback() ? " (fallback)" : "") << ", local ACK timeout "
                          << int{q->ack_timeout()};
  return q;
}

Status Queue::resolve(const QueueParams& params) {
  NVMF_ASSIGN_OR_RETURN(uint16_t port, verbs::parse_port(params.trsvcid));
  NVMF_ASSIGN_OR_RETURN(channel_, verbs::EventChannel::create());
  NVMF_ASSIGN_OR_RETURN(id_, verbs::CmId::create(*channel_, this));
  NVMF_RETURN_IF_ERROR(
      id_->resolve_addr(params.host_traddr, params.traddr, port, params.timeout_ms));
  NVMF_RETURN_IF_ERROR(id_->resolve_route(params.timeout_ms));
  // rdma_connect moves the QP to RTS with it (cm_connect()).
  if (params.ack_timeout != 0) NVMF_RETURN_IF_ERROR(id_->set_ack_timeout(params.ack_timeout));
  return ok_status();
}

Status Queue::create_resources(std::optional<verbs::ProtectionDomain>& pd,
                               uint32_t requested_max_inline_data) {
  ibv_context* ctx = id_->verbs();
  if (!pd.has_value()) {
    NVMF_ASSIGN_OR_RETURN(pd, verbs::ProtectionDomain::create(ctx));
  } else if (pd->context() != ctx) {
    return Status::unavailable("resolved to device " + std::string(verbs::device_name(ctx)) +
                               ", but the admin queue uses " +
                               std::string(verbs::device_name(pd->context())));
  }
  NVMF_ASSIGN_OR_RETURN(ibv_device_attr attr, verbs::query_device(ctx));
  max_qp_rd_atom_ = attr.max_qp_rd_atom;
  uint32_t nslots = queue_size_ - 1u;  // an SQ of N entries holds at most N - 1 commands
  if (poll_mode_ == PollMode::kEvent) {
    NVMF_ASSIGN_OR_RETURN(comp_channel_, verbs::CompletionChannel::create(ctx));
  }
  NVMF_ASSIGN_OR_RETURN(cq_,
                        verbs::CompletionQueue::create(ctx, static_cast<int>(nslots + queue_size_),
                                                       comp_channel_ ? &*comp_channel_ : nullptr));
  if (poll_mode_ == PollMode::kEvent) NVMF_RETURN_IF_ERROR(cq_->req_notify());
  NVMF_RETURN_IF_ERROR(register_buffers(pd->get(), nslots));
  verbs::QpConfig config;
  config.send_cq = config.recv_cq = cq_->get();
  config.max_send_wr = nslots;
  config.max_recv_wr = queue_size_;
  config.max_send_sge = std::min<uint32_t>(1 + kMaxInCapsuleSegments, attr.max_sge);
  config.max_recv_sge = 1;
  config.requested_max_inline_data = requested_max_inline_data;
  NVMF_ASSIGN_OR_RETURN(qp_, verbs::QueuePair::create(*id_, pd->get(), config));
  for (uint32_t i = 0; i < queue_size_; ++i) NVMF_RETURN_IF_ERROR(post_receive(i));
  return ok_status();
}

Status Queue::register_buffers(ibv_pd* pd, uint32_t nslots) {
  NVMF_ASSIGN_OR_RETURN(sqe_buf_, verbs::RegisteredBuffer::create(
                                      pd, size_t{nslots} * sizeof(proto::Sqe), 64, 0, "SQEs"));
  NVMF_ASSIGN_OR_RETURN(
      cqe_buf_, verbs::RegisteredBuffer::create(pd, size_t{queue_size_} * sizeof(proto::Cqe), 64,
                                                IBV_ACCESS_LOCAL_WRITE, "CQE receives"));
  // The target RDMA READs Connect data from it and RDMA WRITEs Identify data into it.
  NVMF_ASSIGN_OR_RETURN(
      bounce_buf_,
      verbs::RegisteredBuffer::create(
          pd, kBounceBytes, 4096,
          IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, "setup data"));
  slots_.emplace(static_cast<uint16_t>(nslots));
  slot_wrs_.assign(nslots, SlotWr{});
  for (uint32_t i = 0; i < nslots; ++i) {
    SlotWr& s = slot_wrs_[i];
    s.sges[0] = sqe_buf_->sge(size_t{i} * sizeof(proto::Sqe), sizeof(proto::Sqe));
    s.wr.wr_id = encode_wr_id(WrKind::kSend, i);
    s.wr.sg_list = s.sges;
    s.wr.opcode = IBV_WR_SEND;
  }
  recv_sges_.resize(queue_size_);
  recv_wrs_.assign(queue_size_, ibv_recv_wr{});
  for (uint32_t i = 0; i < queue_size_; ++i) {
    recv_sges_[i] = cqe_buf_->sge(size_t{i} * sizeof(proto::Cqe), sizeof(proto::Cqe));
    recv_wrs_[i].wr_id = encode_wr_id(WrKind::kRecv, i);
    recv_wrs_[i].sg_list = &recv_sges_[i];
    recv_wrs_[i].num_sge = 1;
  }
  return ok_status();
}

Status Queue::post_receive(uint32_t index) {
  recv_wrs_[index].next = nullptr;
  int err = qp_->post_recv(&recv_wrs_[index]);
  if (err != 0) return Status::from_errno("ibv_post_recv", err);
  return ok_status();
}

Status Queue::cm_connect() {
  proto::CmRequestPrivateData priv = cm_request_private_data(qid_, queue_size_);
  // Like the Linux host: responder_resources = the device's max_qp_rd_atom (the target RDMA
  // READs our write data), initiator_depth 0 (we never RDMA READ), retry counts 7.
  uint8_t responder = static_cast<uint8_t>(std::clamp(max_qp_rd_atom_, 1, 255));
  NVMF_RETURN_IF_ERROR(id_->connect(&priv, sizeof(priv), responder, 0, 7, 7));
  Result<verbs::CmEvent> event = channel_->get_event(timeout_ms_);
  if (!event.ok()) {
    if (event.status().code() == StatusCode::kTimeout) {
      return Status::timeout("RDMA CM connect timed out after " + std::to_string(timeout_ms_) +
                             " ms");
    }
    return event.status();
  }
  if (event->event() == RDMA_CM_EVENT_REJECTED &&
      event->status() != verbs::kIbCmRejectInvalidServiceId) {
    std::span<const uint8_t> data = event->private_data();
    return Status::rejected(cm_reject_message(data.data(), data.size(), event->status()));
  }
  NVMF_RETURN_IF_ERROR(event->expect(RDMA_CM_EVENT_ESTABLISHED));
  connected_ = true;
  // What the QP got (rdma_cm's own, or QueueParams::ack_timeout): once per connection.
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(qp_->get(), &attr, IBV_QP_TIMEOUT, &init) == 0) ack_timeout_ = attr.timeout;
  return ok_status();
}

void Queue::disconnect() {
  if (!connected_) return;
  connected_ = false;
  Status st = id_->disconnect();
  if (!st.ok()) NVMF_LOG(DEBUG, "host") << "queue " << qid_ << ": " << st.to_string();
}

Deadline Queue::deadline() const {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
}

void Queue::mark_failed(Status status) {
  if (failed_.ok()) failed_ = std::move(status);
}

Status Queue::fail(Status status) {
  mark_failed(std::move(status));
  return failed_;
}

Result<uint16_t> Queue::post(const proto::Sqe& sqe, std::span<const Piece> in_capsule, bool defer) {
  if (!failed_.ok()) return failed_;
  if (in_capsule.size() > kMaxInCapsuleSegments ||
      in_capsule.size() + 1 > qp_->granted_max_send_sge()) {
    return Status::invalid_argument(std::to_string(in_capsule.size()) +
                                    " in-capsule segments exceed the QP's send SGEs");
  }
  std::optional<uint16_t> idx = slots_->acquire();
  if (!idx) return Status::resource_exhausted("no free command slot");
  SlotWr& s = slot_wrs_[*idx];
  proto::Sqe* slot_sqe = reinterpret_cast<proto::Sqe*>(sqe_buf_->data()) + *idx;
  *slot_sqe = sqe;
  slot_sqe->cid = *idx;
  for (size_t i = 0; i < in_capsule.size(); ++i) {
    s.sges[1 + i] = {in_capsule[i].addr, in_capsule[i].length, in_capsule[i].lkey};
  }
  s.wr.num_sge = static_cast<int>(1 + in_capsule.size());
  SendMode mode = qp_->send_mode(sizeof(proto::Sqe), !in_capsule.empty());
  s.wr.send_flags = IBV_SEND_SIGNALED | send_flags_for(mode);
  s.wr.next = nullptr;
  if (defer) {
    (deferred_tail_ != nullptr ? deferred_tail_->next : deferred_head_) = &s.wr;
    deferred_tail_ = &s.wr;
  } else if (int err = qp_->post_send(&s.wr); err != 0) {
    slots_->abandon(*idx);
    return fail(Status::from_errno("ibv_post_send", err, "queue " + std::to_string(qid_)));
  }
  ++(mode == SendMode::kInline ? counters_.capsules_inline : counters_.capsules_by_reference);
  if (!in_capsule.empty()) ++counters_.capsules_with_in_capsule_data;
  return *idx;
}

Status Queue::post_deferred() {
  ibv_send_wr* head = deferred_head_;
  deferred_head_ = deferred_tail_ = nullptr;
  if (head == nullptr) return ok_status();
  ibv_send_wr* bad = nullptr;
  int err = failed_.ok() ? qp_->post_send(head, &bad) : EIO;
  if (err == 0) return ok_status();
  // Nothing from `bad` on was posted (all of it when the queue had failed already): those slots
  // are free again and the capsules are not counted.
  for (ibv_send_wr* wr = bad != nullptr ? bad : head; wr != nullptr; wr = wr->next) {
    slots_->abandon(static_cast<uint16_t>(verbs::decode_wr_id(wr->wr_id).index));
    --((wr->send_flags & IBV_SEND_INLINE) != 0 ? counters_.capsules_inline
                                               : counters_.capsules_by_reference);
    if (wr->num_sge > 1) --counters_.capsules_with_in_capsule_data;
  }
  if (!failed_.ok()) return failed_;
  return fail(Status::from_errno("ibv_post_send", err, "queue " + std::to_string(qid_)));
}

void Queue::handle_completion(const ibv_wc& wc) {
  const auto [kind, index] = verbs::decode_wr_id(wc.wr_id);
  const bool recv = kind == WrKind::kRecv;
  if (kind != WrKind::kRecv && kind != WrKind::kSend) {
    mark_failed(Status::internal("queue " + std::to_string(qid_) + ": completion with wr_id " +
                                 std::to_string(wc.wr_id) + ", which this queue never posted"));
    return;
  }
  if (wc.status != IBV_WC_SUCCESS) {
    mark_failed(Status::io("queue " + std::to_string(qid_) + ": " + (recv ? "receive" : "send") +
                           " completion error: " + ibv_wc_status_str(wc.status) +
                           " (vendor error " + std::to_string(wc.vendor_err) + ")"));
    return;
  }
  if (!recv) {
    if (!slots_->on_send_complete(static_cast<uint16_t>(index))) {
      mark_failed(Status::internal("queue " + std::to_string(qid_) +
                                   ": send completion for idle slot " + std::to_string(index)));
    }
    return;
  }
  if (wc.byte_len < sizeof(proto::Cqe)) {
    mark_failed(Status::io("queue " + std::to_string(qid_) + ": response capsule of " +
                           std::to_string(wc.byte_len) + " bytes, shorter than a CQE"));
    return;
  }
  if (index >= queue_size_) {
    mark_failed(Status::internal("queue " + std::to_string(qid_) + ": completion for receive " +
                                 std::to_string(index) + " of " + std::to_string(queue_size_)));
    return;
  }
  proto::Cqe cqe;
  std::memcpy(&cqe, cqe_buf_->data() + size_t{index} * sizeof(proto::Cqe), sizeof(cqe));
  Status st = post_receive(index);
  if (!st.ok()) mark_failed(std::move(st).annotate("queue " + std::to_string(qid_)));
  if (!slots_->on_response(cqe)) {
    mark_failed(Status::io("queue " + std::to_string(qid_) + ": response for CID " +
                           std::to_string(cqe.cid) + ", which is not in flight"));
  }
}

Status Queue::poll_once(int* found) {
  ibv_wc wcs[kPollBatch];
  int n = cq_->poll(wcs);
  if (n < 0) return fail(Status::io("queue " + std::to_string(qid_) + ": ibv_poll_cq failed"));
  for (int i = 0; i < n; ++i) handle_completion(wcs[i]);
  *found = n;
  return failed_;
}

Status Queue::check_cm_events() {
  // A target that disconnects does not break our QP (user QPs are not moved to error by the
  // kernel CM): without this, the wait would only end at the timeout, misreported as one.
  NVMF_ASSIGN_OR_RETURN(bool pending, verbs::wait_readable(channel_->fd(), 0, "poll(rdma_cm)"));
  if (!pending) return ok_status();
  Result<verbs::CmEvent> event = channel_->get_event(0);
  if (!event.ok()) {
    return event.status().code() == StatusCode::kTimeout ? ok_status() : event.status();
  }
  switch (event->event()) {
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
      drain_completions();
      return fail(Status::unavailable("queue " + std::to_string(qid_) + " to " + peer_ +
                                      ": the target disconnected (" + std::string(event->name()) +
                                      ")"));
    default:
      return ok_status();
  }
}

void Queue::drain_completions() {
  // The CQ holds only what the target sent before it disconnected: a bounded number of passes.
  int found = kPollBatch;
  while (found == kPollBatch && failed_.ok()) {
    if (!poll_once(&found).ok()) return;
  }
}

Result<int> Queue::poll_completions() {
  int found = 0;
  NVMF_RETURN_IF_ERROR(poll_once(&found));
  return found;
}

Status Queue::wait_for_work(Deadline deadline) {
  // Busy mode stays free of syscalls while it spins: it looks at the CM channel now and then.
  constexpr uint32_t kBusySpinsPerCmCheck = 1024;
  if (poll_mode_ == PollMode::kEvent || ++idle_spins_ % kBusySpinsPerCmCheck == 0) {
    NVMF_RETURN_IF_ERROR(check_cm_events());
  }
  int left = remaining_ms(deadline);
  if (left > 0 && poll_mode_ == PollMode::kEvent) {
    // Sleep on the completion channel and the CM channel together.
    pollfd fds[2] = {{comp_channel_->fd(), POLLIN, 0}, {channel_->fd(), POLLIN, 0}};
    int n = ::poll(fds, 2, left);
    if (n < 0 && errno != EINTR)
      return fail(Status::from_errno("poll(completion, rdma_cm)", errno));
    if (n != 0) {
      if (fds[0].revents != 0) NVMF_RETURN_IF_ERROR(cq_->wait_event(0).status());
      return check_cm_events();
    }
    left = remaining_ms(deadline);
  }
  if (left > 0) return ok_status();  // busy mode: spin on
  return timed_out();
}

Status Queue::timed_out() {
  return fail(Status::timeout("queue " + std::to_string(qid_) + ": no completion within " +
                              std::to_string(timeout_ms_) + " ms"));
}

void Queue::wait_fds(pollfd fds[2]) const {
  fds[0] = {comp_channel_ ? comp_channel_->fd() : -1, POLLIN, 0};
  fds[1] = {channel_->fd(), POLLIN, 0};
}

Status Queue::after_wait(const pollfd fds[2], Deadline deadline) {
  if (fds[0].revents != 0 && cq_ && comp_channel_) {
    NVMF_RETURN_IF_ERROR(cq_->wait_event(0).status());
  }
  if (fds[1].revents != 0) NVMF_RETURN_IF_ERROR(check_cm_events());
  if (remaining_ms(deadline) > 0) return ok_status();
  return timed_out();
}

Result<proto::Cqe> Queue::wait(uint16_t slot, Deadline deadline) {
  while (!slots_->done(slot)) {
    int found = 0;
    NVMF_RETURN_IF_ERROR(poll_once(&found));
    if (found == 0) {
      Status st = wait_for_work(deadline);
      if (!st.ok()) {
        // A response that arrived before the target disconnected is still the command's answer
        // (nvmet sends AUTH_Failure1 and disconnects at once).
        if (slots_->done(slot)) return slots_->release(slot);
        return st;
      }
    }
  }
  return slots_->release(slot);
}

Result<proto::Cqe> Queue::run(const proto::Sqe& sqe_in, std::span<const uint8_t> data_out,
                              std::span<uint8_t> data_in, bool allow_in_capsule) {
  if (data_out.size() > bounce_buf_->size() || data_in.size() > bounce_buf_->size()) {
    return Status::invalid_argument("setup command data larger than 4096 bytes");
  }
  proto::Sqe sqe = sqe_in;
  size_t length = data_out.empty() ? data_in.size() : data_out.size();
  Piece piece{reinterpret_cast<uint64_t>(bounce_buf_->data()), static_cast<uint32_t>(length),
              bounce_buf_->lkey(), bounce_buf_->rkey()};
  std::span<const Piece> in_capsule;
  if (!data_out.empty()) std::memcpy(bounce_buf_->data(), data_out.data(), data_out.size());
  // Data from the controller is always keyed; data to it goes where choose_write_path() says.
  CommandPlan plan = plan_one_piece_write(in_capsule_, piece);
  if (data_out.empty() || !allow_in_capsule) plan.path = WritePath::kKeyed;
  if (length == 0) {
    encode_null_sgl(sqe.dptr);
  } else {
    in_capsule = encode_data(sqe, plan);  // length <= kBounceBytes: well inside a keyed SGL
  }
  NVMF_ASSIGN_OR_RETURN(uint16_t slot, post(sqe, in_capsule));
  NVMF_ASSIGN_OR_RETURN(proto::Cqe cqe, wait(slot, deadline()));
  if (!data_in.empty()) std::memcpy(data_in.data(), bounce_buf_->data(), data_in.size());
  return cqe;
}

}  // namespace nvmf::host
