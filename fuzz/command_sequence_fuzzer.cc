// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes sequences of capsules through target::CommandProcessor: up to six queues (admin and
// I/O, discovery and NVM) on one port, opened by CM private data, then Connects, Property
// Get/Set, Identify, Get Log Page, Set/Get Features, Keep Alive, Async Event Requests, I/O with
// arbitrary SGLs, raw SQEs, RDMA READ completions in any order, disconnects and keep-alive time
// passing. State bugs (a command on a queue in the wrong state, a queue freed under another)
// show up as ASan reports or as the invariants below.
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "common/log.h"
#include "common/sgl.h"
#include "common/wire_text.h"
#include "fuzz/fake_target.h"
#include "fuzz/input.h"
#include "proto/fabrics.h"
#include "proto/rdma_cm.h"
#include "target/cm_request.h"
#include "target/testing/fake_queue.h"

namespace nvmf::fuzz {
namespace {

using target::NextStep;

constexpr size_t kQueues = 6;
constexpr uint32_t kGoodCc = 0x00460001;  // EN, IOSQES 6, IOCQES 4

class Session {
 public:
  explicit Session(Input& in) : in_(in) {}
  ~Session() {
    for (auto& q : queues_) q.reset();  // before the target, as the event loop does
  }

  void run() {
    while (!in_.empty()) {
      switch (in_.u8() % 8) {
        case 0:
          open_queue();
          break;
        case 1:
          send_connect();
          break;
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
          close_queue(in_.u8() % kQueues);
          break;
        case 6:
          advance_time();
          break;
        case 7:
          send_command();
          complete_read();
          break;
      }
      reap_disconnected();
    }
  }

 private:
  struct Pending {
    std::vector<uint8_t> data;  // what the host's memory holds at the SGL the READ names
    bool is_connect = false;
  };

  // A CM CONNECT_REQUEST: the private data decides whether a queue is made, and its size.
  void open_queue() {
    size_t slot = in_.u8() % kQueues;
    proto::CmRequestPrivateData pd{};
    uint8_t shape = in_.u8();
    pd.recfmt = (shape & 0x80) ? in_.u16() : proto::kCmRecfmt0;
    pd.qid = (shape & 0x40) ? in_.u16() : in_.u8() % 4;
    pd.hsqsize = in_.u8() % 20;
    pd.hrqsize = in_.u8() % 20;
    size_t len = (shape & 0x20) ? in_.u8() % 40 : sizeof(pd);
    std::vector<uint8_t> bytes(std::max(len, sizeof(pd)));
    std::memcpy(bytes.data(), &pd, sizeof(pd));
    target::CmRequestCheck c = target::check_cm_request({bytes.data(), len}, t_.cm_limits());
    if (!c.accepted()) return;
    require(c.queue_size >= 2 && c.qid <= t_.cm_limits().max_io_queues, "CM accepted bad sizes");
    close_queue(slot);
    queues_[slot] = std::make_unique<FakeQueue>(*t_.nvm, t_.statuses, c.qid, c.queue_size,
                                                t_.nvm->in_capsule_data_size());
    if (shape & 0x10) queues_[slot]->fail_connect_setup();  // buffers could not be set up
    reads_[slot].clear();
  }

  FakeQueue* pick(size_t* slot) {
    *slot = in_.u8() % kQueues;
    return queues_[*slot].get();
  }

  void encode_sgl(proto::SglDescriptor& d, uint32_t want_bytes) {
    switch (in_.u8() % 6) {
      case 0:
        encode_null_sgl(d);
        break;
      case 1:  // keyed, the length the command needs
      case 2:  // keyed, any 24-bit length; 0x4F (invalidate) sometimes
      {
        bool exact = want_bytes != 0 && in_.u8() % 2 == 0;
        uint32_t length = exact ? want_bytes : in_.u32() & proto::kKeyedSglMaxLength;
        uint64_t addr = in_.u64();
        uint32_t rkey = in_.u32();
        bool invalidate = in_.u8() % 4 == 0;
        (void)encode_keyed_sgl(d, addr, length, rkey, invalidate);
      } break;
      case 3:
        encode_in_capsule_sgl(d, in_.u8() % 2 ? 0 : in_.u16(), want_bytes);
        break;
      case 4: {
        uint32_t offset = in_.u32();
        encode_in_capsule_sgl(d, offset, in_.u32());
        break;
      }
      case 5:
        d = in_.object<proto::SglDescriptor>();
        break;
    }
  }

