// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for CommandProcessor: Connect, properties, admin and I/O commands, driven in memory
// the way the RDMA transport drives them (no device needed).
#include "target/command_processor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "proto/fabrics.h"
#include "target/control_lock.h"
#include "target/log_limiter.h"
#include "target/port.h"
#include "target/testing/processor_harness.h"

namespace nvmf::target {
namespace {

using namespace nvmf::target::testing;  // NOLINT: the harness vocabulary

class ProcessorTest : public ::testing::Test {
 protected:
  ProcessorTest() {
    ns_ = std::move(Namespace::create_ram(1 << 20, 512)).value();  // 2048 LBAs
    SubsystemConfig cfg;
    cfg.nqn = kNqn;
    cfg.max_io_queues = 4;
    cfg.io_queue_size = 128;
    cfg.mdts = 5;  // 128 KiB
    subsys_ = std::make_unique<Subsystem>(cfg, *ns_, registry_);
    subsys_->set_in_capsule_data_size(kInCapsule);
  }
  ~ProcessorTest() override {
    queues_.clear();
    subsys_.reset();
  }

  TestQueue& queue(uint16_t qid, uint32_t size = 32) {
    queues_.push_back(std::make_unique<TestQueue>(*subsys_, statuses_, qid, size));
    return *queues_.back();
  }
  // An admin queue connected (in-capsule Connect) and enabled; returns it.
  TestQueue& admin() {
    TestQueue& a = queue(0);
    auto data = connect_data(proto::kAdminQueueCntlid);
    EXPECT_EQ(a.submit(connect_sqe(0, 31, true), data), NextStep::kRespond);
    EXPECT_EQ(a.status(), kStatusSuccess);
    EXPECT_EQ(a.submit(property_set_sqe(proto::kPropCc, kGoodCc)), NextStep::kRespond);
    EXPECT_EQ(a.status(), kStatusSuccess);
    return a;
  }
  TestQueue& io(uint16_t cntlid, uint16_t qid = 1) {
    TestQueue& q = queue(qid, 128);
    auto data = connect_data(cntlid);
    EXPECT_EQ(q.submit(connect_sqe(qid, 127, true), data), NextStep::kRespond);
    EXPECT_EQ(q.status(), kStatusSuccess);
    return q;
  }

  std::unique_ptr<Namespace> ns_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::unique_ptr<Subsystem> subsys_;
  std::vector<std::unique_ptr<TestQueue>> queues_;
};

// --------------------------------------------------------------------------- Keep Alive --

using Clock = std::chrono::steady_clock;

TEST(KeepAliveTimer, WholeSecondsRoundedUpAndZeroMeansNone) {
  Controller c(1, kHostNqn, {}, 0, 1, 32, 0x00010300);
  EXPECT_FALSE(c.keep_alive_deadline().has_value());
  const Clock::time_point t0 = Clock::now();
  c.set_kato_ms(1500, t0);  // nvmet: DIV_ROUND_UP(1500, 1000) = 2 s
  ASSERT_TRUE(c.keep_alive_deadline().has_value());
  EXPECT_EQ(*c.keep_alive_deadline() - t0, std::chrono::seconds(2));
  c.set_kato_ms(5000, t0);
  EXPECT_EQ(*c.keep_alive_deadline() - t0, std::chrono::seconds(5));
  c.keep_alive(t0 + std::chrono::seconds(3));  // a Keep Alive restarts the timer
  EXPECT_EQ(*c.keep_alive_deadline() - t0, std::chrono::seconds(8));
  c.set_kato_ms(0, t0);
  EXPECT_FALSE(c.keep_alive_deadline().has_value());
}

TEST_F(ProcessorTest, KeepAliveCommandRestartsTheTimer) {
  TestQueue& a = admin();  // Connect KATO 5000 ms
  Controller* c = subsys_->find_controller(1);
  ASSERT_NE(c, nullptr);
  const Clock::time_point before = Clock::now();
  ASSERT_EQ(a.submit(base_sqe(proto::kAdminKeepAlive)), NextStep::kRespond);
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_GE(*c->keep_alive_deadline(), before + std::chrono::seconds(5));
  EXPECT_LE(*c->keep_alive_deadline(), Clock::now() + std::chrono::seconds(5));
}

TEST_F(ProcessorTest, ExpiredKeepAliveFreesTheControllerAndDisconnectsItsQueues) {
  TestQueue& a = admin();
  TestQueue& q = io(1);
  TestQueue& a2 = admin();  // a second controller (cntlid 2), also KATO 5000 ms
  Controller* c1 = subsys_->find_controller(1);
  Controller* c2 = subsys_->find_controller(2);
  ASSERT_NE(c1, nullptr);
  ASSERT_NE(c2, nullptr);
  const Clock::time_point t0 = Clock::now();
  const auto s = [t0](int n) { return t0 + std::chrono::seconds(n); };
  c1->keep_alive(s(0));
  c2->keep_alive(s(2));

  // Before any deadline nothing happens; the earliest deadline is controller 1's.
  auto next = subsys_->expire_keep_alives(s(4));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, s(5));
  EXPECT_EQ(subsys_->controller_count(), 2u);

  // The set-up commands (Connect, Property Set) were traffic (TBKAS): each timer that runs out
  // over them restarts instead of expiring.
  next = subsys_->expire_keep_alives(s(5));
  EXPECT_EQ(*next, s(7));  // controller 2's; controller 1's is now s(10)
  next = subsys_->expire_keep_alives(s(7));
  EXPECT_EQ(*next, s(10));
  EXPECT_EQ(subsys_->controller_count(), 2u);

  // An I/O command on controller 1's I/O queue is traffic too: its timer restarts at s(10).
  q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
  next = subsys_->expire_keep_alives(s(10));
  EXPECT_EQ(subsys_->controller_count(), 2u);
  EXPECT_EQ(*next, s(12));
  EXPECT_TRUE(a.link.reasons.empty());

