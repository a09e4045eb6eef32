// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for the command processor's backend path: file namespaces answered later through
// the IoEngine (kBackend + io_done), errors as NVMe statuses, FUA, Flush (DNR, sticky), the
// CC.SHN flush, Write Zeroes, Dataset Management and the Identify fields that announce them.
// Mostly against FakeEngine (the test completes each operation); one round trip on a real
// io_uring engine and file.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "target/identify.h"
#include "target/namespace.h"
#include "target/subsystem.h"
#include "target/testing/processor_harness.h"

namespace nvmf::target {
namespace {

using namespace nvmf::target::testing;  // NOLINT: the harness vocabulary

constexpr uint16_t kCapacityExceeded = generic_status(proto::kScCapacityExceeded, true);
constexpr uint16_t kInternalDnr = generic_status(proto::kScInternalError, true);
constexpr uint16_t kUnrecoveredRead = make_status(proto::kSctMediaError, 0x81);
constexpr uint16_t kWriteFault = make_status(proto::kSctMediaError, 0x80);

std::string temp_path(const char* name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name + std::to_string(::getpid());
}

proto::Sqe flush_sqe(uint32_t nsid = 1) {
  proto::Sqe s = base_sqe(proto::kNvmFlush);
  s.nsid = nsid;
  return s;
}

proto::Sqe dsm_sqe(uint32_t ranges, bool deallocate, uint32_t bytes) {
  proto::Sqe s = base_sqe(proto::kNvmDatasetManagement);
  s.nsid = 1;
  s.cdw10 = ranges - 1;
  s.cdw11 = deallocate ? 1u << 2 : 0;
  encode_in_capsule_sgl(s.dptr, 0, bytes);
  return s;
}

std::vector<uint8_t> dsm_ranges(std::initializer_list<std::pair<uint64_t, uint32_t>> ranges) {
  std::vector<uint8_t> out;
  for (auto [slba, nlb] : ranges) {
    uint8_t entry[16] = {};
    std::memcpy(entry + 4, &nlb, 4);
    std::memcpy(entry + 8, &slba, 8);
    out.insert(out.end(), entry, entry + 16);
  }
  return out;
}

// A subsystem whose namespace 1 is a file (I/O through `engine_`) or RAM.
class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override { open(true); }
  void TearDown() override {
    queues_.clear();
    subsys_.reset();
    ns_.reset();
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  void open(bool file, IoEngine* engine = nullptr) {
    queues_.clear();
    subsys_.reset();
    ns_.reset();
    if (file) {
      path_ = temp_path("backend_io");
      ::unlink(path_.c_str());
      ns_ =
          std::move(Namespace::open_file(path_, 1 << 20, 512, engine ? *engine : engine_)).value();
    } else {
      ns_ = std::move(Namespace::create_ram(1 << 20, 512)).value();
    }
    SubsystemConfig cfg;
    cfg.nqn = kNqn;
    cfg.mdts = 5;
    subsys_ = std::make_unique<Subsystem>(cfg, *ns_, registry_);
    subsys_->set_in_capsule_data_size(kInCapsule);
    admin_ = &queue(0, 32);
    EXPECT_EQ(admin_->submit(connect_sqe(0, 31), connect_data(proto::kAdminQueueCntlid)),
              NextStep::kRespond);
    EXPECT_EQ(admin_->submit(property_set_sqe(proto::kPropCc, kGoodCc)), NextStep::kRespond);
    io_ = &queue(1, 128);
    EXPECT_EQ(io_->submit(connect_sqe(1, 127), connect_data(1)), NextStep::kRespond);
    EXPECT_EQ(io_->status(), kStatusSuccess);
  }

  TestQueue& queue(uint16_t qid, uint32_t size) {
    queues_.push_back(std::make_unique<TestQueue>(*subsys_, statuses_, qid, size));
    return *queues_.back();
  }

  FakeEngine engine_;
  std::string path_;
  std::unique_ptr<Namespace> ns_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::unique_ptr<Subsystem> subsys_;
  std::vector<std::unique_ptr<TestQueue>> queues_;
  TestQueue* admin_ = nullptr;
  TestQueue* io_ = nullptr;
};

TEST_F(BackendTest, FileReadIsSubmittedAndAnsweredWhenItCompletes) {
  TestQueue& q = *io_;
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmRead, 8, 4, 2048)), NextStep::kBackend);
  ASSERT_EQ(engine_.submitted.size(), 1u);
  const IoRequest& io = *engine_.submitted.front();
  EXPECT_EQ(io.op, IoOp::kRead);
  EXPECT_EQ(io.fd, ns_->fd());
  EXPECT_EQ(io.offset, 8u * 512);
  EXPECT_EQ(io.length, 2048u);
  EXPECT_EQ(io.data, q.buffer.data());         // straight into the slot's registered buffer
  EXPECT_EQ(q.counters.snapshot().reads, 0u);  // not before it completed
  engine_.finish_next(2048);
  EXPECT_EQ(q.last, NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.req.transfer_bytes, 2048u);
  EXPECT_EQ(q.counters.snapshot().reads, 1u);
  EXPECT_EQ(q.counters.snapshot().read_bytes, 2048u);
}