  // The Connect a host would send, with fields the input picks from likely and hostile values.
  void send_connect() {
    size_t slot;
    FakeQueue* q = pick(&slot);
    if (q == nullptr) return;
    proto::Sqe sqe{};
    auto& c = reinterpret_cast<proto::ConnectCommand&>(sqe);
    c.opcode = proto::kOpcodeFabrics;
    c.flags = proto::kFlagsPsdtSgl;
    c.cid = in_.u16();
    c.fctype = proto::kFctypeConnect;
    uint8_t shape = in_.u8();
    c.recfmt = (shape & 0x01) ? in_.u16() : 0;
    c.qid = (shape & 0x02) ? in_.u8() % 4 : q->qid();
    c.sqsize = (shape & 0x04) ? in_.u16() : in_.u8() % 20;
    c.cattr = in_.u8();
    c.kato = (shape & 0x08) ? in_.u32() : (in_.u8() % 4) * 1000;
    proto::ConnectData d{};
    auto hostid = in_.bytes(16);
    Input::copy_to(d.hostid, hostid);
    uint8_t who = in_.u8();
    switch (who % 4) {
      case 0:
        d.cntlid = q->qid() == 0 ? proto::kAdminQueueCntlid : last_cntlid_;
        break;
      case 1:
        d.cntlid = proto::kAdminQueueCntlid;
        break;
      case 2:
        d.cntlid = static_cast<uint16_t>(1 + in_.u8() % 4);  // small, lowest first: guessable
        break;
      case 3:
        d.cntlid = in_.u16();
        break;
    }
    const char* subnqn = (who & 0x10) ? proto::kDiscoveryNqn : kFuzzSubnqn;
    std::strncpy(d.subnqn, subnqn, sizeof(d.subnqn));
    if (who & 0x20) {  // raw bytes, maybe without a terminator
      auto b = in_.bytes(in_.u8() % 2 ? 256 : in_.u8());
      Input::copy_to(d.subnqn, b);
    }
    std::strncpy(d.hostnqn, (who & 0x40) ? kOtherHost : kAllowedHost, sizeof(d.hostnqn));
    if (who & 0x80) {  // a hostile host NQN: any bytes (invalid UTF-8, controls, no NUL)
      std::memset(d.hostnqn, 0, sizeof(d.hostnqn));
      auto b = in_.bytes(in_.u8() % 2 ? 256 : in_.u8());
      Input::copy_to(d.hostnqn, b);
    }
    std::vector<uint8_t> data(sizeof(d));
    std::memcpy(data.data(), &d, sizeof(d));
    bool in_capsule = in_.u8() % 2 == 0;
    if (in_capsule) {
      encode_in_capsule_sgl(c.sgl1, 0, proto::kConnectDataSize);
    } else {
      encode_sgl(c.sgl1, proto::kConnectDataSize);
    }
    deliver(slot, sqe, in_capsule ? std::span<const uint8_t>(data) : std::span<const uint8_t>(),
            data);
  }

