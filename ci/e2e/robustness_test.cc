// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE: a hostile host against our target. Crafted SQEs (through the host
// raw layer's submit_raw() (host/raw/raw_commands.h), or a bare host::Queue for Connect) must each
// get the nvmet status (or the wire-facts one where nvmet is wrong), never a crash or a hang;
// broken RDMA (wrong rkey) tears the queue down and the target keeps serving; reconnect and connect
// cycles neither get refused nor leak file descriptors.
#include <dirent.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/e2e_options.h"
#include "ci/e2e/raw_cm.h"
#include "ci/e2e/running_target.h"
#include "ci/e2e/rxe_env.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "common/verbs/verbs.h"
#include "host/commands.h"
#include "host/controller.h"
#include "host/queue.h"
#include "host/raw/raw_commands.h"
#include "host/raw/raw_queue.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"
#include "proto/rdma_cm.h"
#include "target/target.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:robustness";
constexpr uint64_t kNsBytes = 1 << 20;  // 2048 LBAs of 512 bytes
constexpr uint32_t kLba = 512;
constexpr size_t kBufBytes = 256 << 10;  // above MDTS (128 KiB)

constexpr uint16_t kInvalidOpcode = generic_status(proto::kScInvalidOpcode);
constexpr uint16_t kInvalidField = generic_status(proto::kScInvalidField);
constexpr uint16_t kSglTypeInvalid = generic_status(proto::kScSglDescriptorTypeInvalid);
constexpr uint16_t kSglLengthInvalid = generic_status(proto::kScDataSglLengthInvalid);
constexpr uint16_t kLbaOutOfRange = generic_status(proto::kScLbaOutOfRange);
constexpr uint16_t kInvalidNs = generic_status(proto::kScInvalidNamespaceOrFormat);
constexpr uint16_t kSequenceError = generic_status(proto::kScCommandSequenceError);
constexpr uint16_t kConnectInvalid =
    make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true);

std::string status_text(uint16_t status) { return status_name(status_without_phase(status)); }

// Open file descriptors of this process (the target runs in-process, so both sides count).
int open_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n - 1;  // the DIR's own fd
}

// Verbs objects held on every RDMA device, from `rdma resource show` (iproute2): the summary
// line per device, e.g. "0: rxe0: pd 3 cq 5 qp 5 cm_id 3 mr 10 ctx 2 srq 0", with the device
// index and name dropped. Empty when the tool cannot be run.
std::string rdma_resources() {
  std::string out;
  std::FILE* p = ::popen("rdma resource show 2>/dev/null", "r");
  if (p == nullptr) return out;
  char line[512];
  while (std::fgets(line, sizeof(line), p) != nullptr) {
    std::string l(line);
    size_t pd = l.find("pd ");
    if (pd != std::string::npos) out += l.substr(pd);
  }
  ::pclose(p);
  return out;
}

class RobustnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NVMF_REQUIRE_RXE(env_);
    target::TargetOptions topts = ram_target_options(*env_, kNqn, kNsBytes);
    topts.max_io_queues = 4;
    target_ = RunningTarget::start(topts);
    ASSERT_NE(target_, nullptr);
  }
  void TearDown() override {
    ctrl_.reset();
    target_.reset();  // stops and joins the target, expecting run() to have returned ok
  }

  host::HostOptions host_options() const {
    host::HostOptions h;
    h.traddr = env_->target_addr;
    h.trsvcid = std::to_string((*target_)->port());
    h.subnqn = kNqn;
    h.host_traddr = env_->host_addr;
    h.timeout_ms = 10000;
    h.ctrl_loss_tmo_s = 0;  // a dropped association is reported, not reconnected
    return h;
  }
  host::QueueParams queue_params(uint16_t qid, uint16_t size) const {
    host::QueueParams p;
    p.qid = qid;
    p.queue_size = size;
    p.traddr = env_->target_addr;
    p.trsvcid = std::to_string((*target_)->port());
    p.host_traddr = env_->host_addr;
    p.timeout_ms = 10000;
    return p;
  }

  // Connects ctrl_ and registers buf_.
  void connect() {
    auto c = host::Controller::connect(host_options());
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    ctrl_ = std::move(*c);
    mem_.assign(kBufBytes, 0);
    auto b = ctrl_->register_buffer(mem_.data(), mem_.size());
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    buf_.emplace(std::move(*b));
  }

  // submit_raw's CQE status without the phase bit; 0xFFFF on a transport error.
  uint16_t raw(uint16_t qid, proto::Sqe sqe) {
    auto cqe = submit_raw(*ctrl_, qid, sqe, {});
    EXPECT_TRUE(cqe.ok()) << cqe.status().to_string();
    return cqe.ok() ? status_without_phase(cqe->status) : 0xFFFF;
  }
  // A Read SQE of `nlb` blocks at `slba` with a keyed SGL of `length` bytes on buf_.
  proto::Sqe keyed_read(uint64_t slba, uint32_t nlb, uint32_t length, uint32_t nsid = 1) {
    proto::Sqe s = host::read_sqe(nsid, slba, nlb);
    EXPECT_TRUE(
        encode_keyed_sgl(s.dptr, reinterpret_cast<uint64_t>(mem_.data()), length, buf_->rkey()));
    return s;
  }

  // A Connect on a bare queue; returns the CQE or a transport error.
  Result<proto::Cqe> bare_connect(host::Queue& q, uint16_t qid, uint16_t sqsize_entries,
                                  uint16_t cntlid, std::string_view subnqn,
                                  std::string_view hostnqn) {
    host::ConnectSpec spec;
    // The controller's host identifier: an I/O Connect must repeat the admin queue's.
    spec.hostid = ctrl_ ? ctrl_->hostid() : bare_hostid_;
    spec.cntlid = cntlid;
    spec.subnqn = subnqn;
    spec.hostnqn = hostnqn;
    proto::ConnectData d = host::connect_data_for(spec);
    proto::Sqe sqe = host::connect_sqe(qid, sqsize_entries, 0);
    return q.run(sqe, {reinterpret_cast<const uint8_t*>(&d), sizeof(d)}, {}, false);
  }

  // An admin queue connected by hand and enabled (CC.EN 1: I/O queues connect only to an
  // enabled controller) that never sends Set Features Number of Queues, so its controller may
  // open every qid up to the target's max_io_queues (4): nvmet grants every queue to a host
  // that never asked. Returns the CNTLID, or 0 with a test failure.
  uint16_t bare_admin(std::unique_ptr<host::Queue>& admin,
                      std::optional<verbs::ProtectionDomain>& pd, std::string_view hostnqn) {
    auto q = host::Queue::connect(queue_params(0, host::kAdminQueueSize), pd);
    EXPECT_TRUE(q.ok()) << q.status().to_string();
    if (!q.ok()) return 0;
    admin = std::move(*q);
    auto cqe =
        bare_connect(*admin, 0, host::kAdminQueueSize, proto::kAdminQueueCntlid, kNqn, hostnqn);
    EXPECT_TRUE(cqe.ok()) << cqe.status().to_string();
    if (!cqe.ok()) return 0;
    EXPECT_EQ(status_without_phase(cqe->status), kStatusSuccess) << status_text(cqe->status);
    auto en = admin->run(host::property_set_sqe(proto::kPropCc, host::kCcEnable), {}, {}, false);
    EXPECT_TRUE(en.ok()) << en.status().to_string();
    if (!en.ok()) return 0;
    EXPECT_EQ(status_without_phase(en->status), kStatusSuccess) << status_text(en->status);
    return static_cast<uint16_t>(cqe->dw0);
  }

  std::optional<RxeEnv> env_;
  std::unique_ptr<RunningTarget> target_;
  std::unique_ptr<host::Controller> ctrl_;
  std::vector<uint8_t> mem_;
  std::optional<verbs::RegisteredBuffer> buf_;
  host::HostId bare_hostid_ = host::random_host_id();  // bare_connect() without ctrl_
};

TEST_F(RobustnessTest, UnknownOpcodesAndBadPsdt) {
  connect();
  ASSERT_TRUE(ctrl_);
  proto::Sqe admin{};
  admin.opcode = 0xC5;  // vendor specific, not implemented
  admin.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(admin.dptr);
  EXPECT_EQ(raw(0, admin), kInvalidOpcode);
  proto::Sqe io = admin;
  io.opcode = 0x55;
  io.nsid = 1;
  EXPECT_EQ(raw(1, io), kInvalidOpcode);
  // An admin opcode on an I/O queue.
  proto::Sqe identify = host::identify_sqe(proto::kCnsController, 0);
  identify.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(identify.dptr);
  EXPECT_EQ(raw(1, identify), kInvalidOpcode);
  for (uint8_t psdt : {proto::kFlagsPsdtPrp, proto::kFlagsPsdtSglMptrSgl, uint8_t{0xC0}}) {
    proto::Sqe s = keyed_read(0, 1, kLba);
    s.flags = psdt;
    EXPECT_EQ(raw(1, s), kInvalidField) << "PSDT flags 0x" << std::hex << unsigned{psdt};
  }
  // Fused commands are not supported.
  proto::Sqe fused = keyed_read(0, 1, kLba);
  fused.flags |= 0x01;
  EXPECT_EQ(raw(1, fused), kInvalidField);
  // The queue still works.
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
}

