// SPDX-License-Identifier: BSD-3-Clause
// QueuePair creation with the inline-send fallback, and its destroy path.
#include "common/verbs/queue_pair.h"

#include <cerrno>
#include <string>

#include "common/log.h"
#include "common/verbs/device.h"

namespace nvmf::verbs {

ibv_qp_init_attr make_qp_init_attr(const QpConfig& config, uint32_t max_inline_data) {
  ibv_qp_init_attr attr{};
  attr.qp_context = config.qp_context;
  attr.send_cq = config.send_cq;
  attr.recv_cq = config.recv_cq;
  attr.srq = config.srq;
  attr.cap.max_send_wr = config.max_send_wr;
  attr.cap.max_recv_wr = config.max_recv_wr;
  attr.cap.max_send_sge = config.max_send_sge;
  attr.cap.max_recv_sge = config.max_recv_sge;
  attr.cap.max_inline_data = max_inline_data;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = config.sq_sig_all ? 1 : 0;
  return attr;
}

namespace {

QpCaps caps_of(const ibv_qp_init_attr& attr) {
  return QpCaps{attr.cap.max_send_wr, attr.cap.max_recv_wr, attr.cap.max_send_sge,
                attr.cap.max_recv_sge, attr.cap.max_inline_data};
}

std::string describe(const ibv_qp_init_attr& attr, std::string_view device_name) {
  return std::string(device_name) + ", max_send_wr " + std::to_string(attr.cap.max_send_wr) +
         ", max_recv_wr " + std::to_string(attr.cap.max_recv_wr) + ", max_send_sge " +
         std::to_string(attr.cap.max_send_sge) + ", max_recv_sge " +
         std::to_string(attr.cap.max_recv_sge) + ", max_inline_data " +
         std::to_string(attr.cap.max_inline_data);
}

}  // namespace

Result<QpCreation> create_qp_with_inline_fallback(const QpConfig& config,
                                                  std::string_view device_name,
                                                  const QpCreateFn& create) {
  QpCreation out;
  out.requested_max_inline_data = config.requested_max_inline_data;
  ibv_qp_init_attr attr = make_qp_init_attr(config, config.requested_max_inline_data);
  const int first = create(attr);
  if (first == 0) {
    out.granted = caps_of(attr);
    return out;
  }
  // Describe what was asked: librdmacm copies the attributes back even when create fails.
  if (config.requested_max_inline_data == 0) {
    return Status::from_errno("rdma_create_qp", first,
                              describe(make_qp_init_attr(config, 0), device_name));
  }
  // Once more without inline send. The WARN only when that worked: when it fails too, the
  // cause was not inline send (a CM id whose peer left gives EINVAL to both), and the error
  // returned names both attempts.
  attr = make_qp_init_attr(config, 0);
  const int second = create(attr);
  if (second != 0) {
    return Status::from_errno("rdma_create_qp", second,
                              describe(make_qp_init_attr(config, 0), device_name) +
                                  "; first attempt with max_inline_data " +
                                  std::to_string(config.requested_max_inline_data) +
                                  " failed with errno " + std::to_string(first));
  }
  NVMF_LOG(WARN, "verbs") << "rdma_create_qp on " << device_name << " with max_inline_data "
                          << config.requested_max_inline_data << " failed: " << errno_string(first)
                          << " (errno " << first
                          << "); retried without inline send (max_inline_data 0): created";
  out.granted = caps_of(attr);
  out.inline_fallback = true;
  out.first_errno = first;
  return out;
}

Result<QueuePair> QueuePair::create(CmId& id, ibv_pd* pd, const QpConfig& config) {
  rdma_cm_id* raw = id.get();
  if (raw == nullptr || raw->verbs == nullptr) {
    return Status::invalid_argument("rdma_create_qp: the CM id has no device yet (resolve first)");
  }
  if (raw->qp != nullptr) return Status::invalid_argument("rdma_create_qp: the CM id has a QP");
  if (pd == nullptr || config.send_cq == nullptr || config.recv_cq == nullptr) {
    return Status::invalid_argument("rdma_create_qp: PD, send CQ and receive CQ are required");
  }
  const auto create = [raw, pd](ibv_qp_init_attr& attr) {
    return rdma_create_qp(raw, pd, &attr) == 0 ? 0 : (errno != 0 ? errno : EINVAL);
  };
  NVMF_ASSIGN_OR_RETURN(const QpCreation creation,
                        create_qp_with_inline_fallback(config, device_name(raw->verbs), create));
  return QueuePair(raw, creation);
}

QueuePair::~QueuePair() { destroy(); }

QueuePair::QueuePair(QueuePair&& other) noexcept
    : id_(other.id_), qp_(other.qp_), creation_(other.creation_) {
  other.id_ = nullptr;
  other.qp_ = nullptr;
}

QueuePair& QueuePair::operator=(QueuePair&& other) noexcept {
  if (this != &other) {
    destroy();
    id_ = other.id_;
    qp_ = other.qp_;
    creation_ = other.creation_;
    other.id_ = nullptr;
    other.qp_ = nullptr;
  }
  return *this;
}

void QueuePair::destroy() {
  if (id_ == nullptr) return;
  rdma_destroy_qp(id_);  // Sets id->qp = nullptr, which the CmId destructor checks.
  id_ = nullptr;
  qp_ = nullptr;
}

}  // namespace nvmf::verbs
