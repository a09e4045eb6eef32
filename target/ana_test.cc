// SPDX-License-Identifier: BSD-3-Clause
// Asymmetric Namespace Access: the states and their I/O statuses, the ANA log page's layout,
// and through the command processor: Identify, the log page as a host reads it (offsets, RGO),
// the ANA Change notice on the port whose state changed only, and I/O refused per group.
#include "target/ana.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "target/control_lock.h"
#include "target/namespace.h"
#include "target/port.h"
#include "target/subsystem.h"
#include "target/testing/processor_harness.h"

namespace nvmf::target {
namespace {

using namespace nvmf::target::testing;  // NOLINT: the harness vocabulary

constexpr uint16_t kInaccessible = make_status(proto::kSctPath, proto::kScAnaInaccessible);
constexpr uint16_t kPersistentLoss = make_status(proto::kSctPath, proto::kScAnaPersistentLoss);
constexpr uint16_t kTransition = make_status(proto::kSctPath, proto::kScAnaTransition);
constexpr uint32_t kAnaChangeNotice = 0x000C0302;  // notice, ANA change, log 0Ch

uint32_t u32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t u64_at(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

TEST(AnaState, NamesOfNvmetcliAndSpdkParseAndStatusesAreThePathStatuses) {
  EXPECT_EQ(parse_ana_state("optimized"), AnaState::kOptimized);
  EXPECT_EQ(parse_ana_state("non-optimized"), AnaState::kNonOptimized);
  EXPECT_EQ(parse_ana_state("non_optimized"), AnaState::kNonOptimized);
  EXPECT_EQ(parse_ana_state("inaccessible"), AnaState::kInaccessible);
  EXPECT_EQ(parse_ana_state("persistent_loss"), AnaState::kPersistentLoss);
  EXPECT_EQ(parse_ana_state("change"), AnaState::kChange);
  EXPECT_EQ(parse_ana_state("Optimized"), std::nullopt);
  EXPECT_EQ(parse_ana_state(""), std::nullopt);
  EXPECT_EQ(ana_state_name(AnaState::kNonOptimized), "non-optimized");
  EXPECT_EQ(ana_io_status(AnaState::kOptimized), kStatusSuccess);
  EXPECT_EQ(ana_io_status(AnaState::kNonOptimized), kStatusSuccess);
  // SCT 3h, SC 01h/02h/03h, no DNR: Linux's 0x301, 0x302, 0x303 shifted past the phase bit.
  EXPECT_EQ(ana_io_status(AnaState::kPersistentLoss), 0x0602);
  EXPECT_EQ(ana_io_status(AnaState::kInaccessible), 0x0604);
  EXPECT_EQ(ana_io_status(AnaState::kChange), 0x0606);
}

TEST(AnaStates, ChangesMoveTheCountAndOnlyRefusingStatesRestrictIo) {
  AnaStates s;
  EXPECT_EQ(s.state(1), AnaState::kOptimized);
  EXPECT_EQ(s.state(0), AnaState::kInaccessible);
  EXPECT_EQ(s.state(kMaxAnaGroups + 1), AnaState::kInaccessible);
  EXPECT_TRUE(s.reported(1));
  EXPECT_FALSE(s.reported(2));
  EXPECT_FALSE(s.any_restricted());
  EXPECT_TRUE(s.set(2, AnaState::kNonOptimized));
  EXPECT_FALSE(s.any_restricted());
  EXPECT_TRUE(s.reported(2));
  EXPECT_EQ(s.change_count(), 1u);
  EXPECT_FALSE(s.set(2, AnaState::kNonOptimized)) << "no change";
  EXPECT_EQ(s.change_count(), 1u);
  EXPECT_TRUE(s.set(3, AnaState::kInaccessible));
  EXPECT_TRUE(s.set(4, AnaState::kChange));
  EXPECT_TRUE(s.any_restricted());
  EXPECT_EQ(s.group_change_count(3), 2u);
  EXPECT_EQ(s.group_change_count(4), 3u);
  EXPECT_TRUE(s.set(3, AnaState::kPersistentLoss));
  EXPECT_TRUE(s.set(4, AnaState::kOptimized));
  EXPECT_TRUE(s.any_restricted()) << "group 3 still refuses I/O";
  EXPECT_TRUE(s.set(3, AnaState::kOptimized));
  EXPECT_FALSE(s.any_restricted());
  EXPECT_FALSE(s.set(0, AnaState::kInaccessible));
  EXPECT_FALSE(s.set(kMaxAnaGroups + 1, AnaState::kInaccessible));
  AnaStates copy;
  copy.assign(s);
  EXPECT_EQ(copy.state(2), AnaState::kNonOptimized);
  EXPECT_TRUE(copy.reported(3));
}

TEST(AnaLog, HeaderDescriptorsInGroupOrderNsidsAscendingAndRgoLeavesThemOut) {
  AnaStates s;
  ASSERT_TRUE(s.set(5, AnaState::kInaccessible));  // reported without a namespace
  std::vector<SubsystemNamespace> ns(4);
  ns[0].nsid = 1;
  ns[0].anagrpid = 2;
  ns[1].nsid = 3;
  ns[1].anagrpid = 1;
  ns[2].nsid = 4;
  ns[2].anagrpid = 2;
  ns[3].nsid = 9;
  ns[3].anagrpid = 1;
  std::vector<uint8_t> log = build_ana_log(s, ns, false);
  // Header 16, group 1 (32 + 2 NSIDs), group 2 (32 + 2), group 5 (32 + 0).
  ASSERT_EQ(log.size(), 16u + 40 + 40 + 32);
  EXPECT_EQ(u64_at(log.data()), 1u) << "change count";
  EXPECT_EQ(log[8] | log[9] << 8, 3) << "NGRPS";
  const uint8_t* d = log.data() + 16;
  EXPECT_EQ(u32_at(d), 1u);
  EXPECT_EQ(u32_at(d + 4), 2u);
  EXPECT_EQ(d[16], 0x01);
  EXPECT_EQ(u32_at(d + 32), 3u);
  EXPECT_EQ(u32_at(d + 36), 9u);
  d += 40;
  EXPECT_EQ(u32_at(d), 2u);
  EXPECT_EQ(u32_at(d + 4), 2u);
  EXPECT_EQ(u32_at(d + 32), 1u);
  EXPECT_EQ(u32_at(d + 36), 4u);
  d += 40;
  EXPECT_EQ(u32_at(d), 5u);
  EXPECT_EQ(u32_at(d + 4), 0u);
  EXPECT_EQ(u64_at(d + 8), 1u) << "its change count";
  EXPECT_EQ(d[16], 0x03);

  std::vector<uint8_t> rgo = build_ana_log(s, ns, true);
  ASSERT_EQ(rgo.size(), 16u + 3 * 32);
  EXPECT_EQ(u32_at(rgo.data() + 16 + 4), 0u) << "NNSIDS 0 with RGO";
  EXPECT_EQ(u32_at(rgo.data() + 48), 2u);
}

// Two ports of one subsystem; namespace 1 in group 1, namespace 2 in group 2. A controller on
// port A (admin and I/O queue) and one on port B (admin), both with ANA notices enabled.
class AnaProcessorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SubsystemConfig disc;
    disc.nqn = proto::kDiscoveryNqn;
    disc.discovery = true;
    discovery_ = std::make_unique<Subsystem>(disc, registry_);
    // Namespace 1 in RAM, namespace 2 a file (its Flush reaches the engine).
    ram_.push_back(std::move(Namespace::create_ram(1 << 20, 512)).value());
    const char* dir = std::getenv("TEST_TMPDIR");
    path_ = std::string(dir != nullptr ? dir : "/tmp") + "/ana" + std::to_string(::getpid());
    ::unlink(path_.c_str());
    ram_.push_back(std::move(Namespace::open_file(path_, 1 << 20, 512, engine_)).value());
    SubsystemConfig cfg;
    cfg.nqn = kNqn;
    std::vector<SubsystemNamespace> ns(2);
    ns[0] = {1, ram_[0].get(), {}, {}};
    ns[1] = {2, ram_[1].get(), {}, {}};
    ns[1].anagrpid = 2;
    subsys_ = std::make_unique<Subsystem>(cfg, std::move(ns), registry_);
    subsys_->set_in_capsule_data_size(kInCapsule);
    DiscoveryAddress a;
    a.traddr = "10.0.0.1";
    a.trsvcid = "4420";
    DiscoveryAddress b = a;
    b.portid = 2;
    b.trsvcid = "4421";
    port_a_ = std::make_unique<Port>(a, *discovery_);
    port_b_ = std::make_unique<Port>(b, *discovery_);
    {
      ControlLock lock(control_mutex());
      port_a_->set_group({port_a_.get(), port_b_.get()});
      port_b_->set_group({port_a_.get(), port_b_.get()});
      port_a_->link(*subsys_);
      port_b_->link(*subsys_);
      (void)port_b_->set_ana_state(subsys_.get(), 2, AnaState::kNonOptimized);
    }
    admin_a_ = connect_admin(*port_a_);
    admin_b_ = connect_admin(*port_b_);
    io_a_ = std::make_unique<TestQueue>(*subsys_, statuses_, 1, 128);
    io_a_->proc.set_port(port_a_.get());
    EXPECT_EQ(io_a_->submit(connect_sqe(1, 127), connect_data(1)), NextStep::kRespond);
    EXPECT_EQ(io_a_->status(), kStatusSuccess);
  }
  std::unique_ptr<TestQueue> connect_admin(Port& port) {
    auto q = std::make_unique<TestQueue>(*subsys_, statuses_, 0, 32);
    q->proc.set_port(&port);
    EXPECT_EQ(q->submit(connect_sqe(0, 31), connect_data(proto::kAdminQueueCntlid)),
              NextStep::kRespond);
    EXPECT_EQ(q->status(), kStatusSuccess);
    EXPECT_EQ(q->submit(property_set_sqe(proto::kPropCc, kGoodCc)), NextStep::kRespond);
    proto::Sqe aec = base_sqe(proto::kAdminSetFeatures);
    aec.cdw10 = proto::kFeatureAsyncEventConfig;
    aec.cdw11 = proto::kAecAnaChange;
    q->submit(aec);
    EXPECT_EQ(q->status(), kStatusSuccess);
    return q;
  }
  void TearDown() override {
    io_a_.reset();
    admin_a_.reset();
    admin_b_.reset();
    port_a_.reset();
    port_b_.reset();
    subsys_.reset();
    ram_.clear();
    ::unlink(path_.c_str());
  }
  // The ANA log page as `q`'s host reads it: `bytes` from `lpo`, with RGO.
  std::vector<uint8_t> read_log(TestQueue& q, uint32_t bytes = 4096, uint64_t lpo = 0,
                                bool rgo = false, uint16_t* status = nullptr) {
    proto::Sqe s = base_sqe(proto::kAdminGetLogPage);
    s.cdw10 = proto::kLogAna | (rgo ? 1u << 8 : 0) | ((bytes / 4 - 1) << 16);
    s.cdw12 = static_cast<uint32_t>(lpo);
    s.cdw13 = static_cast<uint32_t>(lpo >> 32);
    EXPECT_TRUE(encode_keyed_sgl(s.dptr, 0x2000, bytes, 0x55));
    q.submit(s);
    if (status != nullptr) *status = q.status();
    if (q.status() != kStatusSuccess) return {};
    return std::vector<uint8_t>(q.buffer.data(), q.buffer.data() + bytes);
  }
  void hold_aer(TestQueue& q, Request& r, proto::Sqe& sqe) {
    sqe = base_sqe(proto::kAdminAsyncEventRequest, 0x61);
    r = Request{};
    r.sqe = &sqe;
    r.buffer = q.buffer;
    ASSERT_EQ(q.proc.begin(r), NextStep::kHold);
  }
  uint16_t read_ns(uint32_t nsid) {
    proto::Sqe s = rw_sqe(proto::kNvmRead, 0, 1, 512);
    s.nsid = nsid;
    io_a_->submit(s);
    return io_a_->status();
  }

