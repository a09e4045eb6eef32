// SPDX-License-Identifier: BSD-3-Clause
// Namespaces added, removed and resized while hosts are connected (the control socket's
// nvmf_subsystem_add_ns, _remove_ns and _resize_ns): what the I/O path sees, what hosts are told
// (Namespace Attribute Changed, the Changed Namespace List), and that a command spanning the
// change never reaches another namespace or beyond the new size.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "target/control_lock.h"
#include "target/namespace.h"
#include "target/subsystem.h"
#include "target/testing/processor_harness.h"

namespace nvmf::target {
namespace {

using namespace nvmf::target::testing;  // NOLINT: the harness vocabulary

constexpr uint16_t kInvalidNamespace = generic_status(proto::kScInvalidNamespaceOrFormat);
constexpr uint16_t kLbaOutOfRange = generic_status(proto::kScLbaOutOfRange);
constexpr uint32_t kNsChanged = 0x00040002;  // notice, Namespace Attribute Changed, log 04h

std::string temp_path(const char* name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name + std::to_string(::getpid());
}

proto::Sqe on_nsid(proto::Sqe s, uint32_t nsid) {
  s.nsid = nsid;
  return s;
}

proto::Sqe changed_ns_log_sqe(bool retain) {
  proto::Sqe s = base_sqe(proto::kAdminGetLogPage);
  s.cdw10 = proto::kLogChangedNamespaceList | ((4096u / 4 - 1) << 16) | (retain ? 1u << 15 : 0);
  EXPECT_TRUE(encode_keyed_sgl(s.dptr, 0x2000, 4096, 0x55));
  return s;
}

// A subsystem with namespace 1 (RAM, or a file through `engine_`), one controller with an
// admin and an I/O queue, Namespace Attribute notices enabled.
class LiveNamespaceTest : public ::testing::Test {
 protected:
  void start(std::vector<SubsystemNamespace> namespaces) {
    SubsystemConfig cfg;
    cfg.nqn = kNqn;
    cfg.mdts = 5;
    subsys_ = std::make_unique<Subsystem>(cfg, std::move(namespaces), registry_);
    subsys_->set_in_capsule_data_size(kInCapsule);
    admin_ = std::make_unique<TestQueue>(*subsys_, statuses_, 0, 32);
    EXPECT_EQ(admin_->submit(connect_sqe(0, 31), connect_data(proto::kAdminQueueCntlid)),
              NextStep::kRespond);
    EXPECT_EQ(admin_->submit(property_set_sqe(proto::kPropCc, kGoodCc)), NextStep::kRespond);
    proto::Sqe aec = base_sqe(proto::kAdminSetFeatures);
    aec.cdw10 = proto::kFeatureAsyncEventConfig;
    aec.cdw11 = proto::kAecNamespaceAttribute;
    admin_->submit(aec);
    EXPECT_EQ(admin_->status(), kStatusSuccess);
    io_ = std::make_unique<TestQueue>(*subsys_, statuses_, 1, 128);
    EXPECT_EQ(io_->submit(connect_sqe(1, 127), connect_data(1)), NextStep::kRespond);
    EXPECT_EQ(io_->status(), kStatusSuccess);
  }
  void start_ram() {
    ram_.push_back(std::move(Namespace::create_ram(1 << 20, 512)).value());
    start({{1, ram_.back().get(), {}, {}}});
  }
  Namespace* new_ram(uint64_t bytes) {
    ram_.push_back(std::move(Namespace::create_ram(bytes, 512)).value());
    return ram_.back().get();
  }
  Namespace* new_file(const char* name) {
    paths_.push_back(temp_path(name));
    ::unlink(paths_.back().c_str());
    ram_.push_back(std::move(Namespace::open_file(paths_.back(), 1 << 20, 512, engine_)).value());
    return ram_.back().get();
  }
  void TearDown() override {
    io_.reset();
    admin_.reset();
    subsys_.reset();
    ram_.clear();
    for (const std::string& p : paths_) ::unlink(p.c_str());
  }
  // The NSIDs of a 4096-byte list the admin queue's last command returned (up to the first 0).
  std::vector<uint32_t> returned_nsids() const {
    std::vector<uint32_t> out;
    for (size_t i = 0; i < 1024; ++i) {
      uint32_t nsid;
      std::memcpy(&nsid, admin_->buffer.data() + 4 * i, 4);
      if (nsid == 0) break;
      out.push_back(nsid);
    }
    return out;
  }
  // The Changed Namespace List as the host reads it.
  std::vector<uint32_t> read_changed_list(bool retain = false) {
    EXPECT_EQ(admin_->submit(changed_ns_log_sqe(retain)), NextStep::kWriteToHostThenRespond);
    return returned_nsids();
  }
  std::vector<uint32_t> active_list() {
    EXPECT_EQ(admin_->submit(identify_sqe(proto::kCnsActiveNamespaceList, 0)),
              NextStep::kWriteToHostThenRespond);
    return returned_nsids();
  }
  // Holds an Asynchronous Event Request on the admin queue.
  void hold_aer() {
    aer_sqe_ = base_sqe(proto::kAdminAsyncEventRequest, 0x61);
    aer_ = Request{};
    aer_.sqe = &aer_sqe_;
    aer_.buffer = admin_->buffer;
    ASSERT_EQ(admin_->proc.begin(aer_), NextStep::kHold);
  }