  // Quiet from then on: controller 2 goes at s(12), controller 1 at s(15), each with every
  // queue asked to disconnect (the admin queue included, as nvmet's fatal error).
  next = subsys_->expire_keep_alives(s(12));
  EXPECT_EQ(subsys_->find_controller(2), nullptr);
  EXPECT_EQ(a2.link.reasons.size(), 1u);
  EXPECT_EQ(*next, s(15));
  next = subsys_->expire_keep_alives(s(15));
  EXPECT_EQ(subsys_->controller_count(), 0u);
  EXPECT_EQ(a.link.reasons.size(), 1u);
  EXPECT_EQ(q.link.reasons.size(), 1u);
  EXPECT_FALSE(next.has_value());
}

TEST_F(ProcessorTest, KatoZeroBySetFeaturesStopsTheTimer) {
  TestQueue& a = admin();
  proto::Sqe sf = base_sqe(proto::kAdminSetFeatures);
  sf.cdw10 = proto::kFeatureKeepAliveTimer;
  sf.cdw11 = 0;
  ASSERT_EQ(a.submit(sf), NextStep::kRespond);
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_FALSE(subsys_->expire_keep_alives(Clock::now() + std::chrono::hours(1)).has_value());
  EXPECT_EQ(subsys_->controller_count(), 1u);
  EXPECT_TRUE(a.link.reasons.empty());
}

// ------------------------------------------------------------------------------- Connect --

TEST_F(ProcessorTest, AdminConnectInCapsuleAllocatesController) {
  TestQueue& a = queue(0);
  auto data = connect_data(proto::kAdminQueueCntlid);
  ASSERT_EQ(a.submit(connect_sqe(0, 31, true), data), NextStep::kRespond);
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_EQ(a.req.cqe.dw0, 1u);
  EXPECT_EQ(a.req.cqe.cid, 1);
  EXPECT_EQ(a.req.cqe.sqid, 0);
  EXPECT_EQ(a.req.cqe.sqhd, 1);
  ASSERT_NE(subsys_->find_controller(1), nullptr);
  EXPECT_EQ(subsys_->find_controller(1)->hostnqn(), kHostNqn);
  EXPECT_EQ(subsys_->find_controller(1)->kato_ms(), 5000u);
}

TEST_F(ProcessorTest, AdminConnectKeyedNeedsRdmaRead) {
  TestQueue& a = queue(0);
  ASSERT_EQ(a.submit(connect_sqe(0, 31, false)), NextStep::kReadFromHost);
  EXPECT_EQ(a.req.transfer_bytes, proto::kConnectDataSize);
  EXPECT_EQ(a.req.sgl.addr, 0x1000u);
  EXPECT_EQ(a.req.sgl.rkey, 0x77u);
  auto data = connect_data(proto::kAdminQueueCntlid);
  std::memcpy(a.buffer.data(), data.data(), data.size());
  ASSERT_EQ(a.proc.data_arrived(a.req), NextStep::kRespond);
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_EQ(a.req.cqe.dw0, 1u);
}

TEST_F(ProcessorTest, ConnectWrongSubnqnPointsAtIt) {
  TestQueue& a = queue(0);
  auto data = connect_data(proto::kAdminQueueCntlid, "nqn.other");
  a.submit(connect_sqe(0, 31, true), data);
  EXPECT_EQ(a.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_data(256));
  EXPECT_EQ(subsys_->controller_count(), 0u);
}

TEST_F(ProcessorTest, ConnectRejectsBadFields) {
  TestQueue& a = queue(0);
  a.submit(connect_sqe(0, 31, true), connect_data(5));
  EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_data(16));
  a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid, kNqn, ""));
  EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_data(512));
  a.submit(connect_sqe(0, 0, true), connect_data(proto::kAdminQueueCntlid));
  EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_sqe(44));
  a.submit(connect_sqe(0, 32, true), connect_data(proto::kAdminQueueCntlid));  // > 32 entries
  EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_sqe(44));
  a.submit(connect_sqe(1, 31, true), connect_data(proto::kAdminQueueCntlid));  // CM said qid 0
  EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_sqe(42));
  proto::Sqe s = connect_sqe(0, 31, true);
  reinterpret_cast<proto::ConnectCommand&>(s).recfmt = 1;
  a.submit(s, connect_data(proto::kAdminQueueCntlid));
  EXPECT_EQ(a.status(),
            make_status(proto::kSctCommandSpecific, proto::kScIncompatibleFormat, true));
  EXPECT_EQ(subsys_->controller_count(), 0u);
}

TEST_F(ProcessorTest, CommandBeforeConnectIsSequenceError) {
  TestQueue& a = queue(0);
  a.submit(identify_sqe(proto::kCnsController));
  EXPECT_EQ(a.status(), generic_status(proto::kScCommandSequenceError));
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc));  // Fabrics, but not Connect
  EXPECT_EQ(a.status(), generic_status(proto::kScCommandSequenceError));
  TestQueue& q = queue(1, 128);
  q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
  EXPECT_EQ(q.status(), generic_status(proto::kScCommandSequenceError));
  EXPECT_EQ(subsys_->controller_count(), 0u);
  EXPECT_EQ(a.link.accepts + q.link.accepts, 0);
}

// ------------------------------------------------------------ one Connect per queue (#10) --

constexpr uint16_t kSequenceError = generic_status(proto::kScCommandSequenceError);

TEST_F(ProcessorTest, SecondConnectOnAConnectedAdminQueueIsSequenceError) {
  TestQueue& a = admin();
  ASSERT_EQ(a.proc.controller(), subsys_->find_controller(1));
  a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
  EXPECT_EQ(a.status(), kSequenceError);
  EXPECT_EQ(subsys_->controller_count(), 1u);
  EXPECT_EQ(a.proc.controller(), subsys_->find_controller(1));
  EXPECT_EQ(a.link.accepts, 1);
  // The queue is still usable.
  a.submit(base_sqe(proto::kAdminKeepAlive));
  EXPECT_EQ(a.status(), kStatusSuccess);
}