TEST_F(BackendTest, InCapsuleWriteWithFuaIsGatheredAndSubmittedWithFua) {
  TestQueue& q = *io_;
  std::vector<uint8_t> data(1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  proto::Sqe s = rw_sqe(proto::kNvmWrite, 20, 2, 1024, true, 3600);  // crosses a page
  s.cdw12 |= proto::kRwFua;
  ASSERT_EQ(q.submit(s, data, 3600), NextStep::kBackend);
  ASSERT_EQ(engine_.submitted.size(), 1u);
  const IoRequest& io = *engine_.submitted.front();
  EXPECT_EQ(io.op, IoOp::kWrite);
  EXPECT_TRUE(io.fua);
  EXPECT_EQ(io.offset, 20u * 512);
  EXPECT_EQ(io.length, 1024u);
  EXPECT_EQ(std::memcmp(io.data, data.data(), 1024), 0);
  engine_.finish_next(1024);
  EXPECT_EQ(q.last, NextStep::kRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.req.transfer_bytes, 0u);  // nothing goes back
  // Without FUA, no RWF_DSYNC.
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmWrite, 20, 2, 1024, true, 0), data), NextStep::kBackend);
  EXPECT_FALSE(engine_.submitted.front()->fua);
}

TEST_F(BackendTest, KeyedWriteIsSubmittedFromTheRdmaReadBuffer) {
  TestQueue& q = *io_;
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmWrite, 0, 8, 4096)), NextStep::kReadFromHost);
  EXPECT_TRUE(engine_.submitted.empty());    // nothing before the data is here
  std::memset(q.buffer.data(), 0x5A, 4096);  // the READ placed the data
  ASSERT_EQ(q.proc.data_arrived(q.req), NextStep::kBackend);
  ASSERT_EQ(engine_.submitted.size(), 1u);
  EXPECT_EQ(engine_.submitted.front()->data, q.buffer.data());
  EXPECT_EQ(engine_.submitted.front()->length, 4096u);
}