// The raw layer refuses what it cannot send before anything reaches the wire: a queue the
// controller does not have, more than 4 in-capsule segments; the controller goes on.
TEST_F(RobustnessTest, RawSubmitRefusesAMissingQueueAndTooManySegments) {
  connect();
  ASSERT_TRUE(ctrl_);
  const uint16_t missing = static_cast<uint16_t>(ctrl_->num_io_queues() + 1);
  auto none = submit_raw(*ctrl_, missing, keyed_read(0, 1, kLba), {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("no queue " + std::to_string(missing)), std::string::npos)
      << none.status().to_string();
  std::vector<host::DataSegment> five;
  for (size_t i = 0; i < 5; ++i) five.push_back(host::segment_of(*buf_, i * kLba, kLba));
  proto::Sqe w = host::write_sqe(1, 0, 1);
  auto many = submit_raw(*ctrl_, 1, w, five);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ctrl_->recovery_stats().losses, 0u) << "a refused raw command is no loss";
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
}

TEST_F(RobustnessTest, BadSglDescriptors) {
  connect();
  ASSERT_TRUE(ctrl_);
  struct Case {
    uint8_t id;
    uint16_t want;
  };
  for (Case c :
       {Case{0x31, kSglTypeInvalid}, Case{0x20, kSglTypeInvalid}, Case{0x50, kSglTypeInvalid},
        Case{0x5F, kSglTypeInvalid}, Case{0x10, kSglTypeInvalid}, Case{0xE0, kSglTypeInvalid},
        Case{0x41, kInvalidField}, Case{0x4E, kInvalidField}, Case{0x00, kInvalidField}}) {
    proto::Sqe s = keyed_read(0, 1, kLba);
    s.dptr.id = c.id;
    EXPECT_EQ(raw(1, s), c.want) << "SGL id 0x" << std::hex << unsigned{c.id} << ": "
                                 << status_text(raw(1, s));
  }
  // In-capsule SGL on a read (controller to host): Invalid Field, as nvmet.
  proto::Sqe s = host::read_sqe(1, 0, 1);
  encode_in_capsule_sgl(s.dptr, 0, kLba);
  EXPECT_EQ(raw(1, s), kInvalidField);
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
}

TEST_F(RobustnessTest, KeyedLengthMustEqualNlbTimesLbaSize) {
  connect();
  ASSERT_TRUE(ctrl_);
  EXPECT_EQ(raw(1, keyed_read(0, 1, 0)), kSglLengthInvalid);
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba - 1)), kSglLengthInvalid);
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba + 1)), kSglLengthInvalid);
  EXPECT_EQ(raw(1, keyed_read(0, 8, 4096 - kLba)), kSglLengthInvalid);
  proto::Sqe w = host::write_sqe(1, 0, 2);
  ASSERT_TRUE(encode_keyed_sgl(w.dptr, reinterpret_cast<uint64_t>(mem_.data()), 0, buf_->rkey()));
  EXPECT_EQ(raw(1, w), kSglLengthInvalid);
  ASSERT_TRUE(
      encode_keyed_sgl(w.dptr, reinterpret_cast<uint64_t>(mem_.data()), kLba, buf_->rkey()));
  EXPECT_EQ(raw(1, w), kSglLengthInvalid);
  // A Flush that names a data buffer.
  proto::Sqe f = host::flush_sqe(1);
  ASSERT_TRUE(
      encode_keyed_sgl(f.dptr, reinterpret_cast<uint64_t>(mem_.data()), kLba, buf_->rkey()));
  EXPECT_EQ(raw(1, f), kSglLengthInvalid);
}