TEST_F(ProcessorTest, ConnectWhileOneIsInProgressIsSequenceError) {
  TestQueue& a = queue(0);
  // The first Connect's data comes by RDMA READ; a second one arrives meanwhile.
  ASSERT_EQ(a.submit(connect_sqe(0, 31, false)), NextStep::kReadFromHost);
  Request second;
  proto::Sqe second_sqe{};
  proto::Sqe in_capsule = connect_sqe(0, 31, true);
  in_capsule.cid = 2;
  auto data = connect_data(proto::kAdminQueueCntlid);
  for (size_t i = 0; i < data.size(); ++i) a.pages[0][i] = data[i];
  ASSERT_EQ(a.submit_other(second, in_capsule, second_sqe, static_cast<uint32_t>(data.size())),
            NextStep::kRespond);
  EXPECT_EQ(second.cqe.status, kSequenceError);
  EXPECT_EQ(second.cqe.cid, 2);
  EXPECT_EQ(subsys_->controller_count(), 0u);
  // The first one's data arrives: it alone creates the controller.
  std::memcpy(a.buffer.data(), data.data(), data.size());
  ASSERT_EQ(a.proc.data_arrived(a.req), NextStep::kRespond);
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_EQ(subsys_->controller_count(), 1u);
  EXPECT_EQ(a.link.accepts, 1);
}

TEST_F(ProcessorTest, FailedConnectChangesNothingAndMayBeRetried) {
  // Two subsystems on a port: a Connect naming the discovery subsystem that fails (empty
  // HOSTNQN) must leave the queue where it was, bound to nothing.
  SubsystemConfig dcfg;
  dcfg.nqn = proto::kDiscoveryNqn;
  dcfg.discovery = true;
  Subsystem discovery(dcfg, registry_);
  Port port(DiscoveryAddress{}, discovery);
  port.link(*subsys_);
  {
    TestQueue& a = queue(0);
    ASSERT_EQ(a.submit(connect_sqe(0, 31, false)), NextStep::kReadFromHost);
    auto bad = connect_data(proto::kAdminQueueCntlid, proto::kDiscoveryNqn, "");
    std::memcpy(a.buffer.data(), bad.data(), bad.size());
    ASSERT_EQ(a.proc.data_arrived(a.req), NextStep::kRespond);
    EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_data(512));
    EXPECT_FALSE(a.proc.connected());
    EXPECT_EQ(a.link.accepts, 0);
    EXPECT_EQ(discovery.controller_count() + subsys_->controller_count(), 0u);
    // A Connect after a failed one is a first Connect again (nvmet: the queue has no
    // controller yet), and it lands on the subsystem it names.
    a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
    ASSERT_EQ(a.status(), kStatusSuccess);
    EXPECT_EQ(subsys_->controller_count(), 1u);
    EXPECT_EQ(discovery.controller_count(), 0u);
    a.proc.detach();  // frees the controller in the subsystem that owns it
    EXPECT_EQ(subsys_->controller_count(), 0u);
  }
  queues_.clear();
}

TEST_F(ProcessorTest, ConnectWhoseResourcesFailIsInternalErrorAndBindsNothing) {
  TestQueue& a = queue(0);
  a.link.accept_ok = false;
  a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
  EXPECT_EQ(a.status(), generic_status(proto::kScInternalError, false));
  EXPECT_EQ(subsys_->controller_count(), 0u);
  EXPECT_FALSE(a.proc.connected());
}

TEST_F(ProcessorTest, IoConnectForALiveQidIsRefusedAndTheLiveQueueKept) {
  admin();
  TestQueue& live = io(1);
  EXPECT_EQ(live.link.accepts, 1);
  TestQueue& intruder = queue(1, 128);
  intruder.submit(connect_sqe(1, 127, true), connect_data(1));
  EXPECT_EQ(intruder.status(), kSequenceError);
  EXPECT_EQ(intruder.link.accepts, 0);
  EXPECT_EQ(subsys_->find_controller(1)->queue(1), &live.proc);
  EXPECT_TRUE(live.link.reasons.empty());
  EXPECT_EQ(live.proc.controller(), subsys_->find_controller(1));
  live.submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
  EXPECT_EQ(live.status(), kStatusSuccess);
  // The refused queue's teardown must not unbind the live one either.
  intruder.proc.detach();
  EXPECT_EQ(subsys_->find_controller(1)->queue(1), &live.proc);
  // Once the live queue is gone, the qid may connect again.
  live.proc.detach();
  TestQueue& again = queue(1, 128);
  again.submit(connect_sqe(1, 127, true), connect_data(1));
  EXPECT_EQ(again.status(), kStatusSuccess);
}

// An I/O queue connected while the controller was enabled, then CC.EN cleared: its commands are
// Command Sequence Error until the host enables the controller again (nvmet_check_ctrl_status).
TEST_F(ProcessorTest, IoCommandWhileNotReadyIsSequenceError) {
  TestQueue& a = admin();
  TestQueue& q = io(1);
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc & ~proto::kCcEn));
  ASSERT_EQ(a.status(), kStatusSuccess);
  q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
  EXPECT_EQ(q.status(), kSequenceError);
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc));
  q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
  EXPECT_EQ(q.status(), kStatusSuccess);
}

TEST_F(ProcessorTest, ControllersPerHostAndPerPortAreLimited) {
  SubsystemConfig cfg = subsys_->config();
  cfg.max_controllers = 3;
  cfg.max_controllers_per_host = 2;
  Subsystem limited(cfg, *ns_, registry_);
  limited.set_in_capsule_data_size(kInCapsule);
  const uint16_t busy =
      make_status(proto::kSctCommandSpecific, proto::kScControllerBusy, /*dnr=*/false);
  std::vector<std::unique_ptr<TestQueue>> qs;
  auto connect_as = [&](const char* hostnqn) {
    qs.push_back(std::make_unique<TestQueue>(limited, statuses_, 0, 32));
    qs.back()->submit(connect_sqe(0, 31, true),
                      connect_data(proto::kAdminQueueCntlid, kNqn, hostnqn));
    return qs.back()->status();
  };
  EXPECT_EQ(connect_as(kHostNqn), kStatusSuccess);
  EXPECT_EQ(connect_as(kHostNqn), kStatusSuccess);
  EXPECT_EQ(connect_as(kHostNqn), busy);  // a third for the same host NQN
  EXPECT_EQ(qs.back()->link.accepts, 0);
  EXPECT_EQ(connect_as("nqn.2014-08.org.nvmexpress:uuid:other"), kStatusSuccess);
  EXPECT_EQ(connect_as("nqn.2014-08.org.nvmexpress:uuid:third"), busy);  // 3 on the port
  EXPECT_EQ(limited.controller_count(), 3u);
  qs[0]->proc.detach();  // one going away makes room
  EXPECT_EQ(connect_as("nqn.2014-08.org.nvmexpress:uuid:third"), kStatusSuccess);
  qs.clear();
}