TEST_F(BackendTest, ErrnoBecomesTheNvmeStatusNvmetGives) {
  TestQueue& q = *io_;
  struct Case {
    uint8_t opcode;
    int err;
    uint16_t status;
  };
  for (Case c :
       {Case{proto::kNvmWrite, ENOSPC, kCapacityExceeded},
        Case{proto::kNvmWrite, EDQUOT, kCapacityExceeded},
        Case{proto::kNvmRead, EIO, kUnrecoveredRead}, Case{proto::kNvmWrite, EIO, kWriteFault},
        Case{proto::kNvmRead, EBADF, kInternalDnr}, Case{proto::kNvmWrite, EINVAL, kInternalDnr}}) {
    NextStep step = q.submit(rw_sqe(c.opcode, 0, 1, 512, c.opcode == proto::kNvmWrite),
                             std::vector<uint8_t>(512, 1));
    ASSERT_EQ(step, NextStep::kBackend);
    engine_.finish_next(-c.err);
    EXPECT_EQ(q.last, NextStep::kRespond);
    EXPECT_EQ(q.status(), c.status) << errno_string(c.err) << ": " << status_name(q.status());
    EXPECT_EQ(q.req.transfer_bytes, 0u) << "no data goes back with an error";
  }
  // The queue goes on: the next command is served.
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmRead, 0, 1, 512)), NextStep::kBackend);
  engine_.finish_next(512);
  EXPECT_EQ(q.status(), kStatusSuccess);
  auto counts = registry_.snapshot(statuses_).errors_by_status;
  EXPECT_EQ(counts.size(), 4u);  // Internal Error, Capacity Exceeded, Write Fault, Read Error
}

TEST_F(BackendTest, FailedFlushHasDnrAndEveryLaterFlushFailsToo) {
  TestQueue& q = *io_;
  ASSERT_EQ(q.submit(flush_sqe()), NextStep::kBackend);
  EXPECT_EQ(engine_.submitted.front()->op, IoOp::kFlush);
  engine_.finish_next(0);
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.counters.snapshot().flushes, 1u);

  ASSERT_EQ(q.submit(flush_sqe()), NextStep::kBackend);
  engine_.finish_next(-EIO);
  EXPECT_EQ(q.status(), kInternalDnr);
  EXPECT_TRUE(status_dnr(q.status()));
  // The kernel reports a write-back error once: a retry must not "succeed" over lost data.
  EXPECT_EQ(q.submit(flush_sqe()), NextStep::kRespond);
  EXPECT_EQ(q.status(), kInternalDnr);
  EXPECT_EQ(q.submit(flush_sqe(0xFFFFFFFF)), NextStep::kRespond);
  EXPECT_EQ(q.status(), kInternalDnr);
  EXPECT_TRUE(engine_.submitted.empty());
  // ENOSPC at write-back (delayed allocation) is Capacity Exceeded, also with DNR.
  EXPECT_EQ(status_for_io_error(IoCommand::kFlush, ENOSPC), kCapacityExceeded);
}

TEST_F(BackendTest, BroadcastFlushAndWrongNamespace) {
  TestQueue& q = *io_;
  ASSERT_EQ(q.submit(flush_sqe(0xFFFFFFFF)), NextStep::kBackend);
  engine_.finish_next(0);
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.submit(flush_sqe(2)), NextStep::kRespond);
  EXPECT_EQ(q.status(), generic_status(proto::kScInvalidNamespaceOrFormat));
  proto::Sqe r = rw_sqe(proto::kNvmRead, 0, 1, 512);
  r.nsid = 2;
  EXPECT_EQ(q.submit(r), NextStep::kRespond);
  EXPECT_EQ(q.status(), generic_status(proto::kScInvalidNamespaceOrFormat));
  EXPECT_TRUE(engine_.submitted.empty());
}

TEST_F(BackendTest, ShutdownReportsCompleteOnlyAfterTheFlush) {
  TestQueue& a = *admin_;
  uint32_t shn = kGoodCc | (proto::kCcShnNormal << proto::kCcShnShift);
  ASSERT_EQ(a.submit(property_set_sqe(proto::kPropCc, shn)), NextStep::kBackend);
  ASSERT_EQ(engine_.submitted.size(), 1u);
  EXPECT_EQ(engine_.submitted.front()->op, IoOp::kFlush);
  const ControllerRegisters& regs = subsys_->find_controller(1)->registers();
  EXPECT_EQ((regs.csts() & proto::kCstsShstMask) >> proto::kCstsShstShift, proto::kShstOccurring);
  engine_.finish_next(0);
  EXPECT_EQ(a.last, NextStep::kRespond);
  EXPECT_EQ(a.status(), kStatusSuccess);
  EXPECT_EQ((regs.csts() & proto::kCstsShstMask) >> proto::kCstsShstShift, proto::kShstComplete);
}