TEST_F(RobustnessTest, LbaRangeAndMdts) {
  connect();
  ASSERT_TRUE(ctrl_);
  const uint64_t nsze = kNsBytes / kLba;
  EXPECT_EQ(raw(1, keyed_read(nsze, 1, kLba)), kLbaOutOfRange);
  EXPECT_EQ(raw(1, keyed_read(nsze - 1, 2, 2 * kLba)), kLbaOutOfRange);
  EXPECT_EQ(raw(1, keyed_read(~0ull, 1, kLba)), kLbaOutOfRange);
  EXPECT_EQ(raw(1, keyed_read(~0ull - 1, 2, 2 * kLba)), kLbaOutOfRange);
  EXPECT_EQ(raw(1, keyed_read(1ull << 63, 1, kLba)), kLbaOutOfRange);
  // NLB 65536 (CDW12 NLB 0xFFFF): beyond the namespace, checked before the length and MDTS.
  EXPECT_EQ(raw(1, keyed_read(0, 65536, 0)), kLbaOutOfRange);
  proto::Sqe w = host::write_sqe(1, ~0ull, 1);
  ASSERT_TRUE(
      encode_keyed_sgl(w.dptr, reinterpret_cast<uint64_t>(mem_.data()), kLba, buf_->rkey()));
  EXPECT_EQ(raw(1, w), kLbaOutOfRange);
  // Inside the namespace but above MDTS (128 KiB): Invalid Field, nothing transferred.
  EXPECT_EQ(raw(1, keyed_read(0, 512, 512 * kLba)), kInvalidField);
  EXPECT_EQ(raw(1, keyed_read(0, 256, 256 * kLba)), kStatusSuccess);  // exactly MDTS
  EXPECT_EQ(raw(1, keyed_read(nsze - 1, 1, kLba)), kStatusSuccess);
}

