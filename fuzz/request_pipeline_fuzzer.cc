// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes the request state machine of target queues, target::RequestPipeline, with the real
// CommandProcessor behind it and a fake transport and IoEngine around it: one to three queues
// (an admin queue and I/O queues of one NVM subsystem, or a discovery queue beside them), each
// with its own receives or all on one shared receive queue, data buffers per command slot or
// one shared ChunkList, small send-queue and RDMA READ depths. The input sends capsules (well
// formed commands of every kind the processor knows, raw SQEs, wrong byte counts), completes
// RDMA READs (with all, part or none of the host's data), response SENDs and backend operations
// in any order (backend operations with success or an error), injects transport failures and
// disconnects, lets keep-alive time pass and sweeps the queues being torn down, as the event
// loop and RdmaQueue do.
//
// After every step: every receive is posted or held by exactly one queue, and a queue's held
// receives are exactly its commands' and parked capsules'; capsule, READ and send-queue credits
// stay within their limits and match the work requests outstanding; the per-state gauges match
// the slots; a shared chunk is held by one command at most, and a READ, WRITE or backend
// operation's buffer stays its command's until it completes; backend operations belong to live
// queues. At the end, once every completion was delivered: no command of a live queue is stuck,
// and after the queues are destroyed every chunk is free and every receive posted again. An SQE
// or in-capsule page used after its receive was posted again is a use after free (ASan).
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "common/sgl.h"
#include "common/wire_text.h"
#include "fuzz/fake_target.h"
#include "fuzz/input.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "target/chunk_list.h"
#include "target/command_processor.h"
#include "target/counters.h"
#include "target/discovery.h"
#include "target/io_engine.h"
#include "target/namespace.h"
#include "target/port.h"
#include "target/queue_link.h"
#include "target/request.h"
#include "target/request_pipeline.h"
#include "target/request_state.h"
#include "target/stall_report.h"
#include "target/stats_registry.h"
#include "target/subsystem.h"

namespace nvmf::fuzz {
namespace {

using target::ChunkList;
using target::CommandProcessor;
using target::IoOp;
using target::IoRequest;
using target::Namespace;
using target::PipelineParams;
using target::Request;
using target::RequestPipeline;
using target::RequestState;

constexpr uint32_t kPage = 4096;
constexpr uint32_t kPagesPerReceive = 2;
constexpr uint32_t kInCapsuleBytes = kPagesPerReceive * kPage;
constexpr uint32_t kSqeBytes = sizeof(proto::Sqe);
constexpr uint8_t kMdts = 1;  // 8 KiB per command: small buffers, cheap inputs
constexpr uint32_t kMaxTransfer = kPage << kMdts;
constexpr uint32_t kLbaSize = 512;
constexpr uint64_t kNamespaceBytes = 64 * 1024;  // 128 LBAs
constexpr uint32_t kAdminQueueSize = 8;
constexpr uint32_t kIoQueueSize = 16;
constexpr uint8_t kAerl = 3;
constexpr size_t kMaxQueues = 3;
constexpr uint32_t kMaxChunks = 8;
constexpr uint32_t kMaxSrqDepth = 16;
constexpr size_t kMaxSlots = kIoQueueSize + kAerl + 1;
constexpr size_t kMaxReceives = std::max(kIoQueueSize, kMaxSrqDepth);
constexpr uint32_t kSlotsBeforeConnect = 2;  // as RdmaQueue
constexpr uint32_t kGoodCc = 0x00460001;     // EN, IOSQES 6, IOCQES 4
constexpr uint8_t kHostId = 0x11;            // every byte of the host identifier

// True in the states in which a command still reads its capsule (its receive is not posted
// again before it is ready to complete, or held).
bool holds_capsule(RequestState s) {
  switch (s) {
    case RequestState::kNew:
    case RequestState::kWaitingForBuffer:
    case RequestState::kWaitingForReadCredit:
    case RequestState::kTransferringFromHost:
    case RequestState::kReadyToExecute:
    case RequestState::kExecuting:
      return true;
    default:
      return false;
  }
}

// ------------------------------------------------------------------------------ IoEngine --

// Records submissions; the input completes any of them, in any order, with success or an
// errno, through IoCompletion::io_done as reap() would (never from inside submit()).
class FuzzEngine final : public target::IoEngine {
 public:
  void submit(IoRequest& io) override {
    require(io.done != nullptr, "a backend operation without its completion");
    require(std::find(ops_.begin(), ops_.end(), &io) == ops_.end(),
            "an IoRequest submitted again before it completed");
    ops_.push_back(&io);
  }
  void flush_submissions() override {}
  int reap() override { return 0; }
  int event_fd() const override { return -1; }
  void clear_event() override {}
  void drain() override { require(ops_.empty(), "drain() with operations the input holds"); }
  uint64_t in_flight() const override { return ops_.size(); }
  const char* name() const override { return "fuzz"; }

  const std::vector<IoRequest*>& ops() const { return ops_; }
  // Completes operation `i`: success (its length for reads and writes, else 0) or -err.
  void complete(size_t i, int err) {
    IoRequest* io = ops_[i];
    ops_.erase(ops_.begin() + static_cast<std::ptrdiff_t>(i));
    const bool moves_data = io->op == IoOp::kRead || io->op == IoOp::kWrite;
    if (err != 0) {
      io->result = -err;
    } else {
      if (io->op == IoOp::kRead && io->length > 0) std::memset(io->data, 0x5A, io->length);
      io->result = moves_data ? static_cast<int64_t>(io->length) : 0;
    }
    io->done->io_done(*io);
  }
  void clear() { ops_.clear(); }

 private:
  std::vector<IoRequest*> ops_;
};

// The namespaces every input shares (made once per process): 1 and 3 are files whose I/O goes
// through the FuzzEngine (no byte is ever read or written there), 2 is RAM. A namespace whose
// Flush failed keeps failing (Namespace::set_flush_error): it is opened again before the next
// input, so that every input starts from the same state.
struct Backing {
  Backing() {
    // An anonymous file (nothing left behind), opened by its /proc path like any file.
    const int fd = ::memfd_create("nvmf-request-pipeline-fuzz", 0);
    require(fd >= 0, "memfd_create failed");
    path = "/proc/self/fd/" + std::to_string(fd);
    ram = std::move(Namespace::create_ram(kNamespaceBytes, kLbaSize)).value();
    reopen();
  }
  void reopen() {
    for (auto* ns : {&file1, &file3}) {
      if (*ns != nullptr && (*ns)->flush_error() == 0) continue;
      ns->reset();
      auto opened = Namespace::open_file(path, kNamespaceBytes, kLbaSize, engine,
                                         target::FileBackingOptions{.direct = false});
      require(opened.ok(), "the fuzzer's backing file could not be opened");
      *ns = std::move(opened).value();
    }
  }
  FuzzEngine engine;  // before the namespaces, which keep a reference to it
  std::string path;
  std::unique_ptr<Namespace> file1, file3, ram;
};

Backing& backing() {
  static Backing* const b = new Backing();  // never destroyed: the namespaces outlive every input
  return *b;
}

// ------------------------------------------------------------------------------ receives --

// One receive buffer: an SQE and kPagesPerReceive in-capsule pages. Its memory exists only
// while a queue holds it: posting it again frees it, so a command that reads its SQE or its
// in-capsule data afterwards (where the next capsule may already be) is a use after free.
struct Receive {
  enum class State : uint8_t { kIdle, kPosted, kHeld };  // kIdle: not posted yet
  State state = State::kIdle;
  uint32_t holder = 0;  // the holding queue's serial
  std::unique_ptr<proto::Sqe> sqe;
  std::array<std::unique_ptr<uint8_t[]>, kPagesPerReceive> memory;
  std::array<uint8_t*, kPagesPerReceive> pages{};