// A host that connects and disconnects its admin queue in a loop causes three INFO lines each
// time (controller created, admin queue connected, controller freed): each kind is limited to
// kConnectionLogBurst lines a second, with the count left out on the next line logged.
TEST_F(ProcessorTest, ReconnectStormLogsABurstOfLinesASecond) {
  std::vector<std::string> lines;
  set_log_sink([&](std::string_view line) { lines.emplace_back(line); });
  constexpr int kRounds = 300;
  int connected = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < kRounds; ++i) {
    TestQueue a(*subsys_, statuses_, 0, 32);
    a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
    connected += a.status() == kStatusSuccess;
    a.proc.detach();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  set_log_sink({});
  EXPECT_EQ(connected, kRounds);
  EXPECT_EQ(subsys_->controller_count(), 0u);
  // Each window of 1 s allows a burst; the loop may touch one window more than it lasted.
  const auto bound = static_cast<int>(kConnectionLogBurst * (static_cast<int>(seconds) + 2));
  for (const char* kind : {"admin queue connected", " created for ", " freed ("}) {
    int n = 0;
    for (const std::string& l : lines) n += l.find(kind) != std::string::npos;
    EXPECT_LE(n, bound) << kind << " in " << seconds << " s";
    EXPECT_LT(n, kRounds) << kind;
  }
}

// A host that toggles CC.EN, or shuts its controller down, in a loop: the INFO line of each
// transition is limited like the connection lines (kConnectionLogBurst a second per kind).
TEST_F(ProcessorTest, CcTransitionStormLogsABurstOfLinesASecond) {
  TestQueue& a = admin();
  std::vector<std::string> lines;
  set_log_sink([&](std::string_view line) { lines.emplace_back(line); });
  constexpr int kRounds = 300;
  int answered = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < kRounds; ++i) {
    a.submit(property_set_sqe(proto::kPropCc, kGoodCc & ~proto::kCcEn));
    answered += a.status() == kStatusSuccess;
    a.submit(property_set_sqe(proto::kPropCc, kGoodCc));
    answered += a.status() == kStatusSuccess;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  set_log_sink({});
  EXPECT_EQ(answered, 2 * kRounds);
  const auto bound = static_cast<int>(kConnectionLogBurst * (static_cast<int>(seconds) + 2));
  int n = 0;
  for (const std::string& l : lines) {
    n += l.find(": enabled") != std::string::npos ||
         l.find(": disabled (reset)") != std::string::npos;
  }
  EXPECT_GE(n, 1) << "the first transitions are logged";
  EXPECT_LE(n, bound) << "in " << seconds << " s";
}

TEST_F(ProcessorTest, DiscoveryControllerWithKatoZeroGetsNvmetDefault) {
  SubsystemConfig dcfg;
  dcfg.nqn = proto::kDiscoveryNqn;
  dcfg.discovery = true;
  Subsystem discovery(dcfg, registry_);
  {
    TestQueue d(discovery, statuses_, 0, 32);
    proto::Sqe s = connect_sqe(0, 31, true);
    reinterpret_cast<proto::ConnectCommand&>(s).kato = 0;
    d.submit(s, connect_data(proto::kAdminQueueCntlid, proto::kDiscoveryNqn));
    ASSERT_EQ(d.status(), kStatusSuccess);
    ASSERT_NE(discovery.find_controller(1), nullptr);
    EXPECT_EQ(discovery.find_controller(1)->kato_ms(), 120000u);
  }
  // An NVM subsystem's controller keeps KATO 0 (no timer), as nvmet.
  TestQueue& a = queue(0);
  proto::Sqe s = connect_sqe(0, 31, true);
  reinterpret_cast<proto::ConnectCommand&>(s).kato = 0;
  a.submit(s, connect_data(proto::kAdminQueueCntlid));
  ASSERT_EQ(a.status(), kStatusSuccess);
  EXPECT_EQ(subsys_->find_controller(a.req.cqe.dw0)->kato_ms(), 0u);
}

TEST_F(ProcessorTest, AdminCommandBeforeEnableIsSequenceError) {
  TestQueue& a = queue(0);
  a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
  ASSERT_EQ(a.status(), kStatusSuccess);
  a.submit(identify_sqe(proto::kCnsController));
  EXPECT_EQ(a.status(), generic_status(proto::kScCommandSequenceError));
}

TEST_F(ProcessorTest, IoConnectChecksControllerAndHost) {
  admin();
  TestQueue& q = queue(1, 128);
  q.submit(connect_sqe(1, 127, true), connect_data(9));
  EXPECT_EQ(q.req.cqe.dw0, proto::connect_invalid_param_in_data(16));
  q.submit(connect_sqe(1, 127, true), connect_data(1, kNqn, "nqn.someone-else"));
  EXPECT_EQ(q.req.cqe.dw0, proto::connect_invalid_param_in_data(512));
  q.submit(connect_sqe(1, 127, true), connect_data(1));
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.req.cqe.dw0, 1u);
  EXPECT_EQ(subsys_->find_controller(1)->queue(1), &q.proc);
}