TEST_F(RobustnessTest, BadNamespaceIds) {
  connect();
  ASSERT_TRUE(ctrl_);
  for (uint32_t nsid : {0u, 2u, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
    EXPECT_EQ(raw(1, keyed_read(0, 1, kLba, nsid)), kInvalidNs) << "nsid " << nsid;
    proto::Sqe id = host::identify_sqe(proto::kCnsNamespace, nsid);
    ASSERT_TRUE(
        encode_keyed_sgl(id.dptr, reinterpret_cast<uint64_t>(mem_.data()), 4096, buf_->rkey()));
    EXPECT_EQ(raw(0, id), kInvalidNs) << "Identify Namespace nsid " << nsid;
  }
  proto::Sqe f = host::flush_sqe(0xFFFFFFFF);  // broadcast flush is allowed
  encode_null_sgl(f.dptr);
  EXPECT_EQ(raw(1, f), kStatusSuccess);
}

TEST_F(RobustnessTest, IdentifyAndPropertiesWithBadFields) {
  connect();
  ASSERT_TRUE(ctrl_);
  for (uint8_t cns : {uint8_t{0x55}, uint8_t{0x10}, uint8_t{0xFF}}) {
    proto::Sqe id = host::identify_sqe(cns, 0);
    ASSERT_TRUE(
        encode_keyed_sgl(id.dptr, reinterpret_cast<uint64_t>(mem_.data()), 4096, buf_->rkey()));
    EXPECT_EQ(raw(0, id), kInvalidField) << "CNS 0x" << std::hex << unsigned{cns};
  }
  // Identify with a keyed length other than 4096.
  proto::Sqe id = host::identify_sqe(proto::kCnsController, 0);
  ASSERT_TRUE(
      encode_keyed_sgl(id.dptr, reinterpret_cast<uint64_t>(mem_.data()), 512, buf_->rkey()));
  EXPECT_EQ(raw(0, id), kSglLengthInvalid);

  auto get = [&](uint32_t ofst, bool eight) {
    proto::Sqe s = host::property_get_sqe(ofst, eight);
    s.flags = proto::kFlagsPsdtSgl;
    encode_null_sgl(s.dptr);
    return raw(0, s);
  };
  EXPECT_EQ(get(proto::kPropCap, true), kStatusSuccess);
  EXPECT_EQ(get(proto::kPropCap, false), kInvalidField);
  EXPECT_EQ(get(proto::kPropCc, true), kInvalidField);
  EXPECT_EQ(get(0x30, false), kInvalidField);
  EXPECT_EQ(get(0xFFFFFFFF, true), kInvalidField);
  EXPECT_EQ(get(0x02, false), kInvalidField);  // inside CAP, misaligned
  auto set = [&](uint32_t ofst, uint32_t value) {
    proto::Sqe s = host::property_set_sqe(ofst, value);
    s.flags = proto::kFlagsPsdtSgl;
    encode_null_sgl(s.dptr);
    return raw(0, s);
  };
  EXPECT_EQ(set(proto::kPropCsts, 0), kInvalidField);
  EXPECT_EQ(set(proto::kPropCap, 0), kInvalidField);
  EXPECT_EQ(set(0x1000, 0), kInvalidField);
  // A Fabrics command on an I/O queue (Property Get) is an invalid opcode (nvmet).
  proto::Sqe pg = host::property_get_sqe(proto::kPropCap, true);
  pg.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(pg.dptr);
  EXPECT_EQ(raw(1, pg), kInvalidOpcode);
  // Unknown Fabrics type on the admin queue.
  pg.nsid = 0x7E;  // FCTYPE
  EXPECT_EQ(raw(0, pg), kInvalidOpcode);
  // A second Connect on a connected queue (admin and I/O) is refused with Command Sequence
  // Error (one Connect per queue, as nvmet_install_queue), the queue survives.
  proto::Sqe c = host::connect_sqe(1, 128, 0);
  c.flags = proto::kFlagsPsdtSgl;
  ASSERT_TRUE(
      encode_keyed_sgl(c.dptr, reinterpret_cast<uint64_t>(mem_.data()), 1024, buf_->rkey()));
  EXPECT_EQ(raw(1, c), kSequenceError);
  EXPECT_EQ(raw(0, c), kSequenceError);
  EXPECT_EQ(get(proto::kPropCsts, false), kStatusSuccess);
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
}

TEST_F(RobustnessTest, CcWithBadEntrySizesSetsCfsAndCommandsGetSequenceError) {
  connect();
  ASSERT_TRUE(ctrl_);
  auto set_cc = [&](uint32_t value) {
    proto::Sqe s = host::property_set_sqe(proto::kPropCc, value);
    s.flags = proto::kFlagsPsdtSgl;
    encode_null_sgl(s.dptr);
    return raw(0, s);
  };
  auto csts = [&]() -> uint32_t {
    proto::Sqe s = host::property_get_sqe(proto::kPropCsts, false);
    s.flags = proto::kFlagsPsdtSgl;
    encode_null_sgl(s.dptr);
    auto cqe = submit_raw(*ctrl_, 0, s, {});
    EXPECT_TRUE(cqe.ok());
    return cqe.ok() ? cqe->dw0 : 0xFFFFFFFF;
  };
  ASSERT_EQ(set_cc(0), kStatusSuccess);  // disable (reset)
  EXPECT_EQ(csts() & proto::kCstsRdy, 0u);
  // Commands while CC.EN = 0: Command Sequence Error with DNR (nvmet_check_ctrl_status).
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kSequenceError);
  proto::Sqe id = host::identify_sqe(proto::kCnsController, 0);
  ASSERT_TRUE(
      encode_keyed_sgl(id.dptr, reinterpret_cast<uint64_t>(mem_.data()), 4096, buf_->rkey()));
  EXPECT_EQ(raw(0, id), kSequenceError);
  for (uint32_t bad : {0x00460001u & ~(0xFu << 16), 0x00460001u & ~(0xFu << 20), 0x00470001u,
                       0x00560001u, 0x00460011u, 0x00460081u, 0x00460801u}) {
    ASSERT_EQ(set_cc(0), kStatusSuccess);
    ASSERT_EQ(set_cc(bad), kStatusSuccess) << std::hex << bad;  // the failure is in CSTS
    uint32_t st = csts();
    EXPECT_NE(st & proto::kCstsCfs, 0u) << "CC 0x" << std::hex << bad << " CSTS 0x" << st;
    EXPECT_EQ(st & proto::kCstsRdy, 0u) << "CC 0x" << std::hex << bad;
    EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kSequenceError);
  }
  ASSERT_EQ(set_cc(0), kStatusSuccess);
  ASSERT_EQ(set_cc(host::kCcEnable), kStatusSuccess);
  EXPECT_EQ(csts() & (proto::kCstsRdy | proto::kCstsCfs), proto::kCstsRdy);
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
}