  void post() {
    state = State::kPosted;
    holder = 0;
    sqe.reset();
    for (auto& m : memory) m.reset();
    pages.fill(nullptr);
  }
  void fill(uint32_t by, const proto::Sqe& s, std::span<const uint8_t> in_capsule) {
    state = State::kHeld;
    holder = by;
    sqe = std::make_unique<proto::Sqe>(s);
    for (uint32_t p = 0; p < kPagesPerReceive; ++p) {
      memory[p].reset(new uint8_t[kPage]);
      pages[p] = memory[p].get();
      std::memset(pages[p], 0xA5, kPage);
    }
    const size_t n = std::min<size_t>(in_capsule.size(), kInCapsuleBytes);
    for (size_t off = 0; off < n; off += kPage) {
      std::memcpy(pages[off / kPage], in_capsule.data() + off, std::min<size_t>(kPage, n - off));
    }
  }
};
using ReceiveSet = std::vector<Receive>;

// ------------------------------------------------------------------------------- the world --

// What the queues of one input share: the subsystems on a port, the shared receive queue, the
// shared chunk pool and the host's memory (what an RDMA READ of a keyed SGL fetches, by rkey).
struct World {
  World(bool use_srq, uint32_t srq_depth, bool use_pool, uint32_t chunks)
      : engine(backing().engine), srq(use_srq) {
    Backing& b = backing();
    b.reopen();
    engine.clear();
    target::SubsystemConfig d;
    d.nqn = proto::kDiscoveryNqn;
    d.discovery = true;
    d.admin_queue_size = kAdminQueueSize;
    d.io_queue_size = kIoQueueSize;
    d.mdts = kMdts;
    d.aerl = kAerl;
    discovery = std::make_unique<target::Subsystem>(d, registry);
    target::SubsystemConfig n;
    n.nqn = kFuzzSubnqn;
    n.max_io_queues = 2;
    n.admin_queue_size = kAdminQueueSize;
    n.io_queue_size = kIoQueueSize;
    n.mdts = kMdts;
    n.aerl = kAerl;
    n.allow_any_host = false;
    n.allowed_hosts = {kAllowedHost};
    std::vector<target::SubsystemNamespace> namespaces(3);
    namespaces[0].nsid = 1;
    namespaces[0].ns = b.file1.get();
    namespaces[1].nsid = 2;
    namespaces[1].ns = b.ram.get();
    namespaces[2].nsid = 3;
    namespaces[2].ns = b.file3.get();
    nvm = std::make_unique<target::Subsystem>(n, std::move(namespaces), registry);
    target::DiscoveryAddress a;
    a.traddr = "10.99.0.1";
    a.trsvcid = "4420";
    port = std::make_unique<target::Port>(a, *discovery);
    port->link(*nvm);
    nvm->set_in_capsule_data_size(kInCapsuleBytes);
    if (srq) {
      srq_receives.resize(srq_depth);
      for (Receive& r : srq_receives) r.post();
    }
    if (use_pool) {
      chunk_memory.assign(size_t{chunks} * kMaxTransfer, 0);
      pool = std::make_unique<ChunkList>(chunk_memory.data(), chunks, kMaxTransfer);
    }
  }
  ~World() {
    port.reset();  // the port unlinks its subsystems
    nvm.reset();
    discovery.reset();
  }

  FuzzEngine& engine;
  target::StatsRegistry registry;
  target::StatusCounters statuses;
  std::unique_ptr<target::Subsystem> discovery;
  std::unique_ptr<target::Subsystem> nvm;
  std::unique_ptr<target::Port> port;
  bool srq;
  ReceiveSet srq_receives;
  std::vector<uint8_t> chunk_memory;
  std::unique_ptr<ChunkList> pool;
  std::map<uint32_t, std::vector<uint8_t>> host_memory;  // by rkey
  uint32_t next_rkey = 0x100;
};

// --------------------------------------------------------------------------------- a queue --

enum class Role : uint8_t { kAdmin, kIo, kDiscovery };

struct QueueShape {
  uint32_t queue_size = 2;  // hsqsize + 1
  uint32_t send_depth = 2;  // send-queue entries
  uint32_t read_depth = 1;  // RDMA READs outstanding at most
};

// One queue as RdmaQueue builds it around its RequestPipeline and CommandProcessor (same slot
// set-up before and after Connect, same teardown order), with the wire replaced by lists of
// posted work requests that the input completes.
class FuzzQueue final : public target::QueueLink, public target::PipelineTransport {
 public:
  FuzzQueue(World& w, Role role, uint16_t qid, const QueueShape& shape, uint32_t serial)
      : w_(w),
        role_(role),
        qid_(qid),
        queue_size_(shape.queue_size),
        slot_count_(shape.queue_size + (qid == 0 ? uint32_t{kAerl} + 1 : 0)),
        serial_(serial),
        pipeline_(*this, counters_,
                  PipelineParams{.queue_size = shape.queue_size,
                                 .slot_count = slot_count_,
                                 .page_size = kPage,
                                 .shared_receives = w.srq}),
        connect_page_(kPage, 0) {
    // Before a Connect: two slots sharing one page for the Connect data, one receive posted
    // without a shared receive queue (a second capsule would wait in RNR retry), two capsules
    // with one.
    for (uint32_t i = 0; i < std::min(kSlotsBeforeConnect, slot_count_); ++i) {
      pipeline_.add_slot(connect_page_);
    }
    pipeline_.set_capsule_limit(w.srq ? std::min(kSlotsBeforeConnect, queue_size_) : 1, false);
    pipeline_.set_send_queue_depth(shape.send_depth);
    pipeline_.set_read_depth(shape.read_depth);
    if (!w.srq) {
      own_receives_.resize(queue_size_);
      own_receives_[0].post();
    }
    processor_ = std::make_unique<CommandProcessor>(*w.nvm, *this, counters_, w.statuses, qid,
                                                    queue_size_, kInCapsuleBytes);
    processor_->set_port(w.port.get());
    processor_->set_engine(&w.engine);
    pipeline_.set_processor(processor_.get());
  }

  // As RdmaQueue's destructor: the processor first (it may free the controller and ask other
  // queues to disconnect), then the QP (its posted work requests are flushed, never delivered),
  // then every chunk back and every shared receive the queue still holds posted again.
  ~FuzzQueue() override {
    if (reason_.empty()) reason_ = "queue destroyed";
    processor_.reset();
    reads_.clear();
    sends_.clear();
    pipeline_.release_all();
    require(parked_ == 0, "parked receives still counted after release_all()");
    // Every shared receive it still holds goes back (its own receives go with it).
    if (w_.srq) {
      for (Receive& r : w_.srq_receives) {
        if (r.state == Receive::State::kHeld && r.holder == serial_) r.post();
      }
    }
  }
  FuzzQueue(const FuzzQueue&) = delete;
  FuzzQueue& operator=(const FuzzQueue&) = delete;