TEST_F(BackendTest, FailedShutdownFlushStillCompletesButLaterFlushesFail) {
  uint32_t shn = kGoodCc | (proto::kCcShnNormal << proto::kCcShnShift);
  ASSERT_EQ(admin_->submit(property_set_sqe(proto::kPropCc, shn)), NextStep::kBackend);
  engine_.finish_next(-EIO);
  EXPECT_EQ(admin_->status(), kStatusSuccess);  // SHST reports the shutdown is over
  EXPECT_EQ(ns_->flush_error(), EIO);
}

TEST_F(BackendTest, WriteZeroesZeroesOrPunchesAndFallsBackOnce) {
  TestQueue& q = *io_;
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmWriteZeroes, 16, 8, 0)), NextStep::kBackend);
  IoRequest first = engine_.history.back();
  EXPECT_EQ(first.op, IoOp::kZeroRange);
  EXPECT_EQ(first.offset, 16u * 512);
  EXPECT_EQ(first.length, 8u * 512);
  // tmpfs has no FALLOC_FL_ZERO_RANGE: a punched hole reads as zeroes just the same.
  engine_.finish_next(-EOPNOTSUPP);
  ASSERT_EQ(q.last, NextStep::kBackend);
  EXPECT_EQ(engine_.history.back().op, IoOp::kPunchHole);
  EXPECT_EQ(engine_.history.back().offset, 16u * 512);
  engine_.finish_next(-EOPNOTSUPP);  // neither: the backing cannot zero
  EXPECT_EQ(q.status(), generic_status(proto::kScInvalidOpcode, true));

  proto::Sqe deac = rw_sqe(proto::kNvmWriteZeroes, 0, 1, 0);
  deac.cdw12 |= 1u << 25;
  ASSERT_EQ(q.submit(deac), NextStep::kBackend);
  EXPECT_EQ(engine_.history.back().op, IoOp::kPunchHole);
  engine_.finish_next(0);
  EXPECT_EQ(q.status(), kStatusSuccess);

  EXPECT_EQ(q.submit(rw_sqe(proto::kNvmWriteZeroes, 2047, 2, 0)), NextStep::kRespond);
  EXPECT_EQ(q.status(), generic_status(proto::kScLbaOutOfRange));
}

TEST_F(BackendTest, DatasetManagementDeallocatesEachRange) {
  TestQueue& q = *io_;
  auto ranges = dsm_ranges({{100, 8}, {0, 0}, {2000, 48}});
  ASSERT_EQ(q.submit(dsm_sqe(3, true, 48), ranges), NextStep::kBackend);
  EXPECT_EQ(engine_.history.back().op, IoOp::kPunchHole);
  EXPECT_EQ(engine_.history.back().offset, 100u * 512);
  EXPECT_EQ(engine_.history.back().length, 8u * 512);
  engine_.finish_next(0);
  ASSERT_EQ(q.last, NextStep::kBackend);  // the empty range is skipped
  EXPECT_EQ(engine_.history.back().offset, 2000u * 512);
  EXPECT_EQ(engine_.history.back().length, 48u * 512);
  engine_.finish_next(0);
  EXPECT_EQ(q.last, NextStep::kRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);

  // The Linux host sends its whole 4096-byte range buffer with NR 0 (one range): accepted, one
  // punch; shorter than NR + 1 ranges is Data SGL Length Invalid.
  std::vector<uint8_t> page = dsm_ranges({{300, 16}});
  page.resize(4096, 0xAB);  // garbage past the ranges NR counts
  ASSERT_EQ(q.submit(dsm_sqe(1, true, 4096), page), NextStep::kBackend);
  EXPECT_EQ(engine_.history.back().offset, 300u * 512);
  EXPECT_EQ(engine_.history.back().length, 16u * 512);
  engine_.finish_next(0);
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.submit(dsm_sqe(2, true, 16), dsm_ranges({{0, 8}})), NextStep::kRespond);
  EXPECT_EQ(q.status(), generic_status(proto::kScDataSglLengthInvalid));

  // Without the deallocate attribute: nothing to do.
  EXPECT_EQ(q.submit(dsm_sqe(1, false, 16), dsm_ranges({{0, 8}})), NextStep::kRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
  // A range past the end: LBA Out of Range before anything is deallocated.
  size_t before = engine_.history.size();
  EXPECT_EQ(q.submit(dsm_sqe(2, true, 32), dsm_ranges({{0, 8}, {2040, 9}})), NextStep::kRespond);
  EXPECT_EQ(q.status(), generic_status(proto::kScLbaOutOfRange));
  EXPECT_EQ(engine_.history.size(), before);
}