TEST_F(RobustnessTest, IoConnectWithBadParameters) {
  connect();
  ASSERT_TRUE(ctrl_);
  const uint16_t cntlid = ctrl_->negotiation().cntlid;
  const std::string hostnqn = ctrl_->hostnqn();
  std::optional<verbs::ProtectionDomain> pd;
  struct Case {
    const char* name;
    uint16_t cntlid;
    std::string subnqn, hostnqn;
    uint16_t sqsize_entries;
  };
  std::vector<Case> cases = {
      {"unknown cntlid", static_cast<uint16_t>(cntlid + 100), kNqn, hostnqn, 32},
      {"cntlid 0xFFFF on an I/O queue", 0xFFFF, kNqn, hostnqn, 32},
      {"wrong subnqn", cntlid, "nqn.2024-01.io.nvmf-rdma:other", hostnqn, 32},
      {"empty subnqn", cntlid, "", hostnqn, 32},
      {"empty hostnqn", cntlid, kNqn, "", 32},
      {"other hostnqn", cntlid, kNqn, "nqn.2014-08.org.nvmexpress:uuid:other", 32},
      {"sqsize above the CM hsqsize", cntlid, kNqn, hostnqn, 64},
  };
  for (const Case& c : cases) {
    auto q = host::Queue::connect(queue_params(2, 32), pd);
    ASSERT_TRUE(q.ok()) << c.name << ": " << q.status().to_string();
    auto cqe = bare_connect(**q, 2, c.sqsize_entries, c.cntlid, c.subnqn, c.hostnqn);
    ASSERT_TRUE(cqe.ok()) << c.name << ": " << cqe.status().to_string();
    EXPECT_EQ(status_without_phase(cqe->status), kConnectInvalid)
        << c.name << ": " << status_text(cqe->status);
    // An unconnected queue accepts nothing but Connect: Command Sequence Error.
    proto::Sqe read = host::read_sqe(1, 0, 1);
    auto r = (*q)->run(read, {}, std::span<uint8_t>(mem_.data(), kLba), false);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().to_string();
    EXPECT_EQ(status_without_phase(r->status), kSequenceError) << c.name;
  }
  // Connect's qid differing from the CM request's qid.
  {
    auto q = host::Queue::connect(queue_params(2, 32), pd);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    auto cqe = bare_connect(**q, 3, 32, cntlid, kNqn, hostnqn);
    ASSERT_TRUE(cqe.ok()) << cqe.status().to_string();
    EXPECT_EQ(status_without_phase(cqe->status), kConnectInvalid);
  }
  // ctrl_ asked Number of Queues for 1: qid 2 is above the grant, whatever else is right.
  {
    auto q = host::Queue::connect(queue_params(2, 32), pd);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    auto cqe = bare_connect(**q, 2, 32, cntlid, kNqn, hostnqn);
    ASSERT_TRUE(cqe.ok()) << cqe.status().to_string();
    EXPECT_EQ(status_without_phase(cqe->status), kConnectInvalid) << status_text(cqe->status);
    EXPECT_EQ(cqe->dw0, proto::connect_invalid_param_in_sqe(offsetof(proto::ConnectCommand, qid)));
  }
  // A good I/O Connect for qid 2 works afterwards on a controller that never sent Number of
  // Queues, and the first controller's own I/O queue still serves.
  std::unique_ptr<host::Queue> admin;
  const std::string bare_nqn = "nqn.2014-08.org.nvmexpress:uuid:robustness";
  uint16_t bare_cntlid = bare_admin(admin, pd, bare_nqn);
  ASSERT_NE(bare_cntlid, 0);
  auto q = host::Queue::connect(queue_params(2, 32), pd);
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  auto cqe = bare_connect(**q, 2, 32, bare_cntlid, kNqn, bare_nqn);
  ASSERT_TRUE(cqe.ok()) << cqe.status().to_string();
  EXPECT_EQ(status_without_phase(cqe->status), kStatusSuccess) << status_text(cqe->status);
  EXPECT_EQ(cqe->dw0 & 0xFFFF, bare_cntlid);
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
}