// Found by `nvmf-host conform` (connect.io-other-hostid): an I/O Connect with another HOSTID
// than the admin queue's used to succeed. Base 2.0 §6.3.
TEST_F(ProcessorTest, IoConnectChecksHostId) {
  admin();
  TestQueue& q = queue(1, 128);
  auto data = connect_data(1);
  data[0] ^= 0xFF;  // HOSTID byte 0
  q.submit(connect_sqe(1, 127, true), data);
  EXPECT_EQ(q.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  EXPECT_EQ(q.req.cqe.dw0, proto::connect_invalid_param_in_data(0));
  q.submit(connect_sqe(1, 127, true), connect_data(1));
  EXPECT_EQ(q.status(), kStatusSuccess);
}

// An I/O Connect to a controller the host has not enabled (CC.EN 0), or has disabled again, is
// Connect Invalid Parameters with IPO at the QID field (SPDK's answer); once enabled it succeeds.
TEST_F(ProcessorTest, IoConnectNeedsAnEnabledController) {
  TestQueue& a = queue(0);
  a.submit(connect_sqe(0, 31, true), connect_data(proto::kAdminQueueCntlid));
  ASSERT_EQ(a.status(), kStatusSuccess);
  TestQueue& q = queue(1, 128);
  q.submit(connect_sqe(1, 127, true), connect_data(1));
  EXPECT_EQ(q.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  EXPECT_EQ(q.req.cqe.dw0, proto::connect_invalid_param_in_sqe(42));  // QID at byte 42
  EXPECT_EQ(subsys_->find_controller(1)->queue(1), nullptr);
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc));
  ASSERT_EQ(a.status(), kStatusSuccess);
  q.submit(connect_sqe(1, 127, true), connect_data(1));
  EXPECT_EQ(q.status(), kStatusSuccess);
  // Disabled again (CC.EN 1 -> 0 resets the controller): a second queue is refused.
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc & ~proto::kCcEn));
  ASSERT_EQ(a.status(), kStatusSuccess);
  TestQueue& q2 = queue(2, 128);
  q2.submit(connect_sqe(2, 127, true), connect_data(1));
  EXPECT_EQ(q2.req.cqe.dw0, proto::connect_invalid_param_in_sqe(42));
}

TEST_F(ProcessorTest, AdminTeardownFreesControllerAndDisconnectsIo) {
  TestQueue& a = admin();
  TestQueue& q = io(1);
  a.proc.detach();
  EXPECT_EQ(subsys_->controller_count(), 0u);
  ASSERT_EQ(q.link.reasons.size(), 1u);
  EXPECT_EQ(q.proc.controller(), nullptr);
  auto stats = registry_.snapshot(statuses_);
  EXPECT_EQ(stats.controllers_created, 1u);
  EXPECT_EQ(stats.controllers_freed, 1u);
}

// ---------------------------------------------------------------------------------- Admin --

TEST_F(ProcessorTest, IdentifyControllerReportsInCapsule) {
  TestQueue& a = admin();
  ASSERT_EQ(a.submit(identify_sqe(proto::kCnsController)), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_EQ(a.req.transfer_bytes, 4096u);
  const auto& id = *reinterpret_cast<const proto::IdentifyController*>(a.buffer.data());
  EXPECT_EQ(id.cntlid, 1);
  EXPECT_EQ(id.sgls, 0x100005u);
  EXPECT_EQ(id.ioccsz, (64u + kInCapsule) / 16);
  EXPECT_EQ(id.mdts, 5);
  EXPECT_STREQ(id.subnqn, kNqn);
}

TEST_F(ProcessorTest, IdentifyNamespaceAndLists) {
  TestQueue& a = admin();
  ASSERT_EQ(a.submit(identify_sqe(proto::kCnsNamespace, 1)), NextStep::kWriteToHostThenRespond);
  const auto& ns = *reinterpret_cast<const proto::IdentifyNamespace*>(a.buffer.data());
  EXPECT_EQ(ns.nsze, 2048u);
  EXPECT_EQ(ns.lbaf[0].lbads, 9);
  a.submit(identify_sqe(proto::kCnsNamespace, 2));
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidNamespaceOrFormat));
  ASSERT_EQ(a.submit(identify_sqe(proto::kCnsActiveNamespaceList, 0)),
            NextStep::kWriteToHostThenRespond);
  uint32_t first;
  std::memcpy(&first, a.buffer.data(), 4);
  EXPECT_EQ(first, 1u);
  a.submit(identify_sqe(0x10));
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidField));
  proto::Sqe nvm = identify_sqe(0x06);  // I/O command set controller, CSI 0 (Linux 6.1 asks)
  EXPECT_EQ(a.submit(nvm), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(a.buffer[0], 0);
  nvm.cdw11 = 2u << 24;  // CSI 2 (zoned): not supported
  a.submit(nvm);
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidField));
}

TEST_F(ProcessorTest, IdentifyWithShortSglIsLengthInvalid) {
  TestQueue& a = admin();
  proto::Sqe s = identify_sqe(proto::kCnsController);
  ASSERT_TRUE(encode_keyed_sgl(s.dptr, 0x2000, 512, 0x55));
  a.submit(s);
  EXPECT_EQ(a.status(), generic_status(proto::kScDataSglLengthInvalid));
}

TEST_F(ProcessorTest, PsdtAndFuseChecked) {
  TestQueue& a = admin();
  proto::Sqe s = identify_sqe(proto::kCnsController);
  s.flags = 0;
  a.submit(s);
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidField));
  s.flags = proto::kFlagsPsdtSgl | 0x1;
  a.submit(s);
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidField));
}

TEST_F(ProcessorTest, UnknownAdminOpcode) {
  TestQueue& a = admin();
  a.submit(base_sqe(0x7E));
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidOpcode));
  EXPECT_TRUE(status_dnr(a.status()));
}

TEST_F(ProcessorTest, NumberOfQueuesGrantsAtMostMax) {
  TestQueue& a = admin();
  proto::Sqe s = base_sqe(proto::kAdminSetFeatures);
  s.cdw10 = proto::kFeatureNumberOfQueues;
  s.cdw11 = (7u << 16) | 7u;  // asks for 8 and 8
  a.submit(s);
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_EQ(a.req.cqe.dw0, (3u << 16) | 3u);
  s.cdw11 = 0;  // asks for 1 and 1
  a.submit(s);
  EXPECT_EQ(a.req.cqe.dw0, 0u);
  proto::Sqe g = base_sqe(proto::kAdminGetFeatures);
  g.cdw10 = proto::kFeatureNumberOfQueues;
  a.submit(g);
  EXPECT_EQ(a.req.cqe.dw0, 0u);
}

