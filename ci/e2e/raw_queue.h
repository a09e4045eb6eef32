// One NVMe-oF queue spoken in raw capsules over a bare RC connection, for the tests that send
// what our host library never would: floods, short and long capsules, second Connects,
// Connects for someone else's queue, more Async Event Requests than an admin queue holds.
#ifndef NVMF_CI_E2E_RAW_QUEUE_H_
#define NVMF_CI_E2E_RAW_QUEUE_H_

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/rxe_env.h"
#include "common/sgl.h"
#include "common/status.h"
#include "common/verbs/verbs.h"
#include "host/commands.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"

namespace nvmf::e2e {

// A send buffer (capsules at any offset; registered for remote read too, so a keyed SGL may
// point into it), kRecvs CQE receives kept posted, one CQ for both.
struct RawQueue {
  static constexpr int kTimeoutMs = 30000;  // a bound against hangs, never asserted as a duration
  static constexpr uint32_t kRecvs = 64;
  static constexpr size_t kSendBytes = 64 + 8192;
  static constexpr size_t kKeyedDataOffset = 4096;  // where keyed Connect data is placed

  std::optional<verbs::EventChannel> channel;
  std::optional<verbs::CmId> id;
  std::optional<verbs::ProtectionDomain> pd;
  std::optional<verbs::CompletionQueue> cq;
  std::vector<uint8_t> send_buf = std::vector<uint8_t>(kSendBytes);
  std::vector<proto::Cqe> cqes = std::vector<proto::Cqe>(kRecvs);
  std::optional<verbs::MemoryRegion> send_mr, cqe_mr;
  std::optional<verbs::QueuePair> qp;