  // A well-formed command of the admin or NVM command set, fields from the input.
  void send_command() {
    size_t slot;
    FakeQueue* q = pick(&slot);
    if (q == nullptr) return;
    proto::Sqe sqe{};
    sqe.flags = proto::kFlagsPsdtSgl;
    sqe.cid = in_.u16();
    uint32_t want = 0;
    switch (in_.u8() % 12) {
      case 0: {  // Property Set CC: enable, disable, shutdown, anything
        auto& p = reinterpret_cast<proto::PropertySetCommand&>(sqe);
        p.opcode = proto::kOpcodeFabrics;
        p.fctype = proto::kFctypePropertySet;
        p.attrib = in_.u8() % 8 == 0 ? in_.u8() : proto::kPropertySize4;
        p.ofst = in_.u8() % 8 == 0 ? in_.u32() : proto::kPropCc;
        static constexpr uint32_t kValues[] = {kGoodCc, 0, kGoodCc | (proto::kCcShnNormal << 14),
                                               kGoodCc | (proto::kCcShnAbrupt << 14), 1};
        uint8_t v = in_.u8();
        p.value = v < 200 ? kValues[v % 5] : in_.u64();
        break;
      }
      case 1: {
        auto& p = reinterpret_cast<proto::PropertyGetCommand&>(sqe);
        p.opcode = proto::kOpcodeFabrics;
        p.fctype = proto::kFctypePropertyGet;
        p.attrib = in_.u8() % 2;
        static constexpr uint32_t kOffsets[] = {proto::kPropCap, proto::kPropVs, proto::kPropCc,
                                                proto::kPropCsts};
        p.ofst = kOffsets[in_.u8() % 4];
        break;
      }
      case 2:
        sqe.opcode = proto::kAdminIdentify;
        sqe.nsid = in_.u8() % 4 == 0 ? in_.u32() : 1;
        sqe.cdw10 = in_.u8() % 4 == 0 ? in_.u32() : in_.u8() % 8;
        want = 4096;
        break;
      case 3: {
        sqe.opcode = proto::kAdminGetLogPage;
        static constexpr uint8_t kLids[] = {0x70, 0x01, 0x02, 0x03, 0xFF};
        uint32_t numd = in_.u8() % 2 ? 1023 : in_.u16() % 4096;
        sqe.cdw10 = kLids[in_.u8() % 5] | ((numd & 0xFFFF) << 16);
        sqe.cdw12 = in_.u8() % 2 ? 0 : in_.u32();  // LPOL
        sqe.cdw13 = in_.u8() % 4 ? 0 : in_.u32();  // LPOU
        want = (numd + 1) * 4;
        break;
      }
      case 4:
      case 5: {
        sqe.opcode = in_.u8() % 2 ? proto::kAdminSetFeatures : proto::kAdminGetFeatures;
        static constexpr uint8_t kFids[] = {0x07, 0x0F, 0x0B, 0x80, 0x01};
        sqe.cdw10 = kFids[in_.u8() % 5];
        sqe.cdw11 = in_.u8() % 2 ? in_.u8() : in_.u32();
        break;
      }
      case 6:
        sqe.opcode = proto::kAdminAsyncEventRequest;
        break;
      case 7:
        sqe.opcode = proto::kAdminKeepAlive;
        break;
      case 8:
      case 9:
      case 10: {  // Read, Write, Flush
        static constexpr uint8_t kOps[] = {proto::kNvmRead, proto::kNvmWrite, proto::kNvmFlush};
        sqe.opcode = kOps[in_.u8() % 3];
        sqe.nsid = in_.u8() % 8 == 0 ? in_.u32() : 1;
        uint64_t slba = in_.u8() % 4 == 0 ? in_.u64() : in_.u8();
        uint32_t nlb0 = in_.u8() % 4 == 0 ? in_.u16() : in_.u8() % 40;
        sqe.cdw10 = static_cast<uint32_t>(slba);
        sqe.cdw11 = static_cast<uint32_t>(slba >> 32);
        sqe.cdw12 = nlb0;
        want = sqe.opcode == proto::kNvmFlush ? 0 : (nlb0 + 1) * 512;
        break;
      }
      case 11:
        sqe.opcode = proto::kAdminAbort;
        sqe.cdw10 = in_.u32();
        break;
    }
    if (sqe.opcode == proto::kOpcodeFabrics) {
      encode_sgl(reinterpret_cast<proto::FabricsCommand&>(sqe).sgl1, want);
    } else {
      encode_sgl(sqe.dptr, want);
    }
    std::vector<uint8_t> payload(want);
    auto b = in_.bytes(std::min<size_t>(want, in_.u8() % 2 ? 64 : 0));
    Input::copy_to(payload.data(), b);
    size_t in_capsule = in_.u8() % 2 ? payload.size() : in_.u16() % 9000;
    payload.resize(in_capsule);
    deliver(slot, sqe, payload, payload);
  }

  // Any 64 bytes as an SQE, PSDT usually right, with in-capsule bytes after it.
  void send_raw() {
    size_t slot;
    FakeQueue* q = pick(&slot);
    if (q == nullptr) return;
    auto sqe = in_.object<proto::Sqe>();
    if (in_.u8() % 4 != 0) sqe.flags = proto::kFlagsPsdtSgl;
    auto data = in_.bytes(in_.u16() % 9000);
    std::vector<uint8_t> host(data.begin(), data.end());
    deliver(slot, sqe, data, host);
  }