TEST_F(BackendTest, RamNamespaceAnswersAtOnceAndZeroes) {
  open(false);
  TestQueue& q = *io_;
  std::vector<uint8_t> data(4096, 0xEE);
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmWrite, 0, 8, 4096, true), data), NextStep::kRespond);
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmWrite, 8, 8, 4096, true), data), NextStep::kRespond);
  // Write Zeroes of LBAs 1..9 (a partial page at each end) and DSM of 12..13.
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmWriteZeroes, 1, 9, 0)), NextStep::kRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
  ASSERT_EQ(q.submit(dsm_sqe(1, true, 16), dsm_ranges({{12, 2}})), NextStep::kRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
  auto bytes = ns_->bytes(0, 16 * 512);
  for (size_t i = 0; i < bytes.size(); ++i) {
    size_t lba = i / 512;
    bool zeroed = (lba >= 1 && lba < 10) || lba == 12 || lba == 13;
    ASSERT_EQ(bytes[i], zeroed ? 0 : 0xEE) << "byte " << i;
  }
  ASSERT_EQ(q.submit(flush_sqe()), NextStep::kRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
  EXPECT_TRUE(engine_.history.empty());
}

TEST_F(BackendTest, IdentifyAnnouncesOncsDlfeatAndATruthfulVwc) {
  for (bool file : {true, false}) {
    open(file);
    TestQueue& a = *admin_;
    ASSERT_EQ(a.submit(identify_sqe(proto::kCnsController)), NextStep::kWriteToHostThenRespond);
    const auto& id = *reinterpret_cast<const proto::IdentifyController*>(a.buffer.data());
    EXPECT_EQ(id.oncs, kOncsDatasetManagement | kOncsWriteZeroes);
    EXPECT_EQ(id.vwc, file ? 1 : 0) << (file ? "file: the page cache" : "RAM: nothing to flush");
    ASSERT_EQ(a.submit(identify_sqe(proto::kCnsNamespace, 1)), NextStep::kWriteToHostThenRespond);
    const auto& ns = *reinterpret_cast<const proto::IdentifyNamespace*>(a.buffer.data());
    EXPECT_EQ(ns.dlfeat, 0x9);  // Write Zeroes DEAC supported, deallocated blocks read zeroes
  }
}

// The same processor on the real engine and a real file: what is written is read back, and a
// read past the end of a file truncated under the target is a status, not a signal.
TEST_F(BackendTest, RealEngineRoundTripAndTruncatedFile) {
  auto engine = IoEngine::create(IoEngineKind::kAuto, 8);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  open(true, engine->get());
  TestQueue& q = *io_;
  auto wait = [&] {
    for (int i = 0; i < 5000 && (*engine)->in_flight() > 0; ++i) {
      (*engine)->flush_submissions();
      if ((*engine)->reap() == 0) ::usleep(1000);
    }
    ASSERT_EQ((*engine)->in_flight(), 0u);
  };
  std::vector<uint8_t> data(4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31 + 5);
  proto::Sqe w = rw_sqe(proto::kNvmWrite, 64, 8, 4096, true);
  w.cdw12 |= proto::kRwFua;
  ASSERT_EQ(q.submit(w, data), NextStep::kBackend);
  wait();
  ASSERT_EQ(q.status(), kStatusSuccess);
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmRead, 64, 8, 4096)), NextStep::kBackend);
  wait();
  ASSERT_EQ(q.last, NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(std::memcmp(q.buffer.data(), data.data(), data.size()), 0);

  ASSERT_EQ(::truncate(path_.c_str(), 4096), 0);  // someone else shrinks the backing file
  ASSERT_EQ(q.submit(rw_sqe(proto::kNvmRead, 64, 8, 4096)), NextStep::kBackend);
  wait();
  EXPECT_EQ(q.status(), kUnrecoveredRead);
  ASSERT_EQ(q.submit(flush_sqe()), NextStep::kBackend);
  wait();
  EXPECT_EQ(q.status(), kStatusSuccess);
}

