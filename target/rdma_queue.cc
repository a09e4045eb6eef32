// SPDX-License-Identifier: BSD-3-Clause
// RdmaQueue: buffers, work requests and the completion handling of one queue.
#include "target/rdma_queue.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/in_capsule.h"
#include "common/inline_send.h"
#include "common/log.h"
#include "common/verbs/work_request_id.h"
#include "proto/rdma_cm.h"
#include "target/log_limiter.h"

namespace nvmf::target {
namespace {

using verbs::encode_wr_id;
using verbs::WrKind;

// Command slots made before a Connect is accepted: one receive is posted then, so a slot for its
// capsule and one for the next capsule while the first one's response is still being sent.
constexpr uint32_t kSlotsBeforeConnect = 2;
constexpr uint32_t kSqeBytes = sizeof(proto::Sqe);
constexpr uint32_t kCqeBytes = sizeof(proto::Cqe);
constexpr uint32_t kNoReceive = RequestPipeline::kNoReceive;

// Stall WARNs of all queues: at most 8 lines a second (many queues of one host stall together).
LogLimiter& stall_log_limiter() {
  static LogLimiter limiter(std::chrono::seconds(1), 8);
  return limiter;
}

PipelineParams pipeline_params(const RdmaQueueParams& p) {
  PipelineParams pp;
  pp.queue_size = p.queue_size;
  pp.slot_count = p.queue_size + p.held_slots;
  pp.page_size = p.page_size;
  pp.shared_receives = p.srq != nullptr;
  return pp;
}

}  // namespace

RdmaQueue::RdmaQueue(verbs::CmId id, DeviceContext& dev, const RdmaQueueParams& params,
                     Subsystem& subsystem, StatusCounters& statuses)
    : dev_(dev),
      srq_(params.srq),
      params_(params),
      subsystem_(subsystem),
      statuses_(statuses),
      pages_per_recv_(in_capsule_recv_sges(params.in_capsule_bytes, params.page_size) - 1),
      id_(std::move(id)),
      idle_(std::chrono::milliseconds(params.stall_warn_ms)),
      transfer_watch_(std::chrono::milliseconds(params.stall_warn_ms)),
      pipeline_(*this, counters_, pipeline_params(params)) {}

Result<std::unique_ptr<RdmaQueue>> RdmaQueue::create(verbs::CmId& id, DeviceContext& dev,
                                                     const RdmaQueueParams& params,
                                                     Subsystem& subsystem,
                                                     StatusCounters& statuses) {
  std::unique_ptr<RdmaQueue> q(new RdmaQueue(std::move(id), dev, params, subsystem, statuses));
  Status st = q->setup();
  if (!st.ok()) {
    q->qp_.reset();  // the id must carry no QP when handed back
    id = std::move(q->id_);
    return st;
  }
  q->id_.set_context(q.get());
  return q;
}

RdmaQueue::~RdmaQueue() {
  // Whatever completes from here on finds a queue being torn down: handle() drops it (and gives
  // an SRQ receive straight back).
  if (disconnect_reason_.empty()) disconnect_reason_ = "queue destroyed";
  processor_.reset();
  account(-mr_bytes_, -mrs_, -posted_receives_);
  subsystem_.registry().remove_queue(&counters_);
  auto drain = [this] {
    if (dev_.drain) dev_.drain();
  };
  if (qp_) {
    // The QP takes no more receives once in error and its posted work requests complete
    // (flushed). The shared CQs are polled dry before and after the QP is destroyed (a provider
    // may still be completing, or complete the rest at destruction): after that no completion
    // of this QP is left anywhere, so its number may be reused and its queue forgotten.
    stop_qp();
    drain();
    qp_.reset();
  }
  drain();  // also after a failed setup(), whose QP was destroyed there
  if (in_qps_) dev_.qps.erase(qp_num_);
  // The QP is gone: no RDMA may touch a chunk once another queue can have it. Every chunk goes
  // back, and every SRQ receive this queue still holds (commands it was executing, capsules
  // parked with their in-capsule data when it was never asked to disconnect).
  pipeline_.release_all();
  if (srq_ != nullptr && in_qps_) srq_->repost_held_by(qp_num_);
  if (cq_ != nullptr) leave_shared_cq(dev_, *cq_, cq_need_, subsystem_.registry());
}

Status RdmaQueue::setup() {
  accepted_at_ = std::chrono::steady_clock::now();
  slot_count_ = params_.queue_size + params_.held_slots;
  NVMF_RETURN_IF_ERROR(allocate_buffers());
  NVMF_RETURN_IF_ERROR(join_shared_cq());
  NVMF_RETURN_IF_ERROR(create_qp());
  // From here its completions can arrive: the event loop finds the queue by its QP number.
  dev_.qps[qp_num_] = this;
  in_qps_ = true;
  dev_.touched.reserve(dev_.qps.size());  // so that mark-as-touched never allocates
  build_work_requests();
  // One receive is posted without an SRQ, and a second capsule waits in RNR retry; with one,
  // the second is held (it has the second pre-Connect slot); a third tears the queue down.
  pipeline_.set_capsule_limit(
      srq_ != nullptr ? std::min(kSlotsBeforeConnect, params_.queue_size) : 1, false);
  if (srq_ == nullptr) {
    if (!post_receive(0)) return Status::io("ibv_post_recv failed while posting the first receive");
    account(0, 0, 1);
  }
  processor_.emplace(subsystem_, *this, counters_, statuses_, params_.qid, params_.queue_size,
                     params_.in_capsule_bytes);
  processor_->set_port(params_.port);
  processor_->set_engine(params_.engine);
  pipeline_.set_processor(&*processor_);
  return ok_status();
}

Status RdmaQueue::join_shared_cq() {
  const int need = shared_cq_need(2 * slot_count_, params_.queue_size, srq_ != nullptr);
  NVMF_ASSIGN_OR_RETURN(cq_, target::join_shared_cq(dev_, need, subsystem_.registry()));
  cq_need_ = need;
  return ok_status();
}

Status RdmaQueue::allocate_buffers() {
  const size_t n = params_.queue_size;
  const int access = IBV_ACCESS_LOCAL_WRITE;
  ibv_pd* pd = dev_.pd.get();
  size_t sqe_bytes = 0;
  if (srq_ != nullptr) {
    if (srq_->pages_per_recv() < pages_per_recv_ || srq_->page_size() != params_.page_size) {
      return Status::internal("the SRQ's receives hold " +
                              std::to_string(srq_->in_capsule_bytes()) +
                              " bytes of in-capsule data, the port's queues need " +
                              std::to_string(size_t{pages_per_recv_} * params_.page_size));
    }
  } else {
    sqe_bytes = n * kSqeBytes;
    NVMF_ASSIGN_OR_RETURN(
        sqe_buf_, verbs::RegisteredBuffer::create(pd, sqe_bytes, 64, access, "SQE buffers"));
  }
  // Receive 0's pages (not with an SRQ) and the Connect data page: a Connect needs no more.
  size_t first_bytes = (size_t{srq_ != nullptr ? 0 : pages_per_recv_} + 1) * params_.page_size;
  NVMF_ASSIGN_OR_RETURN(
      first_buf_,
      verbs::RegisteredBuffer::create(pd, first_bytes, params_.page_size, access, "first receive"));
  const size_t slots = slot_count_;
  NVMF_ASSIGN_OR_RETURN(
      cqe_buf_, verbs::RegisteredBuffer::create(pd, slots * kCqeBytes, 64, access, "CQE buffers"));
  account(static_cast<int64_t>(sqe_bytes + first_bytes + slots * kCqeBytes),
          srq_ != nullptr ? 2 : 3, 0);
  return ok_status();
}

void RdmaQueue::account(int64_t mr_bytes, int64_t mrs, int64_t posted_receives) {
  if (mr_bytes == 0 && mrs == 0 && posted_receives == 0) return;
  mr_bytes_ += mr_bytes;
  mrs_ += mrs;
  posted_receives_ += posted_receives;
  subsystem_.registry().add_resources(mr_bytes, mrs, posted_receives);
}

Status RdmaQueue::create_qp() {
  verbs::QpConfig config;
  config.send_cq = cq_->cq.get();
  config.recv_cq = cq_->cq.get();
  config.max_send_wr = 2 * slot_count_;  // per slot: READ or WRITE, then SEND
  config.max_recv_wr = srq_ != nullptr ? 0 : params_.queue_size;
  config.max_send_sge = 1;
  config.max_recv_sge = srq_ != nullptr ? 0 : 1 + pages_per_recv_;
  config.srq = srq_ != nullptr ? srq_->get() : nullptr;
  config.requested_max_inline_data = params_.requested_max_inline_data;
  NVMF_ASSIGN_OR_RETURN(auto qp, verbs::QueuePair::create(id_, dev_.pd.get(), config));
  qp_.emplace(std::move(qp));
  qp_num_ = qp_->qp_num();
  pipeline_.set_send_queue_depth(config.max_send_wr);
  return ok_status();
}

void RdmaQueue::build_work_requests() {
  const uint32_t n = params_.queue_size;
  const uint32_t sges = 1 + pages_per_recv_;
  uint8_t* connect_page = first_buf_->data();
  if (srq_ == nullptr) {
    recv_wrs_.assign(n, ibv_recv_wr{});
    recv_sges_.assign(static_cast<size_t>(n) * sges, ibv_sge{});
    recv_pages_.assign(static_cast<size_t>(n) * pages_per_recv_, nullptr);
    for (uint32_t i = 0; i < n; ++i) {
      ibv_sge* sge = &recv_sges_[static_cast<size_t>(i) * sges];
      sge[0] = sqe_buf_->sge(size_t{i} * kSqeBytes, kSqeBytes);
      recv_wrs_[i].wr_id = encode_wr_id(WrKind::kRecv, i);
      recv_wrs_[i].sg_list = sge;
      recv_wrs_[i].num_sge = static_cast<int>(sges);
    }
    // Receive 0's pages; the others get theirs in connect_accepted().
    for (uint32_t p = 0; p < pages_per_recv_; ++p) {
      const size_t offset = static_cast<size_t>(p) * params_.page_size;
      recv_pages_[p] = first_buf_->data() + offset;
      recv_sges_[1 + p] = first_buf_->sge(offset, params_.page_size);
    }
    connect_page = first_buf_->data() + static_cast<size_t>(pages_per_recv_) * params_.page_size;
  }
  // Room for every slot now (a slot's address never changes: WRs and held requests point into
  // it), but only the few a queue without a Connect can use are made.
  wrs_.reserve(slot_count_);
  for (uint32_t s = 0; s < std::min(kSlotsBeforeConnect, slot_count_); ++s) {
    add_slot(connect_page, params_.page_size, first_buf_->lkey());
  }
}

void RdmaQueue::add_slot(uint8_t* buffer, uint32_t bytes, uint32_t lkey) {
  const uint32_t index = pipeline_.add_slot({buffer, bytes});
  SlotWrs& w = wrs_.emplace_back();  // within the reserved room: no WR moves
  w.data_sge = {reinterpret_cast<uintptr_t>(buffer), 0, lkey};
  w.cqe_sge = cqe_buf_->sge(size_t{index} * kCqeBytes, kCqeBytes);
  w.data_wr.sg_list = &w.data_sge;
  w.data_wr.num_sge = 1;
  w.send_wr.sg_list = &w.cqe_sge;
  w.send_wr.num_sge = 1;
  w.send_wr.wr_id = encode_wr_id(WrKind::kSend, index);
}

bool RdmaQueue::connect_accepted() {
  if (grown_) return true;
  const size_t n = params_.queue_size;
  const int access = IBV_ACCESS_LOCAL_WRITE;
  ibv_pd* pd = dev_.pd.get();
  size_t page_bytes = 0;  // registered in page_buf_
  auto fail_setup = [this, &page_bytes](const Status& st) {
    if (uint64_t suppressed = 0; refusal_log_limiter().allow(
            "queue setup failed", std::chrono::steady_clock::now(), &suppressed)) {
      NVMF_LOG(WARN, "target") << describe()
                               << ": setting up the queue after its Connect: " << st.to_string()
                               << suppressed_note(suppressed);
    }
    if (page_buf_) account(-static_cast<int64_t>(page_bytes), -1, 0);
    page_buf_.reset();
    data_buf_.reset();
    return false;
  };
  const uint32_t sges = 1 + pages_per_recv_;
  if (params_.shared_buffers > 0 && dev_.pool == nullptr) {
    auto pool = BufferPool::create(pd, params_.shared_buffers, params_.max_transfer_bytes,
                                   params_.buffer_gauges != nullptr
                                       ? params_.buffer_gauges
                                       : &subsystem_.registry().shared_buffers());
    if (!pool.ok()) return fail_setup(pool.status());
    dev_.pool = std::move(*pool);
    // The device's pool stays registered for the target's life: counted once, never given back.
    subsystem_.registry().add_resources(
        static_cast<int64_t>(size_t{params_.shared_buffers} * params_.max_transfer_bytes), 1, 0);
    NVMF_LOG(INFO, "target") << "shared data buffers: " << params_.shared_buffers << " x "
                             << params_.max_transfer_bytes << " bytes registered";
    // And as an io_uring fixed buffer (--uring-fixedbufs; a no-op otherwise). This runs on the
    // queue's poll group thread, the one issuer of its engine's ring.
    if (params_.engine != nullptr) {
      (void)params_.engine->register_memory(dev_.pool->data(), dev_.pool->registered_bytes());
    }
  }
  BufferPool* pool = params_.shared_buffers > 0 && dev_.pool != nullptr &&
                             dev_.pool->chunks().chunk_bytes() >= params_.max_transfer_bytes
                         ? dev_.pool.get()
                         : nullptr;
  pipeline_.set_capsule_limit(params_.queue_size, true);
  if (srq_ == nullptr && pages_per_recv_ > 0 && n > 1) {
    size_t bytes = (n - 1) * pages_per_recv_ * params_.page_size;
    auto pages =
        verbs::RegisteredBuffer::create(pd, bytes, params_.page_size, access, "in-capsule pages");
    if (!pages.ok()) return fail_setup(pages.status());
    page_buf_.emplace(std::move(*pages));
    page_bytes = bytes;
    account(static_cast<int64_t>(bytes), 1, 0);
    for (uint32_t i = 1; i < n; ++i) {
      for (uint32_t p = 0; p < pages_per_recv_; ++p) {
        const size_t offset =
            ((static_cast<size_t>(i) - 1) * pages_per_recv_ + p) * params_.page_size;
        recv_pages_[static_cast<size_t>(i) * pages_per_recv_ + p] = page_buf_->data() + offset;
        recv_sges_[static_cast<size_t>(i) * sges + 1 + p] =
            page_buf_->sge(offset, params_.page_size);
      }
    }
  }
  const size_t made = wrs_.size();
  if (pool != nullptr) {
    // No buffer of its own: a slot's data SGE points at its chunk when its work is posted.
    for (uint32_t index = 0; index < slot_count_; ++index) {
      if (index >= made) add_slot(nullptr, 0, pool->lkey());
      pipeline_.set_buffer(index, {});
      wrs_[index].data_sge = {0, 0, pool->lkey()};
    }
    pool_ = pool;
    pipeline_.use_pool(&pool->chunks());
    grown_ = true;
    if (srq_ != nullptr) return true;
    uint32_t posted = 0;
    for (uint32_t i = 1; i < n; ++i) {
      if (!post_receive(i)) break;  // fail() already asked for teardown
      ++posted;
    }
    account(0, 0, posted);
    return posted + 1 == n;
  }
  size_t data_bytes = size_t{slot_count_} * params_.max_transfer_bytes;
  auto data = verbs::RegisteredBuffer::create(pd, data_bytes, 4096, access, "data buffers");
  if (!data.ok()) return fail_setup(data.status());
  data_buf_.emplace(std::move(*data));
  account(static_cast<int64_t>(data_bytes), 1, 0);
  // The Connect's own slot is finished with the Connect page (its data was copied out), and no
  // other slot can be moving data: only a Connect does before this point. The remaining slots
  // are made in the room reserved for them (no reallocation: the existing ones stay put).
  for (uint32_t index = 0; index < slot_count_; ++index) {
    uint8_t* buf = data_buf_->data() + static_cast<size_t>(index) * params_.max_transfer_bytes;
    if (index < made) {
      pipeline_.set_buffer(index, {buf, params_.max_transfer_bytes});
      wrs_[index].data_sge = {reinterpret_cast<uintptr_t>(buf), 0, data_buf_->lkey()};
    } else {
      add_slot(buf, params_.max_transfer_bytes, data_buf_->lkey());
    }
  }
  grown_ = true;
  if (srq_ != nullptr) return true;
  uint32_t posted = 0;
  for (uint32_t i = 1; i < n; ++i) {
    if (!post_receive(i)) break;  // fail() already asked for teardown
    ++posted;
  }
  account(0, 0, posted);
  return posted + 1 == n;
}

const proto::Sqe* RdmaQueue::capsule_sqe(uint32_t recv) {
  if (srq_ != nullptr) return reinterpret_cast<const proto::Sqe*>(srq_->sqe(recv));
  return reinterpret_cast<const proto::Sqe*>(sqe_buf_->data() + size_t{recv} * kSqeBytes);
}

std::span<uint8_t* const> RdmaQueue::capsule_pages(uint32_t recv) {
  if (srq_ != nullptr) return {srq_->pages(recv), pages_per_recv_};
  return {recv_pages_.data() + static_cast<size_t>(recv) * pages_per_recv_, pages_per_recv_};
}

bool RdmaQueue::repost_receive(uint32_t recv) {
  if (srq_ == nullptr) return post_receive(recv);
  if (int err = srq_->repost(recv); err != 0) {
    fail("ibv_post_srq_recv of receive " + std::to_string(recv) + ": " + errno_string(err));
    return false;
  }
  return true;
}

void RdmaQueue::parked_receives_changed(int32_t delta) {
  if (srq_ != nullptr) srq_->parked_changed(delta);
}

void RdmaQueue::response_ready() {
  // A successful Connect's response (and, for a host with a DH-HMAC-CHAP key, the response that
  // completed its authentication): the queue stops pending now, before the host can see the CQE
  // and open its next connection (the listener's limit is exact). A queue still authenticating
  // counts against the pending limits, so a host cannot open queues it never authenticates
  // beyond them.
  if (pending_.held() && connected() && !awaiting_authentication()) pending_.release();
}

void RdmaQueue::stop_qp() {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  (void)ibv_modify_qp(qp_->get(), &attr, IBV_QP_STATE);
}

bool RdmaQueue::post_receive(uint32_t index) {
  recv_wrs_[index].next = nullptr;
  int err = qp_->post_recv(&recv_wrs_[index]);
  if (err != 0) {
    fail("ibv_post_recv: " + errno_string(err));
    return false;
  }
  ++receives_posted_;
  return true;
}

Status RdmaQueue::accept(uint8_t responder_resources, uint8_t initiator_depth) {
  proto::CmAcceptPrivateData data{};
  data.recfmt = proto::kCmRecfmt0;
  data.crqsize = static_cast<uint16_t>(params_.queue_size);
  // rdma_accept moves the QP to RTS with the id's timeout when one was set.
  if (params_.ack_timeout != 0) NVMF_RETURN_IF_ERROR(id_.set_ack_timeout(params_.ack_timeout));
  NVMF_RETURN_IF_ERROR(id_.accept(&data, sizeof(data), responder_resources, initiator_depth));
  pipeline_.set_read_depth(initiator_depth);
  QueueStats info;
  info.qid = params_.qid;
  info.queue_size = params_.queue_size;
  info.peer = params_.peer;
  info.group = params_.group;
  info.requested_max_inline_data = qp_->requested_max_inline_data();
  info.granted_max_inline_data = qp_->granted_max_inline_data();
  info.usable_max_inline_data = qp_->usable_max_inline_data();
  info.inline_fallback = qp_->inline_fallback();
  info.rdma_read_depth = pipeline_.reads().limit();
  info.send_queue_depth = pipeline_.send_queue().limit();
  info.ack_timeout = stall_snapshot().timeout;  // ibv_query_qp, once per connection
  subsystem_.registry().add_queue(&counters_, info);
  return ok_status();
}

// ------------------------------------------------------------------------------ fast path --

void RdmaQueue::queue_send(ibv_send_wr* first, ibv_send_wr* last) {
  if (!touched_) {
    touched_ = true;
    dev_.touched.push_back(this);  // room reserved for every queue of the device
  }
  last->next = nullptr;
  if (pending_tail_ != nullptr) {
    pending_tail_->next = first;
  } else {
    pending_head_ = first;
  }
  pending_tail_ = last;
}

void RdmaQueue::flush_sends() {
  ibv_send_wr* head = pending_head_;
  pending_head_ = pending_tail_ = nullptr;
  if (head == nullptr || wants_teardown()) return;
  int err = qp_->post_send(head);
  if (err != 0) fail("ibv_post_send: " + errno_string(err));
}

void RdmaQueue::handle(const ibv_wc& wc) {
  const auto [kind, index] = verbs::decode_wr_id(wc.wr_id);
  if (kind == WrKind::kRecv && srq_ != nullptr) {
    // The receive is the SRQ's: whatever happens next, it must go back to it.
    if (!srq_->consumed(index, qp_num_)) {
      fail("completion of SRQ receive " + std::to_string(index) + ", which is not posted");
      return;
    }
    if (wants_teardown() || wc.status != IBV_WC_SUCCESS) {
      (void)srq_->repost(index);  // an error completion is reported below
      if (wants_teardown()) return;
    } else if (wc.qp_num != qp_num_) {
      fail("SRQ receive completed for QP " + std::to_string(wc.qp_num) + " on the CQ of QP " +
           std::to_string(qp_num_));
      return;
    }
  }
  if (wants_teardown()) return;  // flushed work requests of a dying queue
  if (wc.status != IBV_WC_SUCCESS) {
    fail(std::string("completion error: ") + ibv_wc_status_str(wc.status) + " (" +
         verbs::wr_kind_name(kind) + " work request)");
    return;
  }
  if (kind != WrKind::kRecv) ++send_completions_;
  switch (kind) {
    case WrKind::kRecv:
      if (srq_ == nullptr) --receives_posted_;  // an SRQ receive was never this queue's post
      // Beyond its limit the host ignored sqhd and hsqsize (only possible with an SRQ: without
      // one the host finds no receive posted, RNR): the QP goes to the error state now, so that
      // it takes no more of the SRQ's receives.
      if (srq_ != nullptr && !pipeline_.capsules().available(1)) stop_qp();
      pipeline_.on_capsule(index, wc.byte_len);
      break;
    case WrKind::kRead:
      pipeline_.on_read_done(index);
      break;
    case WrKind::kSend:
      pipeline_.on_send_done(index);
      break;
    case WrKind::kWrite:
      break;
    default:
      fail("completion with unknown wr_id " + std::to_string(wc.wr_id));
      break;
  }
}

// Posted now, not with the batch: a batch of READs makes the host's responder send every READ
// response at once. Against the Linux host on rxe (QD32, 64 KiB writes) that burst lost packets
// and each loss cost a retransmit timeout of seconds (kernel I/O timeouts; ci/interop's
// deep-writes checks guard it). Posting as each command arrives spaces them out, and the READ
// depth (RequestPipeline's READ credits) bounds how many are outstanding at once.
void RdmaQueue::post_read(uint32_t slot, const Request& r) {
  SlotWrs& w = wrs_[slot];
  w.data_sge.addr = reinterpret_cast<uintptr_t>(r.buffer.data());
  w.data_sge.length = r.transfer_bytes;
  w.data_wr.wr_id = encode_wr_id(WrKind::kRead, slot);
  w.data_wr.opcode = IBV_WR_RDMA_READ;
  w.data_wr.send_flags = IBV_SEND_SIGNALED;
  w.data_wr.wr.rdma.remote_addr = r.sgl.addr;
  w.data_wr.wr.rdma.rkey = r.sgl.rkey;
  w.data_wr.next = nullptr;
  int err = qp_->post_send(&w.data_wr);
  if (err != 0) fail("ibv_post_send(RDMA READ): " + errno_string(err));
}

void RdmaQueue::post_response(uint32_t slot, const Request& r, bool with_data) {
  SlotWrs& w = wrs_[slot];
  std::memcpy(reinterpret_cast<void*>(w.cqe_sge.addr), &r.cqe, kCqeBytes);
  w.send_wr.opcode = r.invalidate ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
  if (r.invalidate) w.send_wr.invalidate_rkey = r.sgl.rkey;
  // The CQE is copied into its registered buffer above either way, so the by-reference path
  // (after the inline-send fallback, or with 0 requested) needs nothing else.
  const SendMode mode = qp_->send_mode(kCqeBytes, false);
  w.send_wr.send_flags = IBV_SEND_SIGNALED | send_flags_for(mode);
  ibv_send_wr* first = &w.send_wr;
  if (with_data) {
    w.data_sge.addr = reinterpret_cast<uintptr_t>(r.buffer.data());
    w.data_sge.length = r.transfer_bytes;
    w.data_wr.wr_id = encode_wr_id(WrKind::kWrite, slot);
    w.data_wr.next = &w.send_wr;
    w.data_wr.opcode = IBV_WR_RDMA_WRITE;
    w.data_wr.send_flags = 0;  // the SEND behind it is signaled; RC keeps them in order
    w.data_wr.wr.rdma.remote_addr = r.sgl.addr;
    w.data_wr.wr.rdma.rkey = r.sgl.rkey;
    first = &w.data_wr;
  }
  // Counted before the post: once the host holds the CQE, stats() must already show it (a
  // test reads them right after its last completion). A failed post tears the queue down.
  (mode == SendMode::kInline ? counters_.responses_inline : counters_.responses_by_reference).add();
  queue_send(first, &w.send_wr);
}

// ------------------------------------------------------------------------- stall watch --

StallSnapshot RdmaQueue::stall_snapshot() const {
  StallSnapshot s;
  s.outstanding = outstanding();
  for (size_t i = 0; i < kRequestStateCount; ++i) s.states[i] = counters_.state_now[i].get();
  s.capsules_waiting_for_slot = pipeline_.capsules_parked();
  if (srq_ != nullptr) {
    s.srq = true;
    s.receives_posted = srq_->table().posted_now();
    s.receive_depth = srq_->depth();
    s.capsules_held = pipeline_.capsules().in_use();
    s.capsule_limit = pipeline_.capsules().limit();
  } else {
    s.receives_posted = receives_posted_;
    s.receive_depth = params_.queue_size;
  }
  s.send_queue_in_use = pipeline_.send_queue().in_use();
  s.send_queue_depth = pipeline_.send_queue().limit();
  s.responses_waiting = pipeline_.responses_waiting();
  s.reads_in_flight = pipeline_.reads().in_use();
  s.read_depth = pipeline_.reads().limit();
  s.reads_waiting = pipeline_.reads_waiting();
  s.backend_in_flight = pipeline_.backend_in_flight();
  if (pool_ != nullptr) {
    s.shared_pool = true;
    s.pool_free = pool_->chunks().free_count();
    s.pool_chunks = pool_->chunks().count();
    s.pool_waiting = pool_->chunks().waiting();
  }
  s.cq_armed = cq_ != nullptr && cq_->armed;
  if (const auto t = pipeline_.scan_transfers(); t.transfers > 0) {
    s.transfers = t.transfers;
    s.has_oldest_transfer = true;
    s.oldest_transfer_state = pipeline_.request(t.oldest_slot).state;
    s.oldest_transfer_cid = pipeline_.transfer_cid(t.oldest_slot);
    s.oldest_transfer_bytes = pipeline_.transfer_bytes(t.oldest_slot);
    // transfer_watch_ saw this one as the oldest from its first look at it.
    s.oldest_transfer_age = transfer_watch_.idle();
  }
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (qp_ &&
      ibv_query_qp(qp_->get(), &attr,
                   IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                       IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
                   &init) == 0) {
    s.qp_queried = true;
    s.qp_state = attr.qp_state;
    s.timeout = attr.timeout;
    s.retry_cnt = attr.retry_cnt;
    s.rnr_retry = attr.rnr_retry;
    s.min_rnr_timer = attr.min_rnr_timer;
    s.max_rd_atomic = attr.max_rd_atomic;
    s.max_dest_rd_atomic = attr.max_dest_rd_atomic;
  }
  return s;
}

void RdmaQueue::check_stall(IdleWatch::Clock::time_point now) {
  if (wants_teardown() || !connected()) return;
  const auto t = pipeline_.scan_transfers();
  const uint64_t transfer_stalls_before = transfer_watch_.stalls();
  const IdleWatch::Verdict transfer = transfer_watch_.observe(t.oldest_ticket, t.transfers, now);
  const IdleWatch::Verdict queue =
      idle_.observe(events_ + pipeline_.progress(), outstanding(), now);
  if (transfer == IdleWatch::Verdict::kStalled && queue != IdleWatch::Verdict::kStalled &&
      idle_.idle() < transfer_watch_.idle()) {
    // Completions go on around it (else the queue's own WARN below says it all).
    if (transfer_watch_.stalls() != transfer_stalls_before) ++transfer_stalls_;
    counters_.stalls.set(idle_.stalls() + transfer_stalls_);
    uint64_t suppressed = 0;
    if (stall_log_limiter().allow("transfer stall", now, &suppressed)) {
      NVMF_LOG(WARN, "target") << describe() << ": " << describe_transfer_stall(stall_snapshot())
                               << suppressed_note(suppressed);
    }
  }
  switch (queue) {
    case IdleWatch::Verdict::kQuiet:
      return;
    case IdleWatch::Verdict::kStalled: {
      counters_.stalls.set(idle_.stalls() + transfer_stalls_);
      uint64_t suppressed = 0;
      if (stall_log_limiter().allow("stall", now, &suppressed)) {
        NVMF_LOG(WARN, "target") << describe() << ": "
                                 << describe_stall(stall_snapshot(), idle_.idle())
                                 << suppressed_note(suppressed);
      }
      return;
    }
    case IdleWatch::Verdict::kResumed: {
      uint64_t suppressed = 0;
      if (stall_log_limiter().allow("resumed", now, &suppressed)) {
        NVMF_LOG(INFO, "target")
            << describe() << ": completions again after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(idle_.stalled_for()).count()
            << " ms without one" << suppressed_note(suppressed);
      }
      return;
    }
  }
}

// ------------------------------------------------------------------------------- teardown --

void RdmaQueue::fail(const std::string& what) {
  if (wants_teardown()) return;
  // A host can make any number of its connections fail (a 1-byte capsule each): rate-limited.
  if (uint64_t suppressed = 0; connection_log_limiter().allow(
          "queue failed", std::chrono::steady_clock::now(), &suppressed)) {
    NVMF_LOG(ERROR, "target") << describe() << ": " << what << "; tearing the queue down"
                              << suppressed_note(suppressed);
  }
  request_disconnect(what);
}

void RdmaQueue::request_disconnect(std::string_view reason) {
  if (!on_owner_thread()) {  // another poll group (controller freed, keep-alive expiry)
    {
      std::lock_guard lock(remote_mutex_);
      if (remote_reason_.empty()) remote_reason_ = reason.empty() ? "unknown" : reason;
    }
    remote_disconnect_.store(true, std::memory_order_release);
    uint64_t one = 1;
    if (params_.wake_fd >= 0) (void)!::write(params_.wake_fd, &one, sizeof(one));
    return;
  }
  if (disconnect_reason_.empty()) disconnect_reason_ = reason.empty() ? "unknown" : reason;
  pending_.release();  // a queue being torn down no longer waits for its Connect
  pipeline_.abandon_waiters();
}

void RdmaQueue::take_remote_disconnect_slow() {
  remote_disconnect_.store(false, std::memory_order_relaxed);
  std::string reason;
  {
    std::lock_guard lock(remote_mutex_);
    reason = remote_reason_;
  }
  request_disconnect(reason);
}

void RdmaQueue::wake_for_events() {
  events_pending_.store(true, std::memory_order_release);
  uint64_t one = 1;
  if (params_.wake_fd >= 0) (void)!::write(params_.wake_fd, &one, sizeof(one));
}

void RdmaQueue::take_remote_events_slow() {
  events_pending_.store(false, std::memory_order_relaxed);
  if (processor_ && !wants_teardown()) processor_->deliver_events();
}

void RdmaQueue::disconnect() {
  if (disconnected_) return;
  disconnected_ = true;
  (void)id_.disconnect();  // the peer may already be gone
}

std::string RdmaQueue::describe() const {
  return params_.peer + " qid " + std::to_string(params_.qid);
}

}  // namespace nvmf::target