  Role role() const { return role_; }
  uint16_t qid() const { return qid_; }
  const RequestPipeline& pipeline() const { return pipeline_; }
  const CommandProcessor& processor() const { return *processor_; }
  const target::IoCompletion* completion() const { return &pipeline_; }
  bool pooled() const { return grown_ && w_.pool != nullptr; }
  size_t reads_outstanding() const { return reads_.size(); }
  size_t sends_outstanding() const { return sends_.size(); }
  void fail_next_repost() { fail_next_repost_ = true; }
  void fail_next_setup() { fail_next_setup_ = true; }

  // The host sends a capsule: `sqe` and `in_capsule` land in the first posted receive (of the
  // queue's own, or of the shared receive queue) and arrive as `byte_len` bytes. Nothing
  // happens when no receive is posted (the host's SEND waits in RNR retry) or the queue is
  // being torn down (its QP takes no more).
  void deliver(const proto::Sqe& sqe, std::span<const uint8_t> in_capsule, uint32_t byte_len) {
    if (wants_teardown()) return;
    ReceiveSet& set = receives();
    auto it = std::find_if(set.begin(), set.end(),
                           [](const Receive& r) { return r.state == Receive::State::kPosted; });
    if (it == set.end()) return;
    // With its own receives a host can only fill what is posted: that many credits are free.
    if (!w_.srq) {
      require(pipeline_.capsules().available(1),
              "a capsule arrived in a posted receive but no capsule credit is free");
    }
    it->fill(serial_, sqe, in_capsule);
    cids_.push_back(sqe.cid);
    pipeline_.on_capsule(static_cast<uint32_t>(it - set.begin()),
                         std::min(byte_len, kSqeBytes + kInCapsuleBytes));
  }

  // Completes posted READ `i`: `placed` bytes of the host's memory at the SGL are written to the
  // command's buffer first (all of them normally; fewer, or none, as a provider that reports a
  // READ done without its data), with `changed` over their start (the host rewrote its buffer).
  // A queue being torn down gets no completion (its QP flushes).
  void complete_read(size_t i, uint32_t placed, std::span<const uint8_t> changed = {}) {
    if (reads_.empty()) return;
    i %= reads_.size();
    const Transfer t = reads_[i];
    reads_.erase(reads_.begin() + static_cast<std::ptrdiff_t>(i));
    require(pipeline_.request(t.slot).buffer.data() == t.buffer,
            "an RDMA READ's buffer changed owner before the READ completed");
    placed = std::min(placed, t.bytes);
    if (placed > 0) {
      auto h = w_.host_memory.find(t.rkey);
      const size_t have = h != w_.host_memory.end() ? h->second.size() : 0;
      const size_t n = std::min<size_t>(have, placed);
      if (n > 0) std::memcpy(t.buffer, h->second.data(), n);
      std::memset(t.buffer + n, 0, placed - n);
      Input::copy_to(t.buffer, changed.first(std::min<size_t>(changed.size(), placed)));
    }
    if (wants_teardown()) return;
    pipeline_.on_read_done(t.slot);
  }

  // Completes posted response `i` (its RDMA WRITE, if any, and its SEND).
  void complete_send(size_t i) {
    if (sends_.empty()) return;
    i %= sends_.size();
    const Transfer t = sends_[i];
    sends_.erase(sends_.begin() + static_cast<std::ptrdiff_t>(i));
    if (t.buffer != nullptr) {
      require(pipeline_.request(t.slot).buffer.data() == t.buffer,
              "an RDMA WRITE's buffer changed owner before its SEND completed");
    }
    if (wants_teardown()) return;
    pipeline_.on_send_done(t.slot);
  }

  // The invariants of this queue alone (Session::check adds those across queues).
  void check() const {
    const RequestPipeline& p = pipeline_;
    const bool live = !wants_teardown();
    const uint32_t n = p.slot_count();
    require(n <= slot_count_, "more command slots than the queue was sized for");
    require(p.capsules().in_use() <= p.capsules().limit(), "more capsules held than the limit");
    require(p.capsules_parked() <= queue_size_, "more capsules parked than the queue size");
    require(p.reads().in_use() <= p.reads().limit(), "more RDMA READs than the READ depth");
    require(p.send_queue().in_use() <= p.send_queue().limit(),
            "more send work requests than the send-queue depth");
    require(p.responses_waiting() <= n && p.reads_waiting() <= n,
            "more waiters than command slots");
    require(parked_ == static_cast<int64_t>(p.parked_receives()),
            "parked_receives_changed() deltas disagree with parked_receives()");

    std::array<uint64_t, target::kRequestStateCount> in_state{};
    for (uint32_t s = 0; s < n; ++s) ++in_state[static_cast<size_t>(p.request(s).state)];
    for (size_t s = 0; s < target::kRequestStateCount; ++s) {
      require(counters_.state_now[s].get() == in_state[s],
              "a request-state gauge disagrees with the slots' states");
    }

    // Work requests posted: one per slot at most, in the state that posted it, on the buffer
    // it was posted with.
    std::bitset<kMaxSlots> posted;
    uint32_t sq = 0;
    for (const Transfer& t : reads_) {
      require(t.slot < n && !posted[t.slot], "two work requests outstanding for one slot");
      posted[t.slot] = true;
      require(p.request(t.slot).state == RequestState::kTransferringFromHost,
              "an RDMA READ outstanding for a request not transferring from the host");
      require(p.request(t.slot).buffer.data() == t.buffer,
              "an RDMA READ's buffer changed owner before the READ completed");
      ++sq;
    }
    for (const Transfer& t : sends_) {
      require(t.slot < n && !posted[t.slot], "two work requests outstanding for one slot");
      posted[t.slot] = true;
      const bool with_data = t.buffer != nullptr;
      require(p.request(t.slot).state ==
                  (with_data ? RequestState::kTransferringToHost : RequestState::kCompleting),
              "a response outstanding for a request in another state");
      if (with_data) {
        require(p.request(t.slot).buffer.data() == t.buffer,
                "an RDMA WRITE's buffer changed owner before its SEND completed");
      }
      sq += with_data ? 2 : 1;
    }
    require(p.outstanding() == n - in_state[static_cast<size_t>(RequestState::kDone)] -
                                   in_state[static_cast<size_t>(RequestState::kHeld)] +
                                   p.capsules_parked(),
            "outstanding() disagrees with the slots' states and the capsules parked");
    const RequestPipeline::TransferScan scan = p.scan_transfers();
    require(scan.transfers == in_state[static_cast<size_t>(RequestState::kTransferringFromHost)] +
                                  in_state[static_cast<size_t>(RequestState::kTransferringToHost)] +
                                  in_state[static_cast<size_t>(RequestState::kCompleting)],
            "scan_transfers() disagrees with the slots' states");
    if (scan.transfers > 0) {
      require(scan.oldest_slot < n && target::is_transfer_state(p.request(scan.oldest_slot).state),
              "the oldest transfer is not in a transfer state");
    }
    if (live) {
      require(p.reads().in_use() == reads_.size(), "READ credits disagree with READs posted");
      require(p.send_queue().in_use() == sq, "send-queue credits disagree with work posted");
      require(p.backend_in_flight() == in_state[static_cast<size_t>(RequestState::kExecuting)],
              "backend operations in flight disagree with requests executing");
      // A request short of a credit or a chunk waits in its FIFO (else nothing wakes it).
      require(
          p.responses_waiting() == in_state[static_cast<size_t>(RequestState::kReadyToComplete)],
          "a request ready to complete is not waiting for send-queue room");
      require(
          p.reads_waiting() == in_state[static_cast<size_t>(RequestState::kWaitingForReadCredit)],
          "a request waiting for a READ credit is not in the READ waiters");
      require(p.buffer_waiters() == in_state[static_cast<size_t>(RequestState::kWaitingForBuffer)],
              "a request waiting for a chunk is not in the pool's waiters");
    }

    // Receives: each command that still reads its capsule reads one this queue holds, no two
    // the same one; the others it holds are its parked capsules'.
    const ReceiveSet& set = receives();
    std::bitset<kMaxReceives> claimed;
    uint32_t from_receive = 0, from_copy = 0;
    for (uint32_t s = 0; s < n; ++s) {
      const Request& r = p.request(s);
      if (!holds_capsule(r.state)) continue;
      auto it = std::find_if(set.begin(), set.end(), [&](const Receive& rc) {
        return rc.sqe != nullptr && rc.sqe.get() == r.sqe;
      });
      if (it == set.end()) {  // a copy of a parked SQE (its receive went back)
        ++from_copy;
        continue;
      }
      require(it->holder == serial_, "a command reads a receive another queue holds");
      const auto index = static_cast<size_t>(it - set.begin());
      require(!claimed[index], "two commands read one receive");
      claimed[index] = true;
      ++from_receive;
    }
    // Parked copies exist only with a shared receive queue.
    require(w_.srq || from_copy == 0, "a command reads an SQE that is in no held receive");
    uint32_t held = 0;
    for (const Receive& r : set) held += r.state == Receive::State::kHeld && r.holder == serial_;
    if (live) {
      const uint32_t parked_holding = w_.srq ? p.parked_receives() : p.capsules_parked();
      require(held == from_receive + parked_holding,
              "receives held by a queue are not those of its commands and parked capsules");
      require(p.capsules().in_use() == from_receive + from_copy + p.capsules_parked(),
              "capsule credits disagree with the capsules held");
    }
  }