// Several namespaces in one subsystem: RAM nsid 1 and 3 around a file nsid 2.
TEST(MultiNamespace, ListsIdentifiesAndRoutesByNsid) {
  FakeEngine engine;
  std::string path = temp_path("multi_ns");
  ::unlink(path.c_str());
  auto ram1 = std::move(Namespace::create_ram(1 << 20, 512)).value();
  auto file2 = std::move(Namespace::open_file(path, 2 << 20, 512, engine)).value();
  auto ram3 = std::move(Namespace::create_ram(4 << 20, 4096)).value();
  StatsRegistry registry;
  StatusCounters statuses;
  SubsystemConfig cfg;
  cfg.nqn = kNqn;
  auto make = [&] {
    std::vector<SubsystemNamespace> list = {{3, ram3.get(), {}, std::nullopt},
                                            {1, ram1.get(), {}, std::nullopt},
                                            {2, file2.get(), {}, {}}};
    list[2].uuid = std::array<uint8_t, 16>{9, 9, 9};
    auto sub = std::make_unique<Subsystem>(cfg, std::move(list), registry);
    sub->set_in_capsule_data_size(kInCapsule);
    return sub;
  };
  auto subsys = make();
  ASSERT_EQ(subsys->namespaces().size(), 3u);
  EXPECT_EQ(subsys->namespaces()[0].nsid, 1u);  // sorted
  EXPECT_EQ(subsys->namespaces()[0].nguid, stable_id_from(kNqn)) << "nsid 1 as with one namespace";
  EXPECT_NE(subsys->namespaces()[1].nguid, subsys->namespaces()[2].nguid);
  EXPECT_EQ(make()->namespaces()[2].nguid, subsys->namespaces()[2].nguid) << "stable";

  TestQueue admin(*subsys, statuses, 0, 32);
  ASSERT_EQ(admin.submit(connect_sqe(0, 31), connect_data(proto::kAdminQueueCntlid)),
            NextStep::kRespond);
  ASSERT_EQ(admin.submit(property_set_sqe(proto::kPropCc, kGoodCc)), NextStep::kRespond);
  ASSERT_EQ(admin.submit(identify_sqe(proto::kCnsController)), NextStep::kWriteToHostThenRespond);
  const auto* id = reinterpret_cast<const proto::IdentifyController*>(admin.buffer.data());
  EXPECT_EQ(id->nn, Subsystem::kMaxNamespaces) << "NSIDs up to 1024 may come and go";
  EXPECT_EQ(id->mnan, Subsystem::kMaxNamespaces);
  EXPECT_EQ(id->oaes, proto::kAecNamespaceAttribute | proto::kAecAnaChange);
  ASSERT_EQ(admin.submit(identify_sqe(proto::kCnsActiveNamespaceList, 0)),
            NextStep::kWriteToHostThenRespond);
  uint32_t ids[4];
  std::memcpy(ids, admin.buffer.data(), sizeof(ids));
  EXPECT_EQ(ids[0], 1u);
  EXPECT_EQ(ids[1], 2u);
  EXPECT_EQ(ids[2], 3u);
  EXPECT_EQ(ids[3], 0u);
  ASSERT_EQ(admin.submit(identify_sqe(proto::kCnsNamespace, 3)), NextStep::kWriteToHostThenRespond);
  const auto& id3 = *reinterpret_cast<const proto::IdentifyNamespace*>(admin.buffer.data());
  EXPECT_EQ(id3.nsze, 1024u);
  EXPECT_EQ(id3.lbaf[0].lbads, 12);
  ASSERT_EQ(admin.submit(identify_sqe(proto::kCnsNamespaceIdDescriptorList, 2)),
            NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(admin.buffer[0], 2);  // NGUID descriptor
  EXPECT_EQ(std::memcmp(admin.buffer.data() + 4, subsys->namespaces()[1].nguid.data(), 16), 0);
  EXPECT_EQ(admin.buffer[20], 3);  // then the UUID
  EXPECT_EQ(admin.buffer[24], 9);
  admin.submit(identify_sqe(proto::kCnsNamespace, 4));
  EXPECT_EQ(admin.status(), generic_status(proto::kScInvalidNamespaceOrFormat));
  // Changed Namespace List (log 04h): present and empty.
  proto::Sqe log = base_sqe(proto::kAdminGetLogPage);
  log.cdw10 = 0x04 | (1023u << 16);
  ASSERT_TRUE(encode_keyed_sgl(log.dptr, 0x4000, 4096, 0x66));
  std::memset(admin.buffer.data(), 0xFF, 4096);
  ASSERT_EQ(admin.submit(log), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(admin.status(), kStatusSuccess);
  EXPECT_EQ(admin.buffer[0], 0);
  EXPECT_EQ(admin.buffer[4095], 0);

  TestQueue q(*subsys, statuses, 1, 128);
  ASSERT_EQ(q.submit(connect_sqe(1, 127), connect_data(1)), NextStep::kRespond);
  std::vector<uint8_t> data(4096, 0x3C);
  proto::Sqe w = rw_sqe(proto::kNvmWrite, 1, 1, 4096, true);
  w.nsid = 3;
  ASSERT_EQ(q.submit(w, data), NextStep::kRespond);
  EXPECT_EQ(ram3->bytes(4096, 1)[0], 0x3C);
  EXPECT_EQ(ram1->bytes(4096, 1)[0], 0) << "nsid 1 untouched";
  proto::Sqe r2 = rw_sqe(proto::kNvmRead, 0, 8, 4096);
  r2.nsid = 2;
  ASSERT_EQ(q.submit(r2), NextStep::kBackend);
  EXPECT_EQ(engine.submitted.front()->fd, file2->fd());
  engine.finish_next(4096);
  // A broadcast Flush has work on the file namespace only.
  ASSERT_EQ(q.submit(flush_sqe(0xFFFFFFFF)), NextStep::kBackend);
  ASSERT_EQ(engine.submitted.size(), 1u);
  engine.finish_next(0);
  EXPECT_EQ(q.last, NextStep::kRespond);
  EXPECT_EQ(q.status(), kStatusSuccess);
  proto::Sqe r4 = rw_sqe(proto::kNvmRead, 0, 1, 512);
  r4.nsid = 4;
  EXPECT_EQ(q.submit(r4), NextStep::kRespond);
  EXPECT_EQ(q.status(), generic_status(proto::kScInvalidNamespaceOrFormat));
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace nvmf::target