  // Connects `qid` with CM hsqsize `hsqsize` (hrqsize = hsqsize + 1), RNR retry forever.
  Status connect(const RxeEnv& env, uint16_t port, uint16_t hsqsize, uint16_t qid = 0) {
    NVMF_ASSIGN_OR_RETURN(channel, verbs::EventChannel::create());
    NVMF_ASSIGN_OR_RETURN(id, verbs::CmId::create(*channel));
    NVMF_RETURN_IF_ERROR(id->resolve_addr(env.host_addr, env.target_addr, port, kTimeoutMs));
    NVMF_RETURN_IF_ERROR(id->resolve_route(kTimeoutMs));
    NVMF_ASSIGN_OR_RETURN(pd, verbs::ProtectionDomain::create(id->verbs()));
    NVMF_ASSIGN_OR_RETURN(cq, verbs::CompletionQueue::create(id->verbs(), 4 * kRecvs));
    NVMF_ASSIGN_OR_RETURN(send_mr, verbs::MemoryRegion::create(pd->get(), send_buf.data(),
                                                               kSendBytes, IBV_ACCESS_REMOTE_READ));
    NVMF_ASSIGN_OR_RETURN(
        cqe_mr, verbs::MemoryRegion::create(pd->get(), cqes.data(), kRecvs * sizeof(proto::Cqe),
                                            IBV_ACCESS_LOCAL_WRITE));
    verbs::QpConfig cfg;
    cfg.send_cq = cfg.recv_cq = cq->get();
    cfg.max_send_wr = kRecvs;
    cfg.max_recv_wr = kRecvs;
    NVMF_ASSIGN_OR_RETURN(qp, verbs::QueuePair::create(*id, pd->get(), cfg));
    for (uint32_t i = 0; i < kRecvs; ++i) NVMF_RETURN_IF_ERROR(post_recv(i));
    proto::CmRequestPrivateData priv{};
    priv.recfmt = proto::kCmRecfmt0;
    priv.qid = qid;
    priv.hsqsize = hsqsize;
    priv.hrqsize = static_cast<uint16_t>(hsqsize + 1);
    NVMF_RETURN_IF_ERROR(id->connect(&priv, sizeof(priv), 1, 1, 7, 7));  // RNR retry forever
    NVMF_ASSIGN_OR_RETURN(verbs::CmEvent ev, channel->get_event(kTimeoutMs));
    return ev.expect(RDMA_CM_EVENT_ESTABLISHED);
  }
  Status post_recv(uint32_t i) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(&cqes[i]), sizeof(proto::Cqe), cqe_mr->lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = 1000 + i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    int err = qp->post_recv(&wr);
    return err == 0 ? ok_status() : Status::from_errno("ibv_post_recv", err);
  }
  // Sends send_buf[offset, offset + bytes) as one capsule.
  Status send(size_t bytes, uint64_t wr_id, size_t offset = 0) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(send_buf.data() + offset), static_cast<uint32_t>(bytes),
                send_mr->lkey()};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    int err = qp->post_send(&wr);
    return err == 0 ? ok_status() : Status::from_errno("ibv_post_send", err);
  }
  void put_sqe(const proto::Sqe& sqe, size_t offset = 0) {
    std::memcpy(send_buf.data() + offset, &sqe, sizeof(sqe));
  }
  // Sends `sqe` alone (no in-capsule data) from send_buf[offset].
  Status send_sqe(const proto::Sqe& sqe, uint64_t wr_id, size_t offset = 0) {
    put_sqe(sqe, offset);
    return send(sizeof(sqe), wr_id, offset);
  }
  // Waits for `responses` CQEs; returns them in arrival order, or the first completion error.
  Result<std::vector<proto::Cqe>> collect(size_t responses) {
    std::vector<proto::Cqe> out;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
    while (out.size() < responses) {
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::timeout("got " + std::to_string(out.size()) + " of " +
                               std::to_string(responses) + " responses");
      }
      ibv_wc wc[16];
      int n = cq->poll(wc);
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS) {
          return Status::io(std::string("completion error: ") + ibv_wc_status_str(wc[i].status));
        }
        if (wc[i].wr_id >= 1000) {
          uint32_t idx = static_cast<uint32_t>(wc[i].wr_id - 1000);
          out.push_back(cqes[idx]);
          NVMF_RETURN_IF_ERROR(post_recv(idx));
        }
      }
      if (n == 0) std::this_thread::yield();
    }
    return out;
  }
  // Builds a Connect for `qid` (SQSIZE `entries` - 1, KATO `kato_ms`) with its 1024 bytes of
  // data for `cntlid`, `subnqn`, `hostnqn`: in-capsule after the SQE at send_buf[offset], or
  // keyed (the target RDMA READs it from send_buf[kKeyedDataOffset]). Returns the capsule's
  // length to send from `offset`.
  Result<size_t> put_connect(uint16_t qid, uint16_t entries, uint16_t cntlid,
                             const std::string& subnqn, const std::string& hostnqn, bool keyed,
                             uint16_t cid, size_t offset = 0, uint32_t kato_ms = 0) {
    NVMF_ASSIGN_OR_RETURN(auto data,
                          host::connect_data(host::random_host_id(), cntlid, subnqn, hostnqn));
    proto::Sqe sqe = host::connect_sqe(qid, entries, kato_ms);
    sqe.cid = cid;
    if (keyed) {
      std::memcpy(send_buf.data() + kKeyedDataOffset, &data, sizeof(data));
      if (!encode_keyed_sgl(sqe.dptr,
                            reinterpret_cast<uintptr_t>(send_buf.data() + kKeyedDataOffset),
                            sizeof(data), send_mr->rkey())) {
        return Status::internal("keyed SGL encode failed");
      }
      put_sqe(sqe, offset);
      return sizeof(sqe);
    }
    encode_in_capsule_sgl(sqe.dptr, 0, sizeof(proto::ConnectData));
    put_sqe(sqe, offset);
    std::memcpy(send_buf.data() + offset + 64, &data, sizeof(data));
    return 64 + sizeof(proto::ConnectData);
  }
  // Admin Connect with the Connect data in-capsule; returns the CQE.
  Result<proto::Cqe> admin_connect(uint16_t entries, const std::string& subnqn,
                                   const std::string& hostnqn, uint32_t kato_ms = 0) {
    NVMF_ASSIGN_OR_RETURN(size_t len, put_connect(0, entries, proto::kAdminQueueCntlid, subnqn,
                                                  hostnqn, false, 0x7777, 0, kato_ms));
    NVMF_RETURN_IF_ERROR(send(len, 1));
    NVMF_ASSIGN_OR_RETURN(auto cqes_in, collect(1));
    return cqes_in[0];
  }
  // Sends one command without data (SGL1 made the null data block) and waits for its CQE.
  Result<proto::Cqe> command(proto::Sqe sqe, uint16_t cid) {
    sqe.cid = cid;
    encode_null_sgl(sqe.dptr);
    NVMF_RETURN_IF_ERROR(send_sqe(sqe, 2));
    NVMF_ASSIGN_OR_RETURN(auto got, collect(1));
    return got[0];
  }
  // True once the CM reports the connection gone (target teardown), within `timeout_ms`.
  bool disconnected(int timeout_ms = kTimeoutMs) {
    auto ev = channel->get_event(timeout_ms);
    return ev.ok() && ev->event() == RDMA_CM_EVENT_DISCONNECTED;
  }
};

}  // namespace nvmf::e2e

#endif  // NVMF_CI_E2E_RAW_QUEUE_H_