  // Delivers `sqe` with `in_capsule` bytes; `host_memory` is what an RDMA READ would fetch.
  void deliver(size_t slot, const proto::Sqe& sqe, std::span<const uint8_t> in_capsule,
               std::vector<uint8_t> host_memory) {
    FakeQueue& q = *queues_[slot];
    const bool is_connect =
        sqe.opcode == proto::kOpcodeFabrics &&
        reinterpret_cast<const proto::ConnectCommand&>(sqe).fctype == proto::kFctypeConnect;
    Before before = snapshot(slot);
    auto step = q.deliver(sqe, in_capsule);
    if (!step) return;  // no free slot
    if (*step == NextStep::kReadFromHost) {
      reads_[slot].push_back(Pending{std::move(host_memory), is_connect});
    } else if (q.responses() != before.responses) {
      after_response(slot, is_connect, before);
    }
  }

  void complete_read() {
    size_t slot;
    FakeQueue* q = pick(&slot);
    if (q == nullptr || reads_[slot].empty()) return;
    Pending p = std::move(reads_[slot].front());
    reads_[slot].pop_front();
    if (in_.u8() % 8 == 0) {  // the host changed its memory before the READ
      auto b = in_.bytes(in_.u16() % 1100);
      p.data.assign(b.begin(), b.end());
    }
    Before before = snapshot(slot);
    auto step = q->complete_read(p.data);
    if (step && q->responses() != before.responses) after_response(slot, p.is_connect, before);
  }

  // What a response is checked against: the queue's state before the command ran.
  struct Before {
    uint64_t responses = 0;
    bool had_controller = false;
    std::array<bool, kQueues> others_disconnecting{};
  };
  Before snapshot(size_t slot) const {
    Before b;
    b.responses = queues_[slot]->responses();
    b.had_controller = queues_[slot]->processor().controller() != nullptr;
    for (size_t i = 0; i < kQueues; ++i) {
      b.others_disconnecting[i] = queues_[i] == nullptr || queues_[i]->disconnect_requested();
    }
    return b;
  }

  // Invariants after a response to a command (a Connect when `is_connect`).
  void after_response(size_t slot, bool is_connect, const Before& before) {
    FakeQueue& q = *queues_[slot];
    target::Controller* ctrl = q.processor().controller();
    if (is_connect && q.last_cqe().status == 0) {
      // One Connect per queue (nvmet_install_queue), and a Connect never takes another
      // host's live queue away.
      require(!before.had_controller, "a second Connect on one queue succeeded");
      for (size_t i = 0; i < kQueues; ++i) {
        require(i == slot || before.others_disconnecting[i] || !queues_[i]->disconnect_requested(),
                "a Connect disconnected another live queue");
      }
      if (ctrl != nullptr) last_cntlid_ = ctrl->cntlid();
    }
    if (ctrl == nullptr) return;
    // Access control: a controller of the NVM subsystem belongs to an allowed host, and the
    // queue is the one its controller knows under its qid.
    target::Subsystem* owner = t_.nvm->find_controller(ctrl->cntlid()) == ctrl ? t_.nvm.get()
                               : t_.discovery->find_controller(ctrl->cntlid()) == ctrl
                                   ? t_.discovery.get()
                                   : nullptr;
    require(owner != nullptr, "a queue bound to a controller no subsystem has");
    require(owner->host_allowed(ctrl->hostnqn()),
            "a host reached a subsystem it is not allowed on");
    require(ctrl->queue(q.qid()) == &q.processor(),
            "a connected queue its controller does not know");
  }

  void close_queue(size_t slot) {
    queues_[slot].reset();
    reads_[slot].clear();
  }

  // What the event loop does: queues that asked to go are destroyed after the call returns.
  void reap_disconnected() {
    for (size_t i = 0; i < kQueues; ++i) {
      if (queues_[i] && queues_[i]->disconnect_requested()) close_queue(i);
    }
  }

  void advance_time() {
    elapsed_ += std::chrono::milliseconds(in_.u16() * 10);
    auto now = target::Controller::Clock::now() + elapsed_;
    t_.discovery->expire_keep_alives(now);
    t_.nvm->expire_keep_alives(now);
  }

  Input& in_;
  FakeTarget t_;
  std::array<std::unique_ptr<FakeQueue>, kQueues> queues_;
  std::array<std::deque<Pending>, kQueues> reads_;
  uint16_t last_cntlid_ = 1;
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