  FakeEngine engine_;
  std::string path_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::vector<std::unique_ptr<Namespace>> ram_;
  std::unique_ptr<Subsystem> discovery_;
  std::unique_ptr<Subsystem> subsys_;
  std::unique_ptr<Port> port_a_;
  std::unique_ptr<Port> port_b_;
  std::unique_ptr<TestQueue> admin_a_;
  std::unique_ptr<TestQueue> admin_b_;
  std::unique_ptr<TestQueue> io_a_;
};

TEST_F(AnaProcessorTest, IdentifyReportsAnaAndEachNamespacesGroup) {
  ASSERT_EQ(admin_a_->submit(identify_sqe(proto::kCnsController)),
            NextStep::kWriteToHostThenRespond);
  const auto* id = reinterpret_cast<const proto::IdentifyController*>(admin_a_->buffer.data());
  EXPECT_EQ(id->cmic & proto::kCmicAna, proto::kCmicAna);
  EXPECT_EQ(id->anatt, 10);
  EXPECT_EQ(id->anacap, 0x1F);
  EXPECT_EQ(id->anagrpmax, 128u);
  EXPECT_EQ(id->nanagrpid, 128u);
  EXPECT_NE(id->oaes & proto::kAecAnaChange, 0u);
  ASSERT_EQ(admin_a_->submit(identify_sqe(proto::kCnsNamespace, 2)),
            NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(reinterpret_cast<const proto::IdentifyNamespace*>(admin_a_->buffer.data())->anagrpid,
            2u);
}

TEST_F(AnaProcessorTest, EachPortReportsItsOwnStatesAndOffsetsAndRgoWork) {
  std::vector<uint8_t> a = read_log(*admin_a_);
  std::vector<uint8_t> b = read_log(*admin_b_);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(a[8], 2) << "groups 1 and 2";
  EXPECT_EQ(a[16 + 36 + 16], 0x01) << "group 2 optimized on port A";
  EXPECT_EQ(b[16 + 36 + 16], 0x02) << "group 2 non-optimized on port B";
  EXPECT_EQ(u32_at(a.data() + 16 + 36 + 32), 2u) << "NSID 2 in group 2";
  EXPECT_EQ(std::vector<uint8_t>(a.begin() + 16 + 72, a.end()), std::vector<uint8_t>(4096 - 88))
      << "zeros past the log";
  // A window at an offset is that part of the log.
  std::vector<uint8_t> tail = read_log(*admin_a_, 64, 16);
  EXPECT_EQ(std::vector<uint8_t>(tail.begin(), tail.begin() + 56),
            std::vector<uint8_t>(a.begin() + 16, a.begin() + 72));
  uint16_t st = 0;
  read_log(*admin_a_, 64, 2, false, &st);
  EXPECT_EQ(st, generic_status(proto::kScInvalidField)) << "LPO not dword aligned";
  read_log(*admin_a_, 64, 4096, false, &st);
  EXPECT_EQ(st, generic_status(proto::kScInvalidField)) << "LPO beyond the log";
  std::vector<uint8_t> rgo = read_log(*admin_a_, 4096, 0, true);
  EXPECT_EQ(u32_at(rgo.data() + 16 + 4), 0u);
  EXPECT_EQ(u32_at(rgo.data() + 48), 2u) << "group 2 right after group 1's descriptor";
  proto::Sqe s = base_sqe(proto::kAdminGetLogPage);
  s.cdw10 = proto::kLogAna | (2u << 8) | ((64u / 4 - 1) << 16);
  EXPECT_TRUE(encode_keyed_sgl(s.dptr, 0x2000, 64, 0x55));
  admin_a_->submit(s);
  EXPECT_EQ(admin_a_->status(), generic_status(proto::kScInvalidField)) << "LSP bit 1";
}

TEST_F(AnaProcessorTest, AStateChangeNotifiesThatPortsControllersAndRefusesIoOfThatGroup) {
  Request aer_a, aer_b;
  proto::Sqe sqe_a{}, sqe_b{};
  hold_aer(*admin_a_, aer_a, sqe_a);
  hold_aer(*admin_b_, aer_b, sqe_b);
  EXPECT_EQ(read_ns(2), kStatusSuccess);
  const uint64_t before = u64_at(read_log(*admin_a_).data());
  {
    ControlLock lock(control_mutex());
    EXPECT_EQ(port_a_->set_ana_state(subsys_.get(), 2, AnaState::kInaccessible), 1u);
  }
  ASSERT_EQ(admin_a_->link.held_responses.size(), 1u);
  EXPECT_EQ(admin_a_->link.held_responses[0].dw0, kAnaChangeNotice);
  EXPECT_TRUE(admin_b_->link.held_responses.empty()) << "port B's states did not change";
  EXPECT_EQ(read_ns(2), kInaccessible);
  EXPECT_EQ(read_ns(1), kStatusSuccess) << "group 1 untouched";
  std::vector<uint8_t> log = read_log(*admin_a_);
  EXPECT_EQ(u64_at(log.data()), before + 1);
  EXPECT_EQ(log[16 + 36 + 16], 0x03);
  {
    ControlLock lock(control_mutex());
    EXPECT_EQ(port_a_->set_ana_state(subsys_.get(), 2, AnaState::kChange), 1u);
  }
  EXPECT_EQ(read_ns(2), kTransition);
  {
    ControlLock lock(control_mutex());
    EXPECT_EQ(port_a_->set_ana_state(nullptr, 2, AnaState::kPersistentLoss), 1u);
    EXPECT_EQ(port_a_->set_ana_state(nullptr, 2, AnaState::kPersistentLoss), 0u) << "no change";
  }
  EXPECT_EQ(read_ns(2), kPersistentLoss);
  {
    ControlLock lock(control_mutex());
    EXPECT_EQ(port_a_->set_ana_state(nullptr, 2, AnaState::kOptimized), 1u);
  }
  EXPECT_EQ(read_ns(2), kStatusSuccess);
  EXPECT_EQ(port_a_->ana_defaults().state(2), AnaState::kOptimized);
  // Only one notice so far: the log was read with RAE clear after it, so the later changes
  // were announced to the next AER (none held) and nothing else reached port B.
  EXPECT_EQ(admin_a_->link.held_responses.size(), 1u);
  EXPECT_TRUE(admin_b_->link.held_responses.empty());
}

TEST_F(AnaProcessorTest, ABroadcastFlushLeavesOutTheNamespacesThisPortCannotReach) {
  proto::Sqe flush = base_sqe(proto::kNvmFlush);
  flush.nsid = 0xFFFFFFFF;
  {
    ControlLock lock(control_mutex());
    ASSERT_EQ(port_a_->set_ana_state(subsys_.get(), 2, AnaState::kInaccessible), 1u);
  }
  EXPECT_EQ(io_a_->submit(flush), NextStep::kRespond);
  EXPECT_EQ(io_a_->status(), kStatusSuccess);
  EXPECT_TRUE(engine_.history.empty()) << "namespace 2's file is not flushed through port A";
  flush.nsid = 2;
  EXPECT_EQ(io_a_->submit(flush), NextStep::kRespond);
  EXPECT_EQ(io_a_->status(), kInaccessible);
  {
    ControlLock lock(control_mutex());
    ASSERT_EQ(port_a_->set_ana_state(subsys_.get(), 2, AnaState::kOptimized), 1u);
  }
  flush.nsid = 0xFFFFFFFF;
  EXPECT_EQ(io_a_->submit(flush), NextStep::kBackend);
  ASSERT_EQ(engine_.history.size(), 1u);
  EXPECT_EQ(engine_.history[0].op, IoOp::kFlush);
  engine_.finish_next(0);
  EXPECT_EQ(io_a_->status(), kStatusSuccess);
}

TEST_F(AnaProcessorTest, ANamespaceMovedToAnotherGroupIsReportedThereAndAnnounced) {
  Request aer;
  proto::Sqe sqe{};
  hold_aer(*admin_a_, aer, sqe);
  const uint64_t before = u64_at(read_log(*admin_a_).data());
  {
    ControlLock lock(control_mutex());
    ASSERT_TRUE(subsys_->set_namespace_group(2, 3).ok());
    EXPECT_EQ(subsys_->set_namespace_group(9, 3).code(), StatusCode::kNotFound);
    EXPECT_EQ(subsys_->set_namespace_group(2, 0).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(subsys_->set_namespace_group(2, 129).code(), StatusCode::kInvalidArgument);
    port_a_->ana_membership_changed(*subsys_);
  }
  ASSERT_EQ(admin_a_->link.held_responses.size(), 1u);
  EXPECT_EQ(admin_a_->link.held_responses[0].dw0, kAnaChangeNotice);
  std::vector<uint8_t> log = read_log(*admin_a_);
  EXPECT_EQ(u64_at(log.data()), before + 1) << "the change count moved";
  // Group 1 with NSID 1, then group 3 with NSID 2 (group 2 is no longer reported on port A).
  EXPECT_EQ(log[8], 2);
  EXPECT_EQ(u32_at(log.data() + 16 + 36), 3u);
  EXPECT_EQ(u32_at(log.data() + 16 + 36 + 32), 2u);
  ASSERT_EQ(admin_a_->submit(identify_sqe(proto::kCnsNamespace, 2)),
            NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(reinterpret_cast<const proto::IdentifyNamespace*>(admin_a_->buffer.data())->anagrpid,
            3u);
}

TEST_F(AnaProcessorTest, AnIoQueueOnAPortThatNoLongerServesTheSubsystemGoesWithItsController) {
  // Controller 1's admin queue came in on port A; a second I/O queue of it comes in on port B.
  TestQueue io_b(*subsys_, statuses_, 2, 128);
  io_b.proc.set_port(port_b_.get());
  ASSERT_EQ(io_b.submit(connect_sqe(2, 127), connect_data(1)), NextStep::kRespond);
  ASSERT_EQ(io_b.status(), kStatusSuccess);
  ControlLock lock(control_mutex());
  ASSERT_TRUE(port_b_->unlink(*subsys_));
  // Port B's own controller and controller 1 (through its I/O queue there).
  EXPECT_EQ(subsys_->disconnect_port(port_b_.get(), "listener removed"), 2u);
  EXPECT_EQ(subsys_->controller_count(), 0u);
  EXPECT_FALSE(io_b.link.reasons.empty());
  EXPECT_FALSE(io_a_->link.reasons.empty());
}

}  // namespace
}  // namespace nvmf::target