TEST_F(ProcessorTest, KeepAliveAndAsyncEvents) {
  TestQueue& a = admin();
  a.submit(base_sqe(proto::kAdminKeepAlive));
  EXPECT_EQ(a.status(), kStatusSuccess);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(a.submit(base_sqe(proto::kAdminAsyncEventRequest)), NextStep::kHold);
  EXPECT_EQ(a.submit(base_sqe(proto::kAdminAsyncEventRequest)), NextStep::kRespond);
  EXPECT_EQ(a.status(), make_status(proto::kSctCommandSpecific,
                                    proto::kScAsyncEventRequestLimitExceeded, true));
}

TEST_F(ProcessorTest, ResetAndShutdownCompleteHeldAsyncEventsAndResetTheCount) {
  TestQueue& a = admin();
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(a.submit(base_sqe(proto::kAdminAsyncEventRequest, 10 + i)), NextStep::kHold);
  }
  EXPECT_EQ(a.proc.aers_held(), 4u);
  // CC.EN 1 -> 0: every held AER is completed (Command Abort Requested), the count is 0.
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc & ~proto::kCcEn));
  EXPECT_EQ(a.status(), kStatusSuccess);
  ASSERT_EQ(a.link.held_responses.size(), 4u);
  for (const proto::Cqe& c : a.link.held_responses) {
    EXPECT_EQ(c.status, generic_status(proto::kScAbortRequested, false));
  }
  EXPECT_EQ(a.proc.aers_held(), 0u);
  // Enabled again: AERL + 1 may be held again.
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.submit(base_sqe(proto::kAdminAsyncEventRequest)), NextStep::kHold) << i;
  }
  // Shutdown (CC.SHN normal) completes them too.
  a.submit(property_set_sqe(proto::kPropCc, kGoodCc | (1u << proto::kCcShnShift)));
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_EQ(a.link.held_responses.size(), 8u);
  EXPECT_EQ(a.proc.aers_held(), 0u);
}

TEST_F(ProcessorTest, GetLogPage) {
  TestQueue& a = admin();
  proto::Sqe s = base_sqe(proto::kAdminGetLogPage);
  s.cdw10 = 0x01 | (15u << 16);  // error log, 16 dwords
  ASSERT_TRUE(encode_keyed_sgl(s.dptr, 0x4000, 64, 0x11));
  EXPECT_EQ(a.submit(s), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(a.req.transfer_bytes, 64u);
  // An unsupported LID is Invalid Log Page (SCT 1h SC 09h), not Invalid Field (Base 2.0 §5.16).
  s.cdw10 = 0xC0 | (15u << 16);
  a.submit(s);
  EXPECT_EQ(a.status(), make_status(proto::kSctCommandSpecific, proto::kScInvalidLogPage, true));
  s.cdw10 = 0x7F | (15u << 16);
  a.submit(s);
  EXPECT_EQ(a.status(), make_status(proto::kSctCommandSpecific, proto::kScInvalidLogPage, true));
}

// LPO must be dword aligned and within the log (Base 2.0 §5.16). Found by `nvmf-host conform`
// (log.offset-not-dword, log.offset-past-end): both used to succeed.
TEST_F(ProcessorTest, GetLogPageOffsetChecked) {
  TestQueue& a = admin();
  proto::Sqe s = base_sqe(proto::kAdminGetLogPage);
  s.cdw10 = 0x02 | (15u << 16);  // SMART / Health (512 bytes), 64 bytes read
  ASSERT_TRUE(encode_keyed_sgl(s.dptr, 0x4000, 64, 0x11));
  s.cdw12 = 2;
  a.submit(s);
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidField));
  s.cdw12 = 4096;
  a.submit(s);
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidField));
  s.cdw12 = 0;
  s.cdw13 = 1;  // 4 GiB in
  a.submit(s);
  EXPECT_EQ(a.status(), generic_status(proto::kScInvalidField));
  s.cdw13 = 0;
  s.cdw12 = 448;  // the last 64 bytes
  EXPECT_EQ(a.submit(s), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(a.req.transfer_bytes, 64u);
}

// Number of Queues may only be set before an I/O queue exists (Base 2.0 §5.27.1.5). Found by
// `nvmf-host conform` (features.number-of-queues-after-io): it used to succeed.
TEST_F(ProcessorTest, NumberOfQueuesAfterAnIoQueueIsSequenceError) {
  TestQueue& a = admin();
  proto::Sqe s = base_sqe(proto::kAdminSetFeatures);
  s.cdw10 = proto::kFeatureNumberOfQueues;
  s.cdw11 = (1u << 16) | 1u;
  a.submit(s);
  EXPECT_EQ(a.status(), kStatusSuccess);
  io(static_cast<uint16_t>(1));
  a.submit(s);
  EXPECT_EQ(a.status(), generic_status(proto::kScCommandSequenceError));
}