TEST_F(RobustnessTest, CommandsBeforeEnableGetSequenceError) {
  std::optional<verbs::ProtectionDomain> pd;
  auto admin = host::Queue::connect(queue_params(0, host::kAdminQueueSize), pd);
  ASSERT_TRUE(admin.ok()) << admin.status().to_string();
  const std::string hostnqn = "nqn.2014-08.org.nvmexpress:uuid:robustness";
  auto cqe =
      bare_connect(**admin, 0, host::kAdminQueueSize, proto::kAdminQueueCntlid, kNqn, hostnqn);
  ASSERT_TRUE(cqe.ok()) << cqe.status().to_string();
  ASSERT_EQ(status_without_phase(cqe->status), kStatusSuccess) << status_text(cqe->status);
  uint16_t cntlid = static_cast<uint16_t>(cqe->dw0);
  std::vector<uint8_t> data(4096);
  auto id = (*admin)->run(host::identify_sqe(proto::kCnsController, 0), {}, data, false);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  EXPECT_EQ(status_without_phase(id->status), kSequenceError) << status_text(id->status);
  // An I/O queue may not connect before the controller is enabled: Connect Invalid Parameters
  // with IPO at QID (SPDK; nvmet accepts it), and the unconnected queue takes nothing else.
  auto io = host::Queue::connect(queue_params(1, 32), pd);
  ASSERT_TRUE(io.ok()) << io.status().to_string();
  auto ic = bare_connect(**io, 1, 32, cntlid, kNqn, hostnqn);
  ASSERT_TRUE(ic.ok()) << ic.status().to_string();
  EXPECT_EQ(status_without_phase(ic->status), kConnectInvalid) << status_text(ic->status);
  EXPECT_EQ(ic->dw0, proto::connect_invalid_param_in_sqe(offsetof(proto::ConnectCommand, qid)));
  auto rd = (*io)->run(host::read_sqe(1, 0, 1), {}, std::span<uint8_t>(data.data(), kLba), false);
  ASSERT_TRUE(rd.ok()) << rd.status().to_string();
  EXPECT_EQ(status_without_phase(rd->status), kSequenceError) << status_text(rd->status);
  // A Property Get works (Fabrics commands need no CC.EN).
  auto pg = (*admin)->run(host::property_get_sqe(proto::kPropCap, true), {}, {}, false);
  ASSERT_TRUE(pg.ok()) << pg.status().to_string();
  EXPECT_EQ(status_without_phase(pg->status), kStatusSuccess);
}

TEST_F(RobustnessTest, WrongRkeyOnWriteTearsTheQueueDownAndTargetServesOn) {
  connect();
  ASSERT_TRUE(ctrl_);
  uint64_t before = (*target_)->stats().disconnections;
  // 8 KiB: above the in-capsule size, so the target RDMA READs from a key that does not exist.
  proto::Sqe w = host::write_sqe(1, 0, 16);
  ASSERT_TRUE(encode_keyed_sgl(w.dptr, reinterpret_cast<uint64_t>(mem_.data()), 16 * kLba,
                               buf_->rkey() ^ 0x5A5A00));
  auto cqe = submit_raw(*ctrl_, 1, w, {});
  // The RDMA READ fails at the host's responder: the connection breaks (a transport error), or
  // the target answers with an error; it never reports success.
  if (cqe.ok()) {
    EXPECT_NE(status_without_phase(cqe->status), kStatusSuccess);
  }
  ctrl_.reset();
  // The target is alive and serves a new association.
  connect();
  ASSERT_TRUE(ctrl_);
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
  EXPECT_GT((*target_)->stats().disconnections, before);
}

// A host whose CM REQ offers responder_resources 0 would leave the target no RDMA READ credit:
// the first keyed Write (or keyed Connect data) would wait forever for a READ that is never
// sent. So the target rejects such a host rather than only logging a warning.
TEST_F(RobustnessTest, HostWithoutReadResourcesIsRejectedWithInvalidIrd) {
  proto::CmRequestPrivateData priv = host::cm_request_private_data(0, host::kAdminQueueSize);
  auto rej = raw_connect_expect_reject(*env_, (*target_)->port(), &priv, sizeof(priv),
                                       /*responder_resources=*/0, /*initiator_depth=*/0, 10000);
  ASSERT_TRUE(rej.ok()) << rej.status().to_string();
  EXPECT_EQ(rej->sts, proto::kCmRejectInvalidIrd);
  connect();  // a normal host still gets in
  ASSERT_TRUE(ctrl_);
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
}