  // At the end of an input, after every completion was delivered: nothing of a live queue is
  // left waiting (a lost wake-up), and its own receives are all posted again.
  void check_quiet() const {
    if (wants_teardown()) return;
    const RequestPipeline& p = pipeline_;
    require(p.outstanding() == 0, "a command of a live queue is stuck with nothing outstanding");
    require(p.capsules_parked() == 0 && p.responses_waiting() == 0 && p.reads_waiting() == 0 &&
                p.buffer_waiters() == 0,
            "a live queue has waiters with nothing outstanding");
    require(p.capsules().in_use() == 0, "capsule credits held with nothing outstanding");
    for (const Receive& r : receives()) {
      require(r.state != Receive::State::kHeld || r.holder != serial_,
              "a receive not posted again with nothing outstanding");
    }
  }

  // ---- QueueLink ----
  void request_disconnect(std::string_view reason) override {
    if (reason_.empty()) reason_ = reason.empty() ? "unknown" : std::string(reason);
    pipeline_.abandon_waiters();
  }
  std::string describe() const override { return "fuzz qid " + std::to_string(qid_); }
  // As RdmaQueue::connect_accepted: every capsule credit, every slot with its data buffer (or
  // none with the shared pool), the other receives posted.
  bool connect_accepted() override {
    if (grown_) return true;
    if (fail_next_setup_) {
      fail_next_setup_ = false;
      return false;
    }
    pipeline_.set_capsule_limit(queue_size_, true);
    const uint32_t made = pipeline_.slot_count();
    if (w_.pool != nullptr) {
      for (uint32_t i = 0; i < slot_count_; ++i) {
        if (i >= made) pipeline_.add_slot({});
        pipeline_.set_buffer(i, {});
      }
      pipeline_.use_pool(w_.pool.get());
    } else {
      data_.assign(size_t{slot_count_} * kMaxTransfer, 0);
      for (uint32_t i = 0; i < slot_count_; ++i) {
        std::span<uint8_t> buf(data_.data() + size_t{i} * kMaxTransfer, kMaxTransfer);
        if (i < made) {
          pipeline_.set_buffer(i, buf);
        } else {
          pipeline_.add_slot(buf);
        }
      }
    }
    grown_ = true;
    if (!w_.srq) {
      for (uint32_t i = 1; i < queue_size_; ++i) own_receives_[i].post();
    }
    return true;
  }
  void respond_held(Request& r) override {
    uint32_t s = 0;
    while (s < pipeline_.slot_count() && &pipeline_.request(s) != &r) ++s;
    require(s < pipeline_.slot_count(), "respond_held() for a request of no slot");
    require(r.state == RequestState::kHeld, "respond_held() for a request that is not held");
    pipeline_.respond_held(r);
  }

  // ---- PipelineTransport ----
  const proto::Sqe* capsule_sqe(uint32_t recv) override { return held(recv).sqe.get(); }
  std::span<uint8_t* const> capsule_pages(uint32_t recv) override { return held(recv).pages; }
  bool repost_receive(uint32_t recv) override {
    ReceiveSet& set = receives();
    require(recv < set.size(), "repost_receive() of a receive that does not exist");
    Receive& r = set[recv];
    require(r.state != Receive::State::kPosted, "repost_receive() of a receive already posted");
    require(r.state == Receive::State::kHeld && r.holder == serial_,
            "repost_receive() of a receive this queue does not hold");
    if (fail_next_repost_) {  // the post failed: the receive stays with the QP
      fail_next_repost_ = false;
      fail("ibv_post_recv: injected failure");
      return false;
    }
    r.post();
    return true;
  }
  void parked_receives_changed(int32_t delta) override {
    require(w_.srq, "parked receives reported without a shared receive queue");
    parked_ += delta;
    require(parked_ >= 0, "parked receives reported below zero");
  }
  void post_read(uint32_t slot, const Request& r) override {
    require(slot < pipeline_.slot_count() && &pipeline_.request(slot) == &r,
            "post_read() for a request of another slot");
    require(r.state == RequestState::kTransferringFromHost,
            "post_read() for a request not transferring from the host");
    require(r.transfer_bytes > 0 && r.transfer_bytes <= r.buffer.size(),
            "RDMA READ longer than the command's buffer");
    require(r.sgl.kind == SglKind::kKeyed && r.sgl.length >= r.transfer_bytes,
            "RDMA READ beyond the host's keyed SGL");
    require(r.pending != target::PendingOp::kNone, "an RDMA READ with nothing to finish");
    reads_.push_back(Transfer{slot, r.buffer.data(), r.transfer_bytes, r.sgl.rkey});
  }
  void post_response(uint32_t slot, const Request& r, bool with_data) override {
    require(slot < pipeline_.slot_count() && &pipeline_.request(slot) == &r,
            "post_response() for a request of another slot");
    require(r.state == (with_data ? RequestState::kTransferringToHost : RequestState::kCompleting),
            "post_response() for a request in another state");
    require(r.cqe.sqid == qid_, "the CQE's SQID is not this queue's");
    auto cid = std::find(cids_.begin(), cids_.end(), r.cqe.cid);
    require(cid != cids_.end(), "a CQE whose CID no command without a response has");
    cids_.erase(cid);
    require(r.pending == target::PendingOp::kNone, "a response while data is pending");
    if (with_data) {
      require(r.cqe.status == 0, "data sent to the host with an error status");
      require(r.transfer_bytes > 0 && r.transfer_bytes <= r.buffer.size(),
              "RDMA WRITE longer than the command's buffer");
      require(r.sgl.kind == SglKind::kKeyed && r.sgl.length >= r.transfer_bytes,
              "RDMA WRITE beyond the host's keyed SGL");
    }
    sends_.push_back(Transfer{slot, with_data ? r.buffer.data() : nullptr, r.transfer_bytes, 0});
  }
  void response_ready() override {}
  void fail(const std::string& what) override {
    if (wants_teardown()) return;
    NVMF_LOG(DEBUG, "fuzz") << describe() << ": " << what << "; tearing the queue down";
    request_disconnect(what);
  }
  bool wants_teardown() const override { return !reason_.empty(); }