// An I/O Connect may open only the qids Number of Queues granted: min(NSQA, NCQA) of them, or
// every queue (max_io_queues) when the host never sent the feature. Found by `nvmf-host conform`
// (connect.io-qid-above-granted): qid 2 used to connect after 1 queue was granted.
TEST_F(ProcessorTest, IoConnectAboveGrantedQueuesIsInvalidParameters) {
  TestQueue& a = admin();
  proto::Sqe s = base_sqe(proto::kAdminSetFeatures);
  s.cdw10 = proto::kFeatureNumberOfQueues;
  s.cdw11 = (2u << 16) | 0u;  // 1 SQ, 3 CQs: one queue pair usable
  a.submit(s);
  ASSERT_EQ(a.status(), kStatusSuccess);
  ASSERT_EQ(a.req.cqe.dw0, (2u << 16) | 0u);
  TestQueue& q2 = queue(2, 128);
  q2.submit(connect_sqe(2, 127, true), connect_data(1));
  EXPECT_EQ(q2.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  EXPECT_EQ(q2.req.cqe.dw0, proto::connect_invalid_param_in_sqe(42));
  EXPECT_EQ(subsys_->find_controller(1)->queue(2), nullptr);
  EXPECT_EQ(q2.link.accepts, 0);  // refused before any queue resources were set up
  io(1, 1);                       // the granted qid still connects
}

TEST_F(ProcessorTest, IoConnectWithoutNumberOfQueuesMayUseEveryQueue) {
  admin();
  io(1, 4);  // max_io_queues 4, nothing asked: nvmet grants every queue
  TestQueue& q5 = queue(5, 128);
  q5.submit(connect_sqe(5, 127, true), connect_data(1));
  EXPECT_EQ(q5.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  EXPECT_EQ(q5.req.cqe.dw0, proto::connect_invalid_param_in_sqe(42));
}

// SUBNQN / HOSTNQN without a NUL in their 256 bytes. Found by `nvmf-host conform`
// (connect.hostnqn-unterminated): an unterminated HOSTNQN used to be accepted.
TEST_F(ProcessorTest, ConnectNqnNotTerminatedIsInvalidParameters) {
  TestQueue& a = queue(0);
  auto data = connect_data(proto::kAdminQueueCntlid);
  std::memset(data.data() + 512, 'x', 256);  // HOSTNQN
  a.submit(connect_sqe(0, 31, true), data);
  EXPECT_EQ(a.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_data(512));
  data = connect_data(proto::kAdminQueueCntlid);
  std::memset(data.data() + 256 + std::strlen(kNqn), 'x', 256 - std::strlen(kNqn));  // SUBNQN
  a.submit(connect_sqe(0, 31, true), data);
  EXPECT_EQ(a.req.cqe.dw0, proto::connect_invalid_param_in_data(256));
  EXPECT_EQ(subsys_->controller_count(), 0u);
}

// ------------------------------------------------------------------------------------ I/O --

TEST_F(ProcessorTest, WriteInCapsuleAcrossPagesThenRead) {
  admin();
  TestQueue& q = io(1);
  std::vector<uint8_t> data(1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + 1);
  // 1024 bytes at in-capsule offset 3600: crosses from page 0 into page 1.
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmWrite, 10, 2, 1024, true, 3600), data, 3600),
            NextStep::kRespond);
  ASSERT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(std::memcmp(ns_->bytes(10 * 512, 1024).data(), data.data(), 1024), 0);
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmRead, 10, 2, 1024)), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(q.req.transfer_bytes, 1024u);
  EXPECT_EQ(std::memcmp(q.buffer.data(), data.data(), 1024), 0);
  auto c = q.counters.snapshot();
  EXPECT_EQ(c.writes_in_capsule, 1u);
  EXPECT_EQ(c.writes_in_capsule_bytes, 1024u);
  EXPECT_EQ(c.reads, 1u);
  EXPECT_EQ(c.read_bytes, 1024u);
}

TEST_F(ProcessorTest, WriteByRdmaRead) {
  admin();
  TestQueue& q = io(1);
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmWrite, 100, 32, 16384)), NextStep::kReadFromHost);
  EXPECT_EQ(q.req.transfer_bytes, 16384u);
  std::memset(q.buffer.data(), 0x5A, 16384);
  ASSERT_EQ(q.proc.data_arrived(q.req), NextStep::kRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(ns_->bytes(100 * 512, 1)[0], 0x5A);
  EXPECT_EQ(ns_->bytes(132 * 512 - 1, 1)[0], 0x5A);
  EXPECT_EQ(ns_->bytes(132 * 512, 1)[0], 0);
  auto c = q.counters.snapshot();
  EXPECT_EQ(c.writes_rdma_read, 1u);
  EXPECT_EQ(c.writes_rdma_read_bytes, 16384u);
}

TEST_F(ProcessorTest, InvalidateKeyedAnswersWithInvalidate) {
  admin();
  TestQueue& q = io(1);
  proto::Sqe s = rw_sqe(proto::kNvmRead, 0, 1, 512);
  ASSERT_TRUE(encode_keyed_sgl(s.dptr, 0x3000, 512, 0x99, true));
  ASSERT_EQ(q.submit(s), NextStep::kWriteToHostThenRespond);
  EXPECT_TRUE(q.req.invalidate);
  EXPECT_EQ(q.req.sgl.rkey, 0x99u);
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512)), NextStep::kWriteToHostThenRespond);
  EXPECT_FALSE(q.req.invalidate);
}

TEST_F(ProcessorTest, LbaOutOfRangeBeforeTouchingBackend) {
  admin();
  TestQueue& q = io(1);
  q.submit(rw_sqe(proto::kNvmRead, 2047, 2, 1024));
  EXPECT_EQ(q.status(), generic_status(proto::kScLbaOutOfRange));
  q.submit(rw_sqe(proto::kNvmWrite, UINT64_MAX, 1, 512));
  EXPECT_EQ(q.status(), generic_status(proto::kScLbaOutOfRange));
  q.submit(rw_sqe(proto::kNvmRead, UINT64_MAX - 1, 8, 4096));
  EXPECT_EQ(q.status(), generic_status(proto::kScLbaOutOfRange));
  EXPECT_EQ(q.counters.snapshot().errors, 3u);
}

TEST_F(ProcessorTest, SglLengthMismatch) {
  admin();
  TestQueue& q = io(1);
  q.submit(rw_sqe(proto::kNvmRead, 0, 8, 4095));
  EXPECT_EQ(q.status(), generic_status(proto::kScDataSglLengthInvalid));
  q.submit(rw_sqe(proto::kNvmWrite, 0, 8, 8192));
  EXPECT_EQ(q.status(), generic_status(proto::kScDataSglLengthInvalid));
}

TEST_F(ProcessorTest, InCapsuleClaimingMoreThanReceived) {
  admin();
  TestQueue& q = io(1);
  std::vector<uint8_t> data(512, 1);
  q.submit(rw_sqe(proto::kNvmWrite, 0, 2, 1024, true), data);  // only 512 bytes arrived
  EXPECT_EQ(q.status(), generic_status(proto::kScDataSglLengthInvalid));
  EXPECT_EQ(ns_->bytes(0, 1)[0], 0);
}