// The host, against a target that goes away with a command outstanding: the wait ends with
// "the target disconnected" (kUnavailable) as soon as the CM says so, not a timeout after
// the host sat out its command timeout.
TEST_F(RobustnessTest, HostReportsATargetThatDisconnectsMidCommand) {
  std::optional<verbs::ProtectionDomain> pd;
  host::QueueParams params = queue_params(0, host::kAdminQueueSize);
  params.timeout_ms = 300000;  // far beyond the test: only a CM event can end the wait early
  auto admin = host::Queue::connect(params, pd);
  ASSERT_TRUE(admin.ok()) << admin.status().to_string();
  auto cqe = bare_connect(**admin, 0, host::kAdminQueueSize, proto::kAdminQueueCntlid, kNqn,
                          "nqn.2014-08.org.nvmexpress:uuid:goes-away");
  ASSERT_TRUE(cqe.ok()) << cqe.status().to_string();
  ASSERT_EQ(status_without_phase(cqe->status), kStatusSuccess);
  auto en = (*admin)->run(host::property_set_sqe(proto::kPropCc, host::kCcEnable), {}, {}, false);
  ASSERT_TRUE(en.ok()) << en.status().to_string();
  ASSERT_EQ(status_without_phase(en->status), kStatusSuccess);
  // An Async Event Request is held by the target: it is answered by nothing but the end.
  proto::Sqe aer{};
  aer.opcode = proto::kAdminAsyncEventRequest;
  aer.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(aer.dptr);
  auto slot = (*admin)->post(aer, {});
  ASSERT_TRUE(slot.ok()) << slot.status().to_string();
  target_.reset();  // stops and joins it, expecting run() to have returned ok
  auto r = (*admin)->wait(*slot, (*admin)->deadline());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().to_string();
  EXPECT_NE(r.status().message().find("target disconnected"), std::string::npos)
      << r.status().to_string();
}

TEST_F(RobustnessTest, QuickIoQueueReconnectIsNeverRefused) {
  connect();
  ASSERT_TRUE(ctrl_);
  std::optional<verbs::ProtectionDomain> pd;
  // qid 2 of a controller that never sent Number of Queues (ctrl_ was granted only qid 1).
  std::unique_ptr<host::Queue> admin;
  const std::string hostnqn = "nqn.2014-08.org.nvmexpress:uuid:robustness";
  const uint16_t cntlid = bare_admin(admin, pd, hostnqn);
  ASSERT_NE(cntlid, 0);
  for (int i = 0; i < 20; ++i) {
    auto q = host::Queue::connect(queue_params(2, 32), pd);
    ASSERT_TRUE(q.ok()) << "round " << i << ": " << q.status().to_string();
    auto cqe = bare_connect(**q, 2, 32, cntlid, kNqn, hostnqn);
    ASSERT_TRUE(cqe.ok()) << "round " << i << ": " << cqe.status().to_string();
    ASSERT_EQ(status_without_phase(cqe->status), kStatusSuccess)
        << "round " << i << ": " << status_text(cqe->status);
    (*q)->disconnect();  // then destroyed at once: no wait for the target's teardown
  }
  EXPECT_EQ(raw(1, keyed_read(0, 1, kLba)), kStatusSuccess);
}

TEST_F(RobustnessTest, ConnectDisconnectCyclesLeakNothing) {
  auto cycle = [&] {
    auto c = host::Controller::connect(host_options());
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_TRUE((*c)->disconnect().ok());
  };
  cycle();  // warm-up: lazily opened device files (uverbs, rdma_cm) stay open
  // The target frees a controller when it sees the admin queue go: wait for that.
  auto settled = [&] {
    for (int i = 0; i < 2000; ++i) {
      auto s = (*target_)->stats();
      if (s.controllers_created == s.controllers_freed && s.queues.empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  };
  ASSERT_TRUE(settled());
  const int fds = open_fds();
  const std::string resources = rdma_resources();
  ASSERT_NE(resources.find("qp "), std::string::npos) << "`rdma resource show` gave: " << resources;
  for (int i = 0; i < 25; ++i) cycle();
  ASSERT_TRUE(settled());
  EXPECT_EQ(open_fds(), fds);
  // No PD, CQ, QP, CM id or MR left behind on either side (both run in this process).
  EXPECT_EQ(rdma_resources(), resources);
  auto s = (*target_)->stats();
  EXPECT_EQ(s.controllers_created, 26u);
  EXPECT_EQ(s.controllers_freed, 26u);
}

}  // namespace
}  // namespace nvmf::e2e