 private:
  struct Transfer {
    uint32_t slot = 0;
    uint8_t* buffer = nullptr;  // READ target, WRITE source; null for a SEND alone
    uint32_t bytes = 0;
    uint32_t rkey = 0;
  };

  ReceiveSet& receives() { return w_.srq ? w_.srq_receives : own_receives_; }
  const ReceiveSet& receives() const { return w_.srq ? w_.srq_receives : own_receives_; }
  Receive& held(uint32_t recv) {
    ReceiveSet& set = receives();
    require(recv < set.size() && set[recv].state == Receive::State::kHeld &&
                set[recv].holder == serial_,
            "the pipeline read a capsule from a receive this queue does not hold");
    return set[recv];
  }

  World& w_;
  Role role_;
  uint16_t qid_;
  uint32_t queue_size_;
  uint32_t slot_count_;
  uint32_t serial_;
  target::QueueCounters counters_;
  RequestPipeline pipeline_;
  std::vector<uint8_t> connect_page_;
  std::vector<uint8_t> data_;  // the slots' buffers once connected (no shared pool)
  ReceiveSet own_receives_;    // without a shared receive queue
  std::vector<Transfer> reads_;
  std::vector<Transfer> sends_;
  std::vector<uint16_t> cids_;  // of the capsules received and not answered yet
  std::string reason_;          // why it is being torn down; empty while it is not
  int64_t parked_ = 0;          // the sum of parked_receives_changed()
  bool grown_ = false;
  bool fail_next_repost_ = false;
  bool fail_next_setup_ = false;
  std::unique_ptr<CommandProcessor> processor_;  // destroyed first, by hand
};

// ------------------------------------------------------------------------------ a session --

// One input: the header sets the world and the queues up, then each operation (first byte)
// does one thing; after each, the shared pool serves its waiters (as the event loop's round),
// the shared receive queue's parked share is enforced, and every invariant is checked.
class Session {
 public:
  explicit Session(Input& in) : in_(in) {
    const uint8_t h = in_.u8();
    const bool use_srq = (h & 0x01) != 0;
    const bool use_pool = (h & 0x02) != 0;
    const uint32_t chunks = 1 + in_.u8() % kMaxChunks;
    srq_depth_ = 2 + in_.u8() % (kMaxSrqDepth - 1);
    w_ = std::make_unique<World>(use_srq, srq_depth_, use_pool, chunks);
    switch ((h >> 2) % 4) {
      case 0:
        layout_ = {Role::kAdmin};
        break;
      case 1:
        layout_ = {Role::kAdmin, Role::kIo};
        break;
      case 2:
        layout_ = {Role::kAdmin, Role::kIo, Role::kIo};
        break;
      case 3:
        layout_ = {Role::kDiscovery, Role::kAdmin, Role::kIo};
        break;
    }
    for (size_t i = 0; i < layout_.size(); ++i) open(i);
    check();
  }

  ~Session() {
    for (auto& q : queues_) q.reset();  // before the world, whatever happened
  }

  void run() {
    while (!in_.empty()) {
      switch (in_.u8() % 12) {
        case 0:
        case 1:
        case 2:
          send_command();
          break;
        case 3:
          send_raw();
          break;
        case 4:
          complete_read();
          break;
        case 5:
          complete_send();
          break;
        case 6:
          complete_io();
          break;
        case 7:
          inject();
          break;
        case 8:
          advance_time();
          break;
        case 9:
          stop();
          (void)sweep();
          break;
        case 10:
          reopen();
          break;
        case 11:
          round();
          break;
      }
      after_event();
    }
    finish();
  }

 private:
  FuzzQueue* queue(size_t i) { return i < queues_.size() ? queues_[i].get() : nullptr; }

  // A connection for layout slot `i` (its shape from three input bytes).
  void open(size_t i) {
    const Role role = layout_[i];
    QueueShape shape;
    const uint32_t most = role == Role::kIo ? kIoQueueSize : kAdminQueueSize;
    shape.queue_size = 2 + in_.u8() % (most - 1);
    shape.send_depth = 2 + in_.u8() % 8;
    shape.read_depth = 1 + in_.u8() % 8;
    uint16_t qid = 0;
    if (role == Role::kIo) {  // the I/O queues are qid 1 and 2, in layout order
      qid = 1;
      for (size_t k = 0; k < i; ++k) qid += layout_[k] == Role::kIo;
    }
    queues_[i] = std::make_unique<FuzzQueue>(*w_, role, qid, shape, ++serial_);
  }

  // The NVM admin queue's controller, for an I/O queue's Connect (1 when there is none).
  uint16_t admin_cntlid() const {
    for (const auto& q : queues_) {
      if (q && q->role() == Role::kAdmin && q->processor().controller() != nullptr) {
        return q->processor().controller()->cntlid();
      }
    }
    return 1;
  }

  struct Capsule {
    proto::Sqe sqe{};
    std::vector<uint8_t> data;  // host to controller: what the command carries
    uint32_t want = 0;          // the data phase's bytes (either direction)
    bool to_controller = false;
  };

  static uint32_t nsid_of(uint8_t v) {
    static constexpr uint32_t kNsids[] = {1, 3, 2, 1, 0xFFFFFFFF, 3, 0, 9};
    return kNsids[v % 8];
  }

  // A keyed SGL of `length` bytes whose rkey names `data` in the host's memory.
  void keyed(proto::SglDescriptor& d, uint32_t length, bool invalidate,
             const std::vector<uint8_t>& data) {
    const uint32_t rkey = w_->next_rkey++;
    if (!data.empty()) w_->host_memory[rkey] = data;
    (void)encode_keyed_sgl(d, uint64_t{rkey} << 16, length & proto::kKeyedSglMaxLength, rkey,
                           invalidate);
  }