  FakeEngine engine_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::vector<std::unique_ptr<Namespace>> ram_;
  std::vector<std::string> paths_;
  std::unique_ptr<Subsystem> subsys_;
  std::unique_ptr<TestQueue> admin_;
  std::unique_ptr<TestQueue> io_;
  proto::Sqe aer_sqe_{};
  Request aer_;
};

TEST_F(LiveNamespaceTest, AnAddedNamespaceIsListedServedAndAnnouncedOnce) {
  start_ram();
  hold_aer();
  ControlLock lock(control_mutex());
  Namespace* two = new_ram(2 << 20);
  auto nsid = subsys_->add_namespace({0, two, {}, {}});
  ASSERT_TRUE(nsid.ok()) << nsid.status().to_string();
  EXPECT_EQ(*nsid, 2u) << "the lowest free NSID";
  ASSERT_EQ(admin_->link.held_responses.size(), 1u) << "the held AER completes";
  EXPECT_EQ(admin_->link.held_responses[0].dw0, kNsChanged);
  EXPECT_EQ(admin_->link.held_responses[0].cid, 0x61);
  EXPECT_EQ(active_list(), (std::vector<uint32_t>{1, 2}));
  ASSERT_EQ(admin_->submit(identify_sqe(proto::kCnsNamespace, 2)),
            NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(reinterpret_cast<const proto::IdentifyNamespace*>(admin_->buffer.data())->nsze,
            (2u << 20) / 512);

  // I/O reaches it: a write in the capsule, then a read of the same LBAs.
  std::vector<uint8_t> data(1024, 0xA7);
  ASSERT_EQ(io_->submit(on_nsid(rw_sqe(proto::kNvmWrite, 100, 2, 1024, true), 2), data),
            NextStep::kRespond);
  EXPECT_EQ(io_->status(), kStatusSuccess);
  EXPECT_EQ(two->bytes(100 * 512, 1)[0], 0xA7);

  // A second change while the first notice is unread: listed, not announced again.
  auto three = subsys_->add_namespace({7, new_ram(1 << 20), {}, {}});
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(*three, 7u);
  hold_aer();
  EXPECT_EQ(admin_->link.held_responses.size(), 1u) << "masked until the log is read";
  EXPECT_EQ(read_changed_list(/*retain=*/true), (std::vector<uint32_t>{2, 7}));
  EXPECT_EQ(read_changed_list(), std::vector<uint32_t>{}) << "cleared by the first read";
  // Read without RAE: the next change is announced again, to the AER held above.
  ASSERT_TRUE(subsys_->remove_namespace(7).ok());
  ASSERT_EQ(admin_->link.held_responses.size(), 2u);
  EXPECT_EQ(admin_->link.held_responses[1].dw0, kNsChanged);
  EXPECT_EQ(read_changed_list(), (std::vector<uint32_t>{7}));
}

TEST_F(LiveNamespaceTest, AddRefusesATakenNsidOneAboveNnAndTheDiscoverySubsystem) {
  start_ram();
  ControlLock lock(control_mutex());
  auto taken = subsys_->add_namespace({1, new_ram(1 << 20), {}, {}});
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().message(), "NSID 1 is in use");
  auto above = subsys_->add_namespace({1025, new_ram(1 << 20), {}, {}});
  ASSERT_FALSE(above.ok());
  EXPECT_EQ(above.status().message(),
            "NSID 1025 is above 1024, the largest this subsystem reports (NN)");
  auto missing = subsys_->remove_namespace(9);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "NSID 9 is not active");
  SubsystemConfig disc;
  disc.nqn = proto::kDiscoveryNqn;
  disc.discovery = true;
  Subsystem discovery(disc, registry_);
  EXPECT_FALSE(discovery.add_namespace({0, new_ram(1 << 20), {}, {}}).ok());
  EXPECT_EQ(active_list(), std::vector<uint32_t>{1}) << "nothing changed";
  EXPECT_EQ(read_changed_list(), std::vector<uint32_t>{});
}

TEST_F(LiveNamespaceTest,
       ARemovedNamespaceAnswersInvalidNamespaceAndAWriteInFlightNeverReachesItsSuccessor) {
  start_ram();
  // A keyed write waits for its RDMA READ while namespace 1 is removed and another takes NSID 1.
  ASSERT_EQ(io_->submit(rw_sqe(proto::kNvmWrite, 0, 8, 4096)), NextStep::kReadFromHost);
  Request other;
  proto::Sqe storage{};
  {
    ControlLock lock(control_mutex());
    ASSERT_TRUE(subsys_->remove_namespace(1).ok());
  }
  ASSERT_EQ(io_->submit_other(other, rw_sqe(proto::kNvmRead, 0, 1, 512), storage),
            NextStep::kRespond);
  EXPECT_EQ(other.cqe.status, kInvalidNamespace) << "gone";
  Namespace* successor = new_ram(1 << 20);
  {
    ControlLock lock(control_mutex());
    ASSERT_TRUE(subsys_->add_namespace({1, successor, {}, {}}).ok());
  }
  std::memset(io_->buffer.data(), 0x3C, 4096);  // the READ placed the data
  EXPECT_EQ(io_->proc.data_arrived(io_->req), NextStep::kRespond);
  EXPECT_EQ(io_->status(), kInvalidNamespace) << "it started on another namespace";
  EXPECT_EQ(successor->bytes(0, 1)[0], 0) << "nothing written to a namespace it did not name";
  // A new command finds the successor.
  ASSERT_EQ(io_->submit_other(other, rw_sqe(proto::kNvmRead, 0, 1, 512), storage),
            NextStep::kWriteToHostThenRespond);
}

TEST_F(LiveNamespaceTest, AnOperationInFlightKeepsTheRemovedFileOpenUntilItCompletes) {
  Namespace* file = new_file("live_ns_inflight");
  start({{1, file, {}, {}}});
  ASSERT_EQ(io_->submit(rw_sqe(proto::kNvmRead, 0, 8, 4096)), NextStep::kBackend);
  EXPECT_EQ(file->io_in_flight(), 1);
  {
    ControlLock lock(control_mutex());
    ASSERT_TRUE(subsys_->remove_namespace(1).ok());
  }
  EXPECT_FALSE(file->wait_io_idle(std::chrono::milliseconds(0)));
  engine_.finish_next(4096);
  EXPECT_EQ(file->io_in_flight(), 0);
  EXPECT_TRUE(file->wait_io_idle(std::chrono::milliseconds(0)));
  EXPECT_EQ(io_->last, NextStep::kWriteToHostThenRespond) << "the read it had started answers";
}

TEST_F(LiveNamespaceTest, BroadcastFlushVisitsEachNamespaceOnceWhileTheTableChanges) {
  Namespace* a = new_file("live_ns_a");
  Namespace* b = new_file("live_ns_b");
  Namespace* c = new_file("live_ns_c");
  start({{1, a, {}, {}}, {2, b, {}, {}}, {3, c, {}, {}}});
  proto::Sqe flush = base_sqe(proto::kNvmFlush);
  flush.nsid = 0xFFFFFFFF;
  ASSERT_EQ(io_->submit(flush), NextStep::kBackend);
  ASSERT_EQ(engine_.submitted.size(), 1u);
  EXPECT_EQ(engine_.submitted.front()->fd, a->fd());
  {
    ControlLock lock(control_mutex());
    ASSERT_TRUE(subsys_->remove_namespace(1).ok());  // the table shifts under the walk
  }
  engine_.finish_next(0);
  ASSERT_EQ(engine_.submitted.size(), 1u);
  EXPECT_EQ(engine_.submitted.front()->fd, b->fd()) << "namespace 2 is not skipped";
  engine_.finish_next(0);
  ASSERT_EQ(engine_.submitted.size(), 1u);
  EXPECT_EQ(engine_.submitted.front()->fd, c->fd());
  engine_.finish_next(0);
  EXPECT_TRUE(engine_.submitted.empty());
  EXPECT_EQ(io_->status(), kStatusSuccess);
  EXPECT_EQ(a->io_in_flight() + b->io_in_flight() + c->io_in_flight(), 0);
}

TEST_F(LiveNamespaceTest, AShrunkRamNamespaceRefusesWhatNoLongerFitsAndGrowsBackAsZeroes) {
  start_ram();
  Namespace& ns = *ram_.front();
  std::vector<uint8_t> data(1024, 0xEE);
  ASSERT_EQ(io_->submit(rw_sqe(proto::kNvmWrite, 2040, 2, 1024, true), data), NextStep::kRespond);
  ASSERT_EQ(io_->status(), kStatusSuccess);
  // A write near the end waits for its data while the namespace shrinks to half.
  ASSERT_EQ(io_->submit(rw_sqe(proto::kNvmWrite, 2040, 8, 4096)), NextStep::kReadFromHost);
  auto smaller = ns.resize(512 << 10);
  ASSERT_TRUE(smaller.ok()) << smaller.status().to_string();
  EXPECT_EQ(*smaller, 512u << 10);
  {
    ControlLock lock(control_mutex());
    subsys_->namespace_changed(1);
  }
  std::memset(io_->buffer.data(), 0x11, 4096);
  EXPECT_EQ(io_->proc.data_arrived(io_->req), NextStep::kRespond);
  EXPECT_EQ(io_->status(), kLbaOutOfRange) << "checked again against the new size";
  ASSERT_EQ(io_->submit(rw_sqe(proto::kNvmRead, 1024, 1, 512)), NextStep::kRespond);
  EXPECT_EQ(io_->status(), kLbaOutOfRange);
  ns.release_beyond_size();  // every poll group has passed a round (Target does that)
  ASSERT_TRUE(ns.resize(2 << 20).ok());
  EXPECT_EQ(ns.num_lbas(), (2u << 20) / 512);
  ASSERT_EQ(io_->submit(rw_sqe(proto::kNvmRead, 2040, 2, 1024)), NextStep::kWriteToHostThenRespond);
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(io_->buffer[i], 0) << "byte " << i;
  EXPECT_EQ(read_changed_list(), std::vector<uint32_t>{1});
}

TEST(NamespaceResizeTest, RamStaysWithinItsReservationAndWholeLbas) {
  auto ns = std::move(Namespace::create_ram(1 << 20, 4096)).value();
  EXPECT_EQ(ns->resize(0).status().message(), "a RAM namespace's new size must be given");
  EXPECT_EQ(ns->resize(6000).status().message(),
            "ram namespace: size 6000 is not a whole number of LBAs of 4096 bytes");
  const uint64_t too_big = Namespace::kRamReserveBytes + 4096;
  EXPECT_EQ(ns->resize(too_big).status().message(),
            "ram namespace: " + std::to_string(too_big) + " bytes is above its reservation of " +
                std::to_string(Namespace::kRamReserveBytes) + " bytes");
  auto grown = ns->resize(Namespace::kRamReserveBytes);
  ASSERT_TRUE(grown.ok());
  ns->bytes(Namespace::kRamReserveBytes - 4096, 4096)[0] = 1;  // accessible to the last byte
  EXPECT_EQ(ns->size_bytes(), Namespace::kRamReserveBytes);
}

TEST(NamespaceResizeTest, AFileIsExtendedOrReadAgainButNeverShrunk) {
  const std::string path = temp_path("ns_resize_file");
  ::unlink(path.c_str());
  FakeEngine engine;
  auto ns = std::move(Namespace::open_file(path, 1 << 20, 512, engine)).value();
  const uint64_t serial = ns->serial();
  auto grown = ns->resize(2 << 20);
  ASSERT_TRUE(grown.ok()) << grown.status().to_string();
  EXPECT_EQ(*grown, 2u << 20);
  EXPECT_EQ(ns->num_lbas(), (2u << 20) / 512);
  EXPECT_EQ(ns->resize(1 << 20).status().message(),
            path + ": 1048576 bytes is below the file's 2097152 (a file is never shrunk)");
  // Grown outside the target (truncate -s): read again, rounded down to whole LBAs.
  ASSERT_EQ(::truncate(path.c_str(), (3 << 20) + 100), 0);
  auto again = ns->resize(0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 3u << 20);
  EXPECT_EQ(ns->serial(), serial) << "the same namespace";
  auto other = std::move(Namespace::create_ram(1 << 20, 512)).value();
  EXPECT_NE(other->serial(), serial);
  ::unlink(path.c_str());
}

TEST(NamespaceResizeTest, RamSizesNotWholePagesGrowAndShrinkWithZeroesBeyondTheSize) {
  auto ns = std::move(Namespace::create_ram(1536, 512)).value();
  std::memset(ns->bytes(0, 1536).data(), 0x7E, 1536);
  auto grown = ns->resize(3 * 4096 + 512);
  ASSERT_TRUE(grown.ok()) << grown.status().to_string();
  for (uint64_t i = 1536; i < 3 * 4096 + 512; ++i) ASSERT_EQ(ns->bytes(i, 1)[0], 0) << i;
  std::memset(ns->bytes(0, 3 * 4096 + 512).data(), 0x5A, 3 * 4096 + 512);
  ASSERT_TRUE(ns->resize(1024).ok());
  ns->release_beyond_size();  // the poll groups passed a round (Target waits for that)
  ASSERT_TRUE(ns->resize(3 * 4096 + 512).ok());
  EXPECT_EQ(ns->bytes(1023, 1)[0], 0x5A) << "what stayed is kept";
  for (uint64_t i = 1024; i < 3 * 4096 + 512; ++i) ASSERT_EQ(ns->bytes(i, 1)[0], 0) << i;
  // Shrunk and grown again without the release in between: still zeroes beyond the old size.
  std::memset(ns->bytes(0, 3 * 4096 + 512).data(), 0x33, 3 * 4096 + 512);
  ASSERT_TRUE(ns->resize(2048).ok());
  ASSERT_TRUE(ns->resize(4096).ok());
  EXPECT_EQ(ns->bytes(2047, 1)[0], 0x33);
  for (uint64_t i = 2048; i < 4096; ++i) ASSERT_EQ(ns->bytes(i, 1)[0], 0) << i;
}

TEST_F(LiveNamespaceTest, APartialReadOfTheChangedListLeavesItForAWholeRead) {
  start_ram();
  {
    ControlLock lock(control_mutex());
    ASSERT_TRUE(subsys_->add_namespace({2, new_ram(1 << 20), {}, {}}).ok());
    ASSERT_TRUE(subsys_->add_namespace({3, new_ram(1 << 20), {}, {}}).ok());
  }
  proto::Sqe one = changed_ns_log_sqe(true);
  one.cdw10 = proto::kLogChangedNamespaceList | (1u << 15);  // NUMD 0: one dword
  EXPECT_TRUE(encode_keyed_sgl(one.dptr, 0x2000, 4, 0x55));
  ASSERT_EQ(admin_->submit(one), NextStep::kWriteToHostThenRespond);
  uint32_t first = 0;
  std::memcpy(&first, admin_->buffer.data(), 4);
  EXPECT_EQ(first, 2u);
  EXPECT_EQ(read_changed_list(), (std::vector<uint32_t>{2, 3})) << "nothing was lost";
  EXPECT_EQ(read_changed_list(), std::vector<uint32_t>{});
}

TEST(ChangedNamespaceListTest, OverflowsToTheSingleEntryFfffffffAsNvmetDoes) {
  Controller c(1, "nqn.host", {}, 0, 4, 128, 0x00010300);
  c.note_namespace_changed(5);
  c.note_namespace_changed(5);
  c.note_namespace_changed(3);
  EXPECT_EQ(c.take_changed_namespaces(), (std::vector<uint32_t>{5, 3})) << "each NSID once";
  EXPECT_EQ(c.take_changed_namespaces(), std::vector<uint32_t>{});
  for (uint32_t nsid = 1; nsid <= Controller::kMaxChangedNamespaces + 1; ++nsid) {
    c.note_namespace_changed(nsid);
  }
  EXPECT_EQ(c.take_changed_namespaces(), std::vector<uint32_t>{0xFFFFFFFF});
}

}  // namespace
}  // namespace nvmf::target