TEST_F(ProcessorTest, TransferAboveMdtsIsInvalidField) {
  admin();
  TestQueue& q = io(1);
  EXPECT_EQ(q.submit(rw_sqe(proto::kNvmRead, 0, 256, 131072)), NextStep::kWriteToHostThenRespond);
  q.submit(rw_sqe(proto::kNvmRead, 0, 257, 131584));
  EXPECT_EQ(q.status(), generic_status(proto::kScInvalidField));
}

TEST_F(ProcessorTest, WrongNamespaceAndOpcode) {
  admin();
  TestQueue& q = io(1);
  proto::Sqe s = rw_sqe(proto::kNvmRead, 0, 1, 512);
  s.nsid = 2;
  q.submit(s);
  EXPECT_EQ(q.status(), generic_status(proto::kScInvalidNamespaceOrFormat));
  q.submit(base_sqe(0x05));  // Compare: not served
  EXPECT_EQ(q.status(), generic_status(proto::kScInvalidOpcode));
  proto::Sqe f = base_sqe(proto::kNvmFlush);
  f.nsid = 1;
  q.submit(f);
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.counters.snapshot().flushes, 1u);
}

TEST_F(ProcessorTest, SqheadAdvancesPerCommandAndWraps) {
  admin();
  TestQueue& q = queue(2, 4);
  q.submit(connect_sqe(2, 3, true), connect_data(1));
  ASSERT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.req.cqe.sqhd, 1);
  for (uint16_t expect : {2, 3, 0, 1}) {
    q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
    EXPECT_EQ(q.req.cqe.sqhd, expect);
    EXPECT_EQ(q.req.cqe.sqid, 2);
  }
}

TEST_F(ProcessorTest, SqheadWrapsAtTheConnectSqsizeNotTheCmQueueSize) {
  admin();
  TestQueue& q = queue(1, 8);    // the CM request asked for 8 entries, the Connect for 4
  for (int i = 0; i < 2; ++i) {  // two failed Connects advance SQHD too
    q.submit(connect_sqe(1, 3, true), connect_data(9));
    ASSERT_NE(q.status(), kStatusSuccess);
  }
  q.submit(connect_sqe(1, 3, true), connect_data(1));
  ASSERT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.req.cqe.sqhd, 3);
  for (uint16_t expect : {0, 1, 2, 3, 0}) {
    q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512));
    EXPECT_EQ(q.req.cqe.sqhd, expect);
  }
}

TEST_F(ProcessorTest, StatsTrackErrorsByStatus) {
  admin();
  TestQueue& q = io(1);
  q.submit(rw_sqe(proto::kNvmRead, 5000, 1, 512));
  q.submit(rw_sqe(proto::kNvmRead, 5000, 1, 512));
  auto s = registry_.snapshot(statuses_);
  ASSERT_EQ(s.errors_by_status.size(), 1u);
  EXPECT_EQ(status_sc(s.errors_by_status[0].status), proto::kScLbaOutOfRange);
  EXPECT_EQ(s.errors_by_status[0].count, 2u);
}

// The control socket's host changes: a host removed from allowed_hosts loses its controller and
// every queue (admin included) and cannot connect again; one added is admitted.
TEST_F(ProcessorTest, RemovingAnAllowedHostFreesItsControllerAndDisconnectsEveryQueue) {
  ControlLock lock(control_mutex());
  subsys_->set_allow_any_host(false);
  ASSERT_TRUE(subsys_->add_host(kHostNqn));
  EXPECT_FALSE(subsys_->add_host(kHostNqn));  // listed once
  TestQueue& a = admin();
  TestQueue& q = io(/*cntlid=*/1);  // the subsystem's first controller
  ASSERT_EQ(subsys_->controller_count(), 1u);

  EXPECT_TRUE(subsys_->remove_host(kHostNqn, "host removed"));
  EXPECT_EQ(subsys_->controller_count(), 0u);
  EXPECT_EQ(a.link.reasons, std::vector<std::string>{"host removed"});
  EXPECT_EQ(q.link.reasons, std::vector<std::string>{"controller freed"});
  EXPECT_FALSE(subsys_->remove_host(kHostNqn, "again"));

  TestQueue& again = queue(0);
  auto data = connect_data(proto::kAdminQueueCntlid);
  EXPECT_EQ(again.submit(connect_sqe(0, 31, true), data), NextStep::kRespond);
  EXPECT_EQ(again.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidHost, true));
  ASSERT_TRUE(subsys_->add_host(kHostNqn));
  TestQueue& back = queue(0);
  EXPECT_EQ(back.submit(connect_sqe(0, 31, true), data), NextStep::kRespond);
  EXPECT_EQ(back.status(), kStatusSuccess);
}

// Another host's controller is untouched by the removal of one host.
TEST_F(ProcessorTest, RemovingOneHostLeavesAnotherHostsController) {
  ControlLock lock(control_mutex());
  subsys_->set_allow_any_host(false);
  const std::string other = "nqn.2014-08.org.nvmexpress:uuid:other-host";
  ASSERT_TRUE(subsys_->add_host(kHostNqn));
  ASSERT_TRUE(subsys_->add_host(other));
  TestQueue& mine = admin();
  TestQueue& theirs = queue(0);
  auto data = connect_data(proto::kAdminQueueCntlid, kNqn, other.c_str());
  ASSERT_EQ(theirs.submit(connect_sqe(0, 31, true), data), NextStep::kRespond);
  ASSERT_EQ(theirs.status(), kStatusSuccess);
  ASSERT_EQ(subsys_->controller_count(), 2u);
  EXPECT_TRUE(subsys_->remove_host(other, "host removed"));
  EXPECT_EQ(subsys_->controller_count(), 1u);
  EXPECT_TRUE(mine.link.reasons.empty());
  EXPECT_EQ(theirs.link.reasons, std::vector<std::string>{"host removed"});
  EXPECT_EQ(mine.submit(property_set_sqe(proto::kPropCc, kGoodCc)), NextStep::kRespond);
  EXPECT_EQ(mine.status(), kStatusSuccess);
}

}  // namespace
}  // namespace nvmf::target