  // A command of the admin, Fabrics or NVM command set, from 8 bytes: queue, kind, variant,
  // value (2 bytes), count, SGL shape, capsule length.
  void send_command() {
    const size_t qi = in_.u8() % kMaxQueues;
    const uint8_t kind = in_.u8() % 14;
    const uint8_t v = in_.u8();
    const uint16_t x = in_.u16();
    const uint8_t n = in_.u8();
    const uint8_t s = in_.u8();
    const uint8_t t = in_.u8();
    FuzzQueue* q = queue(qi);
    if (q == nullptr) return;
    Capsule c;
    proto::Sqe& sqe = c.sqe;
    sqe.flags = proto::kFlagsPsdtSgl;
    sqe.cid = next_cid_++;
    switch (kind) {
      case 0: {  // Connect
        auto& cc = reinterpret_cast<proto::ConnectCommand&>(sqe);
        cc.opcode = proto::kOpcodeFabrics;
        cc.fctype = proto::kFctypeConnect;
        cc.qid = (v & 0x02) ? x % 4 : q->qid();
        cc.sqsize = (v & 0x04) ? x % 20 : q->processor().queue_size() - 1;
        cc.kato = (v & 0x08) ? x : 0;
        proto::ConnectData d{};
        std::memset(d.hostid, (v & 0x80) ? 0x22 : kHostId, sizeof(d.hostid));
        if (q->role() == Role::kIo) {
          d.cntlid = (v & 0x10) ? n % 4 : admin_cntlid();
        } else {
          d.cntlid = (v & 0x10) ? n : proto::kAdminQueueCntlid;
        }
        const bool discovery = (q->role() == Role::kDiscovery) != ((v & 0x20) != 0);
        std::strncpy(d.subnqn, discovery ? proto::kDiscoveryNqn : kFuzzSubnqn, sizeof(d.subnqn));
        std::strncpy(d.hostnqn, (v & 0x40) ? kOtherHost : kAllowedHost, sizeof(d.hostnqn));
        c.data.resize(sizeof(d));
        std::memcpy(c.data.data(), &d, sizeof(d));
        c.want = proto::kConnectDataSize;
        c.to_controller = true;
        break;
      }
      case 1: {  // Property Set: CC enable, disable, shutdown, anything
        auto& p = reinterpret_cast<proto::PropertySetCommand&>(sqe);
        p.opcode = proto::kOpcodeFabrics;
        p.fctype = proto::kFctypePropertySet;
        p.attrib = proto::kPropertySize4;
        p.ofst = proto::kPropCc;
        switch (v % 8) {
          case 0:
            p.value = kGoodCc;
            break;
          case 1:
            p.value = 0;
            break;
          case 2:
            p.value = kGoodCc | (proto::kCcShnNormal << proto::kCcShnShift);
            break;
          case 3:
            p.value = kGoodCc | (proto::kCcShnAbrupt << proto::kCcShnShift);
            break;
          case 4:
            p.value = 1;
            break;
          case 5:
            p.value = x | (uint32_t{n} << 16);
            break;
          case 6:
            p.ofst = proto::kPropCsts;
            p.value = x;
            break;
          case 7:
            p.attrib = proto::kPropertySize8;
            p.ofst = proto::kPropCap;
            p.value = x;
            break;
        }
        break;
      }
      case 2: {  // Property Get
        auto& p = reinterpret_cast<proto::PropertyGetCommand&>(sqe);
        p.opcode = proto::kOpcodeFabrics;
        p.fctype = proto::kFctypePropertyGet;
        static constexpr uint32_t kOffsets[] = {proto::kPropCap, proto::kPropVs, proto::kPropCc,
                                                proto::kPropCsts};
        p.ofst = kOffsets[v % 4];
        p.attrib = (v & 0x04) ? proto::kPropertySize8 : proto::kPropertySize4;
        break;
      }
      case 3:  // Identify
        sqe.opcode = proto::kAdminIdentify;
        sqe.cdw10 = v < 224 ? v % 4 : x;
        sqe.nsid = nsid_of(n);
        c.want = 4096;
        break;
      case 4: {  // Get Log Page
        static constexpr uint8_t kLids[] = {0x70, 0x01, 0x02, 0x03, 0xFF};
        const uint32_t numd = (v & 0x80) ? x % 4096 : (n % 2 ? 1023 : 255);
        sqe.opcode = proto::kAdminGetLogPage;
        sqe.cdw10 = kLids[v % 5] | (numd << 16);
        sqe.cdw12 = (v & 0x40) ? x : 0;
        c.want = (numd + 1) * 4;
        break;
      }
      case 5: {  // Set / Get Features
        static constexpr uint8_t kFids[] = {0x07, 0x0F, 0x0B, 0x80, 0x01};
        sqe.opcode = (v & 1) ? proto::kAdminSetFeatures : proto::kAdminGetFeatures;
        sqe.cdw10 = kFids[n % 5];
        sqe.cdw11 = x;
        break;
      }
      case 6:
        sqe.opcode = proto::kAdminAsyncEventRequest;
        break;
      case 7:
        sqe.opcode = proto::kAdminKeepAlive;
        break;
      case 8:                          // Read
      case 9: {                        // Write
        const uint32_t nlb0 = n % 20;  // beyond MDTS from 16 LBAs
        const uint64_t slba = x % 160;
        sqe.opcode = kind == 8 ? proto::kNvmRead : proto::kNvmWrite;
        sqe.nsid = nsid_of(v);
        sqe.cdw10 = static_cast<uint32_t>(slba);
        sqe.cdw12 = nlb0 | ((v & 0x10) ? 1u << 30 : 0);  // FUA
        c.want = (nlb0 + 1) * kLbaSize;
        if (kind == 9) {
          c.to_controller = true;
          c.data.resize(c.want);
          for (size_t i = 0; i < c.data.size(); ++i) c.data[i] = static_cast<uint8_t>(i * 131);
        }
        break;
      }
      case 10:  // Flush (nsid FFFFFFFFh: every namespace, one backend operation each)
        sqe.opcode = proto::kNvmFlush;
        sqe.nsid = nsid_of(v);
        break;
      case 11: {  // Dataset Management: ranges, deallocated one backend operation each
        const uint32_t nr0 = n % 8;
        sqe.opcode = proto::kNvmDatasetManagement;
        sqe.nsid = nsid_of(v);
        sqe.cdw10 = nr0;
        sqe.cdw11 = (v & 0x10) ? 1u << 2 : 0;  // AD
        c.want = (nr0 + 1) * 16;
        c.to_controller = true;
        c.data.resize(c.want);
        for (uint32_t i = 0; i <= nr0; ++i) {
          const uint32_t nlb = ((x >> 8) + i) % 9;             // 0: a range to skip
          const uint64_t slba = ((x & 0xFF) + 13u * i) % 136;  // beyond the namespace from 128
          std::memcpy(c.data.data() + i * 16 + 4, &nlb, 4);
          std::memcpy(c.data.data() + i * 16 + 8, &slba, 8);
        }
        break;
      }
      case 12:  // Write Zeroes (DEAC: punch a hole)
        sqe.opcode = proto::kNvmWriteZeroes;
        sqe.nsid = nsid_of(v);
        sqe.cdw10 = x % 140;
        sqe.cdw12 = (n % 40) | ((v & 0x10) ? 1u << 25 : 0);
        break;
      case 13:  // the rest: Abort, Fabrics Disconnect, any opcode, any FCTYPE
        switch (n % 4) {
          case 0:
            sqe.opcode = proto::kAdminAbort;
            sqe.cdw10 = x;
            break;
          case 1:
            sqe.opcode = proto::kOpcodeFabrics;
            reinterpret_cast<proto::FabricsCommand&>(sqe).fctype = proto::kFctypeDisconnect;
            break;
          case 2:
            sqe.opcode = static_cast<uint8_t>(x);
            sqe.nsid = nsid_of(v);
            break;
          case 3:
            sqe.opcode = proto::kOpcodeFabrics;
            reinterpret_cast<proto::FabricsCommand&>(sqe).fctype = static_cast<uint8_t>(x);
            break;
        }
        break;
    }

    // SGL1 (a Fabrics command's SGL1 is at DPTR too).
    std::vector<uint8_t> in_capsule;
    switch (s % 8) {
      case 0:
      case 1:
      case 2:
      case 3:  // what a host sends: in-capsule when even and it fits, else keyed
        if (c.want == 0) {
          encode_null_sgl(sqe.dptr);
        } else if (c.to_controller && (s & 1) == 0 && c.want <= kInCapsuleBytes) {
          encode_in_capsule_sgl(sqe.dptr, 0, c.want);
          in_capsule = c.data;
        } else {
          keyed(sqe.dptr, c.want, false, c.data);
        }
        break;
      case 4:  // keyed, another length
        keyed(sqe.dptr, (s & 0x80) ? c.want + (x >> 8) : x, false, c.data);
        break;
      case 5: {  // in-capsule at an offset, maybe past the area
        const uint32_t offset = (s & 0x80) ? x : (x % 8) * 512;
        encode_in_capsule_sgl(sqe.dptr, offset, c.want);
        in_capsule.assign(std::min<size_t>(kInCapsuleBytes, size_t{offset} + c.data.size()), 0);
        for (size_t i = 0; i < c.data.size() && offset + i < in_capsule.size(); ++i) {
          in_capsule[offset + i] = c.data[i];
        }
        break;
      }
      case 6:
        encode_null_sgl(sqe.dptr);
        break;
      case 7:  // keyed with Invalidate
        keyed(sqe.dptr, c.want, true, c.data);
        break;
    }
    deliver(*q, sqe, in_capsule, capsule_length(t, x, in_capsule.size()));
  }

  // The capsule's byte count: the SQE and its data normally; shorter than an SQE, the data
  // cut short, or anything up to the receive's size otherwise.
  static uint32_t capsule_length(uint8_t t, uint16_t x, size_t data) {
    const auto full = static_cast<uint32_t>(kSqeBytes + data);
    switch (t % 16) {
      case 0:
        return (t / 16u) * 4;
      case 1:
        return kSqeBytes + x % (kInCapsuleBytes + 1);
      case 2:
        return kSqeBytes + static_cast<uint32_t>(data / 2);
      default:
        return full;
    }
  }

  // Any 64 bytes as an SQE (PSDT usually right) with in-capsule bytes; the same bytes are the
  // host's memory under its SGL1 key.
  void send_raw() {
    const size_t qi = in_.u8() % kMaxQueues;
    proto::Sqe sqe = in_.object<proto::Sqe>();
    const uint8_t t = in_.u8();
    const uint16_t len = in_.u16() % (kInCapsuleBytes + 1);
    auto data = in_.bytes(len);
    FuzzQueue* q = queue(qi);
    if (q == nullptr) return;
    if (t % 4 != 0) sqe.flags = proto::kFlagsPsdtSgl;
    std::vector<uint8_t> bytes(data.begin(), data.end());
    if (proto::sgl_type(sqe.dptr.id) == proto::kSglTypeKeyedDataBlock) {
      const uint32_t rkey = sqe.dptr.keyed.key;  // a packed field: copied, never bound
      w_->host_memory[rkey] = bytes;
    }
    deliver(*q, sqe, bytes, capsule_length(t, len, bytes.size()));
  }

  void deliver(FuzzQueue& q, const proto::Sqe& sqe, std::span<const uint8_t> in_capsule,
               uint32_t byte_len) {
    q.deliver(sqe, in_capsule, byte_len);
  }

  // An RDMA READ of a queue completes: all the host's data (mode 0-4), all of it with its start
  // from the input (5), part of it (6), none (7).
  void complete_read() {
    const size_t qi = in_.u8() % kMaxQueues;
    const uint8_t i = in_.u8();
    const uint8_t mode = in_.u8();
    std::span<const uint8_t> changed;
    if (mode % 8 == 5) changed = in_.bytes(in_.u8());
    FuzzQueue* q = queue(qi);
    if (q == nullptr) return;
    uint32_t placed = ~uint32_t{0};
    if (mode % 8 == 6) placed = (mode / 8u) * 64;
    if (mode % 8 == 7) placed = 0;
    q->complete_read(i, placed, changed);
  }

  void complete_send() {
    const size_t qi = in_.u8() % kMaxQueues;
    const uint8_t i = in_.u8();
    FuzzQueue* q = queue(qi);
    if (q != nullptr) q->complete_send(i);
  }

  // A backend operation completes, any of them: success, or an errno.
  void complete_io() {
    const uint8_t i = in_.u8();
    const uint8_t r = in_.u8();
    FuzzEngine& e = w_->engine;
    if (e.ops().empty()) return;
    static constexpr int kErrors[] = {EIO, EOPNOTSUPP, ENOSPC, EINVAL, EAGAIN};
    e.complete(i % e.ops().size(), r % 16 < 11 ? 0 : kErrors[(r % 16) - 11]);
  }

  // The transport's failures: the host disconnects, a receive cannot be posted again, the
  // queue's buffers cannot be set up at its Connect, a work completion with an error.
  void inject() {
    const size_t qi = in_.u8() % kMaxQueues;
    const uint8_t k = in_.u8();
    FuzzQueue* q = queue(qi);
    if (q == nullptr) return;
    switch (k % 4) {
      case 0:
        q->request_disconnect("the host disconnected");
        break;
      case 1:
        q->fail_next_repost();
        break;
      case 2:
        q->fail_next_setup();
        break;
      case 3:
        q->fail("completion error: injected");
        break;
    }
  }

  void advance_time() {
    elapsed_ += std::chrono::milliseconds(uint32_t{in_.u16()} * 10);
    auto now = target::Controller::Clock::now() + elapsed_;
    w_->discovery->expire_keep_alives(now);
    w_->nvm->expire_keep_alives(now);
  }

  // As EventLoop::sweep: a queue being torn down is destroyed once no backend operation of it
  // is in flight (one destroyed may ask others to go). True when any was destroyed.
  bool sweep() {
    bool removed = false;
    for (bool again = true; again;) {
      again = false;
      for (auto& q : queues_) {
        if (q && q->wants_teardown() && q->pipeline().backend_in_flight() == 0) {
          q->check();
          q.reset();
          check();
          again = removed = true;
          break;
        }
      }
    }
    return removed;
  }

  // An odd byte: queue (byte >> 1) goes as when the target stops (destroyed without being
  // asked to disconnect first), unless a backend operation of it is in flight.
  void stop() {
    const uint8_t b = in_.u8();
    const size_t qi = (b >> 1) % kMaxQueues;
    FuzzQueue* q = queue(qi);
    if ((b & 1) == 0 || q == nullptr || q->pipeline().backend_in_flight() > 0) return;
    q->check();
    queues_[qi].reset();
    check();
  }

  // A new connection in the place of a queue that is gone.
  void reopen() {
    const size_t qi = in_.u8() % kMaxQueues;
    if (qi >= layout_.size() || queues_[qi] != nullptr) {
      (void)in_.bytes(3);
      return;
    }
    open(qi);
  }

  // Completes the oldest READ (with its data) and the oldest response of every queue, and the
  // oldest backend operation (with success), each followed by what the event loop does after
  // an event. True when anything was outstanding.
  bool round() {
    bool any = false;
    for (auto& q : queues_) {
      if (q && q->reads_outstanding() > 0) {
        q->complete_read(0, ~uint32_t{0});
        after_event();
        any = true;
      }
      if (q && q->sends_outstanding() > 0) {
        q->complete_send(0);
        after_event();
        any = true;
      }
    }
    if (!w_->engine.ops().empty()) {
      w_->engine.complete(0, 0);
      after_event();
      any = true;
    }
    return any;
  }

  // What the event loop does after each batch: the pool's waiters are served, a device's
  // shared receive queue keeps half its receives for capsules that are not parked; then every
  // invariant is checked.
  void after_event() {
    if (w_->pool != nullptr) w_->pool->serve();
    evict_srq_parkers();
    check();
  }

  // As EventLoop::evict_srq_parkers: beyond half the shared receive queue in parked capsules,
  // the queue parking the most is torn down.
  void evict_srq_parkers() {
    if (!w_->srq) return;
    const uint32_t share = srq_depth_ / 2;
    for (;;) {
      uint32_t parked = 0;
      FuzzQueue* heaviest = nullptr;
      for (auto& q : queues_) {
        if (!q || q->wants_teardown()) continue;
        const uint32_t held = q->pipeline().parked_receives();
        parked += held;
        if (held > 0 && (heaviest == nullptr || held > heaviest->pipeline().parked_receives())) {
          heaviest = q.get();
        }
      }
      if (parked <= share || heaviest == nullptr) return;
      heaviest->request_disconnect("holds too many shared receives in parked capsules");
    }
  }

  void check() {
    for (auto& q : queues_) {
      if (q) q->check();
    }
    // Backend operations: each its command's own IoRequest, of a live queue, executing, on the
    // command's buffer.
    std::array<uint32_t, kMaxQueues> ios{};
    for (const IoRequest* io : w_->engine.ops()) {
      size_t i = 0;
      while (i < kMaxQueues && (!queues_[i] || queues_[i]->completion() != io->done)) ++i;
      require(i < kMaxQueues, "a backend operation of a queue that is gone");
      const RequestPipeline& p = queues_[i]->pipeline();
      require(io->tag < p.slot_count() && &p.request(io->tag).io == io,
              "a backend operation that is not its slot's IoRequest");
      const Request& r = p.request(io->tag);
      require(r.state == RequestState::kExecuting,
              "a backend operation of a request not executing");
      if (io->op == IoOp::kRead || io->op == IoOp::kWrite) {
        require(io->data >= r.buffer.data() &&
                    io->data + io->length <= r.buffer.data() + r.buffer.size(),
                "a backend read or write outside its command's buffer");
      }
      ++ios[i];
    }
    for (size_t i = 0; i < kMaxQueues; ++i) {
      if (queues_[i]) {
        require(ios[i] == queues_[i]->pipeline().backend_in_flight(),
                "backend operations in flight disagree with the engine's");
      }
    }
    // Shared chunks: each held by one command, as many as the pool has in use.
    ChunkList* pool = w_->pool.get();
    if (pool == nullptr) return;
    std::bitset<kMaxChunks> taken;
    uint32_t total = 0, waiting = 0;
    for (auto& q : queues_) {
      if (!q) continue;
      const RequestPipeline& p = q->pipeline();
      require(p.buffer_waiters() == p.pool_waiters(), "buffer waiters disagree with the pool's");
      waiting += p.pool_waiters();
      if (!q->pooled()) {
        require(p.pool() == nullptr && p.pool_chunks_held() == 0,
                "a queue without the pool holds chunks");
        continue;
      }
      uint32_t mine = 0;
      for (uint32_t s = 0; s < p.slot_count(); ++s) {
        const std::span<uint8_t> b = p.request(s).buffer;
        if (b.empty()) continue;
        const uint8_t* base = w_->chunk_memory.data();
        require(b.data() >= base && b.data() < base + w_->chunk_memory.size() &&
                    (b.data() - base) % pool->chunk_bytes() == 0 && b.size() == pool->chunk_bytes(),
                "a pooled command's buffer is not a chunk");
        const auto index = static_cast<size_t>((b.data() - base) / pool->chunk_bytes());
        require(!taken[index], "one chunk held by two commands");
        taken[index] = true;
        ++mine;
      }
      require(mine == p.pool_chunks_held(), "a queue's chunks held disagree with its commands'");
      total += mine;
    }
    require(total == pool->in_use(), "chunks in use are not the commands' chunks");
    require(waiting == pool->waiting(), "the pool's waiters are not the queues' waiters");
  }

  // The end of the input: every completion delivered until nothing is outstanding, no live
  // queue left with a stuck command, then every queue destroyed (as the event loop stops) and
  // every resource back.
  void finish() {
    // A queue swept gives its chunks back, which may start another queue's waiters.
    for (int rounds = 0; round() || sweep(); after_event()) {
      require(++rounds < 100000, "completions without end");
    }
    for (auto& q : queues_) {
      if (q) q->check_quiet();
    }
    for (auto& q : queues_) {
      if (!q) continue;
      require(q->pipeline().backend_in_flight() == 0, "backend operations at the end");
      q.reset();
      check();
    }
    require(w_->engine.ops().empty(), "backend operations of no queue");
    if (w_->pool != nullptr) {
      require(w_->pool->free_count() == w_->pool->count(), "chunks not given back");
      require(w_->pool->waiting() == 0, "chunk waiters of no queue");
    }
    for (const Receive& r : w_->srq_receives) {
      require(r.state == Receive::State::kPosted, "a shared receive not posted again");
    }
  }

  Input& in_;
  std::unique_ptr<World> w_;
  std::vector<Role> layout_;
  std::array<std::unique_ptr<FuzzQueue>, kMaxQueues> queues_;
  uint32_t srq_depth_ = 0;
  uint32_t serial_ = 0;
  uint16_t next_cid_ = 1;
  std::chrono::milliseconds elapsed_{0};
};

}  // namespace
}  // namespace nvmf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool init = [] {
    nvmf::set_log_level(nvmf::LogLevel::kDebug);  // format every line: peer bytes reach them
    nvmf::set_log_sink(nvmf::fuzz::check_log_line);
    return true;
  }();
  (void)init;
  nvmf::fuzz::Input in(data, size);
  nvmf::fuzz::Session(in).run();
  return 0;
}
