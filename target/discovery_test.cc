// SPDX-License-Identifier: BSD-3-Clause
// Discovery: the Discovery Log Page layout, the Get Log Page window, the discovery Identify, and
// the port's Connect routing (discovery NQN, several subsystems, allowed hosts), driven in memory.
#include "target/discovery.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/nvme_status.h"
#include "common/sgl.h"
#include "proto/discovery.h"
#include "proto/fabrics.h"
#include "target/command_processor.h"
#include "target/control_lock.h"
#include "target/port.h"

namespace nvmf::target {
namespace {

constexpr char kNqnA[] = "nqn.2024-01.io.nvmf-rdma:a";
constexpr char kNqnB[] = "nqn.2024-01.io.nvmf-rdma:b";
constexpr char kHost1[] = "nqn.2014-08.org.nvmexpress:uuid:host-1";
constexpr char kHost2[] = "nqn.2014-08.org.nvmexpress:uuid:host-2";

uint64_t le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

std::string text_at(const uint8_t* p, size_t n) {
  return std::string(reinterpret_cast<const char*>(p),
                     strnlen(reinterpret_cast<const char*>(p), n));
}

DiscoveryAddress address_v4() {
  DiscoveryAddress a;
  a.portid = 7;
  a.adrfam = proto::kAdrfamIpv4;
  a.treq = proto::kTreqNotSpecified;
  a.traddr = "10.99.0.1";
  a.trsvcid = "4420";
  return a;
}

TEST(DiscoveryLogTest, HeaderAndEntriesAtSpecOffsets) {
  std::vector<std::string> nqns = {kNqnA, kNqnB};
  std::vector<uint8_t> log = build_discovery_log(address_v4(), nqns, 5, 32);
  ASSERT_EQ(log.size(), 1024u * 4);
  EXPECT_EQ(le(&log[0], 8), 5u);   // GENCTR
  EXPECT_EQ(le(&log[8], 8), 3u);   // NUMREC: the current discovery subsystem + 2
  EXPECT_EQ(le(&log[16], 2), 0u);  // RECFMT
  std::vector<std::string> want = {proto::kDiscoveryNqn, kNqnA, kNqnB};
  for (size_t i = 0; i < 3; ++i) {
    const uint8_t* e = &log[1024 * (i + 1)];
    EXPECT_EQ(e[0], 1) << "TRTYPE rdma";
    EXPECT_EQ(e[1], 1) << "ADRFAM ipv4";
    EXPECT_EQ(e[2], i == 0 ? 3 : 2) << "SUBTYPE current discovery subsystem, then NVM subsystem";
    EXPECT_EQ(e[3], 0) << "TREQ not specified";
    EXPECT_EQ(le(e + 4, 2), 7u) << "PORTID";
    EXPECT_EQ(le(e + 6, 2), 0xFFFFu) << "CNTLID dynamic";
    EXPECT_EQ(le(e + 8, 2), 32u) << "ASQSZ";
    EXPECT_EQ(le(e + 10, 2), 0u) << "EFLAGS";
    EXPECT_EQ(text_at(e + 32, 32), "4420");
    EXPECT_EQ(text_at(e + 256, 256), want[i]);
    EXPECT_EQ(text_at(e + 512, 256), "10.99.0.1");
    EXPECT_EQ(e[768], 1) << "RDMA_QPTYPE connected";
    EXPECT_EQ(e[769], 1) << "RDMA_PRTYPE not specified";
    EXPECT_EQ(e[770], 1) << "RDMA_CMS rdma_cm";
    EXPECT_EQ(le(e + 776, 2), 0u) << "RDMA_PKEY";
    EXPECT_EQ(e[32 + 4], 0) << "TRSVCID NUL padded, as nvmet";
  }
}

TEST(DiscoveryLogTest, NoSubsystemLeavesTheDiscoveryEntry) {
  std::vector<uint8_t> log = build_discovery_log(address_v4(), {}, 1, 32);
  ASSERT_EQ(log.size(), 2048u);
  EXPECT_EQ(le(&log[8], 8), 1u);
  EXPECT_EQ(text_at(&log[1024 + 256], 256), proto::kDiscoveryNqn);
}

TEST(DiscoveryLogTest, AdrfamFromAddress) {
  EXPECT_EQ(adrfam_for("10.0.0.1"), proto::kAdrfamIpv4);
  EXPECT_EQ(adrfam_for("fe80::1"), proto::kAdrfamIpv6);
}

TEST(DiscoveryLogTest, WindowCopiesAndZeroFillsWhatLiesPastTheEnd) {
  std::vector<uint8_t> log(2048);
  for (size_t i = 0; i < log.size(); ++i) log[i] = static_cast<uint8_t>(i % 251 + 1);
  std::vector<uint8_t> out(1024, 0xEE);
  ASSERT_EQ(copy_log_window(log, 1536, out), kStatusSuccess);
  EXPECT_EQ(out[0], log[1536]);
  EXPECT_EQ(out[511], log[2047]);
  EXPECT_EQ(out[512], 0) << "the window's part past the end reads as zero";
  EXPECT_EQ(out[1023], 0);
  ASSERT_EQ(copy_log_window(log, 2048, out), kStatusSuccess) << "a window starting at the end";
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(copy_log_window(log, 4096, out), generic_status(proto::kScInvalidField))
      << "an offset beyond the end, as the NVM subsystem's log pages answer it (Base 2.0 §5.16)";
  EXPECT_EQ(copy_log_window(log, 2, out), generic_status(proto::kScInvalidField))
      << "LPO must be dword aligned";
}

TEST(DiscoveryIdentifyTest, FieldsAsNvmet) {
  DiscoveryIdentifyParams p;
  p.cntlid = 3;
  p.version = 0x00010300;
  p.kas = 1;
  p.maxcmd = 32;
  p.serial = "0123456789abcdef0123";
  p.model = "nvmf-rdma target";
  p.firmware = "0.1";
  p.in_capsule = true;
  proto::IdentifyController id;
  build_discovery_identify_controller(p, &id);
  EXPECT_EQ(id.cntrltype, proto::kCntrltypeDiscovery);
  EXPECT_EQ(id.cntlid, 3);
  EXPECT_EQ(id.nn, 0u);
  EXPECT_EQ(id.mdts, 0);
  EXPECT_EQ(id.lpa, 1u << 2);
  EXPECT_EQ(id.kas, 1);
  EXPECT_EQ(id.sgls, proto::kSglsSupported | proto::kSglsKeyedDataBlock | proto::kSglsOffset);
  EXPECT_EQ(id.ioccsz, 0u);
  EXPECT_EQ(id.iorcsz, 0u);
  EXPECT_EQ(id.msdbd, 0);
  EXPECT_EQ(id.cmic, 0);  // nvmet: no multi-controller/multi-port bits on discovery
  EXPECT_STREQ(id.subnqn, proto::kDiscoveryNqn);
}

// ------------------------------------------------------------------- Connect through a port --

class FakeLink : public QueueLink {
 public:
  void request_disconnect(std::string_view reason) override { reasons.emplace_back(reason); }
  std::string describe() const override { return "test"; }
  std::string peer_host() const override { return peer; }
  void respond_held(Request& r) override { held_responses.push_back(r.cqe); }
  std::vector<std::string> reasons;
  std::string peer;
  std::vector<proto::Cqe> held_responses;  // held commands answered later (AERs)
};

// One queue driven in memory; Connect data and other data go keyed (data_arrived()).
class Queue {
 public:
  Queue(Subsystem& any, StatusCounters& statuses, uint16_t qid)
      : proc(any, link, counters, statuses, qid, 32, 0), buffer(128 * 1024) {}

  NextStep submit(const proto::Sqe& s, const std::vector<uint8_t>& data = {}) {
    sqe = s;
    req = Request{};
    req.sqe = &sqe;
    req.buffer = buffer;
    NextStep step = proc.begin(req);
    if (step == NextStep::kReadFromHost) {
      std::memcpy(buffer.data(), data.data(), data.size());
      step = proc.data_arrived(req);
    }
    return step;
  }
  uint16_t status() const { return req.cqe.status; }

  FakeLink link;
  QueueCounters counters;
  CommandProcessor proc;
  std::vector<uint8_t> buffer;
  proto::Sqe sqe{};
  Request req;
};

proto::Sqe keyed(uint8_t opcode, uint32_t bytes) {
  proto::Sqe s{};
  s.opcode = opcode;
  s.flags = proto::kFlagsPsdtSgl;
  s.cid = 1;
  if (bytes == 0) {
    encode_null_sgl(s.dptr);
  } else {
    EXPECT_TRUE(encode_keyed_sgl(s.dptr, 0x1000, bytes, 0x42));
  }
  return s;
}

proto::Sqe connect_sqe(uint16_t qid) {
  proto::Sqe s = keyed(proto::kOpcodeFabrics, proto::kConnectDataSize);
  auto& c = reinterpret_cast<proto::ConnectCommand&>(s);
  c.fctype = proto::kFctypeConnect;
  c.qid = qid;
  c.sqsize = 31;
  return s;
}

std::vector<uint8_t> connect_data(uint16_t cntlid, const char* subnqn, const char* hostnqn) {
  proto::ConnectData d{};
  d.cntlid = cntlid;
  std::strncpy(d.subnqn, subnqn, sizeof(d.subnqn) - 1);
  std::strncpy(d.hostnqn, hostnqn, sizeof(d.hostnqn) - 1);
  std::vector<uint8_t> bytes(sizeof(d));
  std::memcpy(bytes.data(), &d, sizeof(d));
  return bytes;
}

proto::Sqe property_set_cc() {
  proto::Sqe s = keyed(proto::kOpcodeFabrics, 0);
  auto& p = reinterpret_cast<proto::PropertySetCommand&>(s);
  p.fctype = proto::kFctypePropertySet;
  p.attrib = proto::kPropertySize4;
  p.ofst = proto::kPropCc;
  p.value = 0x00460001;
  return s;
}

proto::Sqe get_log_page(uint8_t lid, uint32_t bytes, uint64_t offset) {
  proto::Sqe s = keyed(proto::kAdminGetLogPage, bytes);
  uint32_t numd = bytes / 4 - 1;
  s.cdw10 = lid | ((numd & 0xFFFF) << 16);
  s.cdw11 = numd >> 16;
  s.cdw12 = static_cast<uint32_t>(offset);
  s.cdw13 = static_cast<uint32_t>(offset >> 32);
  return s;
}

class PortTest : public ::testing::Test {
 protected:
  PortTest() {
    ns_a_ = std::move(Namespace::create_ram(1 << 20, 512)).value();
    ns_b_ = std::move(Namespace::create_ram(1 << 20, 512)).value();
    SubsystemConfig disc;
    disc.nqn = proto::kDiscoveryNqn;
    disc.discovery = true;
    discovery_ = std::make_unique<Subsystem>(disc, registry_);
    SubsystemConfig a;
    a.nqn = kNqnA;
    a_ = std::make_unique<Subsystem>(a, *ns_a_, registry_);
    SubsystemConfig b;
    b.nqn = kNqnB;
    b.allow_any_host = false;
    b.allowed_hosts = {kHost1};
    b_ = std::make_unique<Subsystem>(b, *ns_b_, registry_);
    port_ = std::make_unique<Port>(address_v4(), *discovery_);
    port_->link(*a_);
    port_->link(*b_);
  }
  ~PortTest() override {
    queues_.clear();
    port_.reset();
  }

  Queue& queue(uint16_t qid) {
    queues_.push_back(std::make_unique<Queue>(*a_, statuses_, qid));
    return *queues_.back();
  }
  // An enabled admin queue on `subnqn` for `hostnqn`.
  Queue& admin(const char* subnqn, const char* hostnqn) {
    Queue& q = queue(0);
    EXPECT_EQ(q.submit(connect_sqe(0), connect_data(0xFFFF, subnqn, hostnqn)), NextStep::kRespond);
    EXPECT_EQ(q.status(), kStatusSuccess);
    EXPECT_EQ(q.submit(property_set_cc()), NextStep::kRespond);
    EXPECT_EQ(q.status(), kStatusSuccess);
    return q;
  }

  std::unique_ptr<Namespace> ns_a_, ns_b_;
  StatsRegistry registry_;
  StatusCounters statuses_;
  std::unique_ptr<Subsystem> discovery_, a_, b_;
  std::unique_ptr<Port> port_;
  std::vector<std::unique_ptr<Queue>> queues_;
};

// The controller limits count NVM subsystems and discovery apart, and a host by its NQN from its
// peer address: a client that opens discovery controllers under a victim's host NQN fills neither
// the victim's room on its subsystem nor, from its own address, the victim's per-host share.
TEST(PortLimitsTest, DiscoveryControllersAndClaimedNqnsTakeNothingFromTheVictim) {
  auto ns = std::move(Namespace::create_ram(1 << 20, 512)).value();
  StatsRegistry registry;
  StatusCounters statuses;
  SubsystemConfig disc;
  disc.nqn = proto::kDiscoveryNqn;
  disc.discovery = true;
  disc.max_controllers = 3;
  disc.max_controllers_per_host = 2;
  Subsystem discovery(disc, registry);
  SubsystemConfig a;
  a.nqn = kNqnA;
  a.max_controllers = 3;
  a.max_controllers_per_host = 2;
  Subsystem sub(a, *ns, registry);
  Port port(address_v4(), discovery);
  port.link(sub);
  std::vector<std::unique_ptr<Queue>> qs;
  auto connect = [&](const char* subnqn, const char* hostnqn, const char* peer) {
    qs.push_back(std::make_unique<Queue>(sub, statuses, 0));
    qs.back()->link.peer = peer;
    qs.back()->proc.set_port(&port);
    qs.back()->submit(connect_sqe(0), connect_data(0xFFFF, subnqn, hostnqn));
    return qs.back()->status();
  };
  const uint16_t busy =
      make_status(proto::kSctCommandSpecific, proto::kScControllerBusy, /*dnr=*/false);
  // The attacker (10.0.0.66) claims the victim's host NQN on discovery controllers.
  EXPECT_EQ(connect(proto::kDiscoveryNqn, kHost1, "10.0.0.66"), kStatusSuccess);
  EXPECT_EQ(connect(proto::kDiscoveryNqn, kHost1, "10.0.0.66"), kStatusSuccess);
  EXPECT_EQ(connect(proto::kDiscoveryNqn, kHost1, "10.0.0.66"), busy) << "its own share is 2";
  EXPECT_EQ(port.controller_count(true), 2u);
  EXPECT_EQ(port.controller_count(false), 0u);
  // The victim (10.0.0.2) still gets its discovery controllers and its subsystem's.
  EXPECT_EQ(connect(proto::kDiscoveryNqn, kHost1, "10.0.0.2"), kStatusSuccess);
  EXPECT_EQ(connect(kNqnA, kHost1, "10.0.0.2"), kStatusSuccess);
  EXPECT_EQ(connect(kNqnA, kHost1, "10.0.0.2"), kStatusSuccess);
  EXPECT_EQ(connect(kNqnA, kHost1, "10.0.0.2"), busy) << "the victim's own share is 2";
  // The discovery kind is full (3), the NVM kind has room for one more host.
  EXPECT_EQ(connect(proto::kDiscoveryNqn, kHost2, "10.0.0.3"), busy);
  EXPECT_EQ(connect(kNqnA, kHost2, "10.0.0.3"), kStatusSuccess);
  EXPECT_EQ(connect(kNqnA, kHost2, "10.0.0.4"), busy) << "3 NVM controllers on the port";
  EXPECT_EQ(port.controller_count_for(kHost1, "10.0.0.66", true), 2u);
  EXPECT_EQ(port.controller_count_for(kHost1, "10.0.0.2", false), 2u);
  qs.clear();
}

TEST_F(PortTest, ConnectPicksTheSubsystemBySubnqn) {
  admin(kNqnB, kHost1);
  EXPECT_EQ(a_->controller_count(), 0u);
  EXPECT_EQ(b_->controller_count(), 1u);
  admin(kNqnA, kHost2);
  EXPECT_EQ(a_->controller_count(), 1u);
  EXPECT_EQ(a_->find_controller(1), nullptr) << "CNTLIDs are unique on the port";
  EXPECT_NE(a_->find_controller(2), nullptr);
}

TEST_F(PortTest, HostNotAllowedGetsConnectInvalidHost) {
  Queue& q = queue(0);
  q.submit(connect_sqe(0), connect_data(0xFFFF, kNqnB, kHost2));
  EXPECT_EQ(q.status(), make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidHost, true))
      << "nvmet: SCT 1h SC 84h with DNR";
  EXPECT_EQ(q.req.cqe.dw0, (1u << 16) | 512u) << "IATTR 1 (Connect data), IPO 512 (HOSTNQN)";
  EXPECT_EQ(b_->controller_count(), 0u);
}

TEST_F(PortTest, UnknownSubsystemIsInvalidParameterOnSubnqn) {
  Queue& q = queue(0);
  q.submit(connect_sqe(0), connect_data(0xFFFF, "nqn.2024-01.io.nvmf-rdma:none", kHost1));
  EXPECT_EQ(q.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  EXPECT_EQ(q.req.cqe.dw0, (1u << 16) | 256u);
}

TEST_F(PortTest, DiscoveryLogListsOnlySubsystemsTheHostMaySee) {
  Queue& d1 = admin(proto::kDiscoveryNqn, kHost1);
  ASSERT_EQ(d1.submit(get_log_page(proto::kLogDiscovery, 4096, 0)),
            NextStep::kWriteToHostThenRespond);
  ASSERT_EQ(d1.status(), kStatusSuccess);
  EXPECT_EQ(le(&d1.buffer[8], 8), 3u);
  EXPECT_EQ(le(&d1.buffer[0], 8), 2u) << "GENCTR counts the two links";
  EXPECT_EQ(text_at(&d1.buffer[1024 + 256], 256), proto::kDiscoveryNqn);
  EXPECT_EQ(text_at(&d1.buffer[2048 + 256], 256), kNqnA);
  EXPECT_EQ(text_at(&d1.buffer[3072 + 256], 256), kNqnB);

  Queue& d2 = admin(proto::kDiscoveryNqn, kHost2);
  d2.submit(get_log_page(proto::kLogDiscovery, 3072, 0));
  ASSERT_EQ(d2.status(), kStatusSuccess);
  EXPECT_EQ(le(&d2.buffer[8], 8), 2u) << "host-2 is not allowed on subsystem b";
  EXPECT_EQ(text_at(&d2.buffer[2048 + 256], 256), kNqnA);

  // nvme-cli reads the header, then the entries at an offset (LPOL).
  d1.submit(get_log_page(proto::kLogDiscovery, 1024, 3072));
  ASSERT_EQ(d1.status(), kStatusSuccess);
  EXPECT_EQ(text_at(&d1.buffer[256], 256), kNqnB);
  d1.submit(get_log_page(proto::kLogDiscovery, 1024, 4096));
  ASSERT_EQ(d1.status(), kStatusSuccess);
  EXPECT_EQ(le(&d1.buffer[0], 8), 0u) << "past NUMREC entries: zero";
}

// A second port in the group. Each queue finds subsystems through its own
// port; the log lists every enabled port's links on that port's address; CNTLIDs stay unique
// across the ports (a host's two paths are two controllers of one subsystem); a removed port
// leaves the log and GENCTR moves on.
TEST_F(PortTest, SecondPortListsItsOwnAddressAndFindsOnlyItsLinks) {
  DiscoveryAddress second = address_v4();
  second.portid = 9;
  second.trsvcid = "4421";
  Port port2(second, *discovery_);
  port2.link(*b_);  // b only
  port_->set_group({port_.get(), &port2});
  port2.set_group({port_.get(), &port2});

  Queue& on2 = queue(0);
  on2.proc.set_port(&port2);
  on2.submit(connect_sqe(0), connect_data(0xFFFF, kNqnA, kHost1));
  EXPECT_EQ(on2.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true))
      << "a is not linked to port 9";
  Queue& b1 = admin(kNqnB, kHost1);  // port 7
  (void)b1;
  Queue& b2 = queue(0);
  b2.proc.set_port(&port2);
  b2.submit(connect_sqe(0), connect_data(0xFFFF, kNqnB, kHost1));
  ASSERT_EQ(b2.status(), kStatusSuccess);
  EXPECT_EQ(b_->controller_count(), 2u) << "two paths, two controllers of subsystem b";
  EXPECT_NE(b_->find_controller(1), nullptr);
  EXPECT_NE(b_->find_controller(2), nullptr);
  EXPECT_EQ(port2.controller_count_for(kHost1, "", false), 2u) << "limits count across the group";

  Queue& d = queue(0);
  d.proc.set_port(&port2);
  d.submit(connect_sqe(0), connect_data(0xFFFF, proto::kDiscoveryNqn, kHost1));
  ASSERT_EQ(d.status(), kStatusSuccess);
  d.submit(property_set_cc());
  d.submit(get_log_page(proto::kLogDiscovery, 5 * 1024, 0));
  ASSERT_EQ(d.status(), kStatusSuccess);
  EXPECT_EQ(le(&d.buffer[8], 8), 4u) << "current + a@7 + b@7 + b@9";
  EXPECT_EQ(le(&d.buffer[0], 8), 3u) << "GENCTR: 2 links on port 7, 1 on port 9";
  auto entry = [&](int i) { return &d.buffer[1024 * (i + 1)]; };
  EXPECT_EQ(le(entry(0) + 4, 2), 9u) << "the current discovery entry is the port queried";
  EXPECT_EQ(text_at(entry(0) + 32, 32), "4421");
  EXPECT_EQ(text_at(entry(1) + 256, 256), kNqnA);
  EXPECT_EQ(le(entry(1) + 4, 2), 7u);
  EXPECT_EQ(text_at(entry(1) + 32, 32), "4420");
  EXPECT_EQ(text_at(entry(3) + 256, 256), kNqnB);
  EXPECT_EQ(le(entry(3) + 4, 2), 9u);
  EXPECT_EQ(text_at(entry(3) + 32, 32), "4421");

  port2.disable();
  d.submit(get_log_page(proto::kLogDiscovery, 5 * 1024, 0));
  EXPECT_EQ(le(&d.buffer[8], 8), 3u) << "port 9 removed";
  EXPECT_EQ(le(&d.buffer[0], 8), 4u);
  queues_.clear();  // before port2 goes
}

TEST_F(PortTest, DiscoveryControllerCommandsAsNvmet) {
  Queue& d = admin(proto::kDiscoveryNqn, kHost1);
  proto::Sqe id = keyed(proto::kAdminIdentify, 4096);
  id.cdw10 = proto::kCnsController;
  ASSERT_EQ(d.submit(id), NextStep::kWriteToHostThenRespond);
  const auto* ctrl = reinterpret_cast<const proto::IdentifyController*>(d.buffer.data());
  EXPECT_EQ(ctrl->cntrltype, proto::kCntrltypeDiscovery);
  EXPECT_STREQ(ctrl->subnqn, proto::kDiscoveryNqn);

  id.cdw10 = proto::kCnsNamespace;
  d.submit(id);
  EXPECT_EQ(d.status(), generic_status(proto::kScInvalidOpcode)) << "nvmet: CNS other than 01h";
  d.submit(get_log_page(0x02, 512, 0));
  EXPECT_EQ(d.status(), generic_status(proto::kScInvalidOpcode)) << "nvmet: LID other than 70h";
  d.submit(get_log_page(proto::kLogDiscovery, 1024, 6));
  EXPECT_EQ(d.status(), generic_status(proto::kScInvalidField)) << "LPO not dword aligned";
  proto::Sqe queues = keyed(proto::kAdminSetFeatures, 0);
  queues.cdw10 = proto::kFeatureNumberOfQueues;
  d.submit(queues);
  EXPECT_EQ(d.status(), generic_status(proto::kScInvalidField)) << "no I/O queues on discovery";
  proto::Sqe kato = keyed(proto::kAdminSetFeatures, 0);
  kato.cdw10 = proto::kFeatureKeepAliveTimer;
  kato.cdw11 = 30000;
  d.submit(kato);
  EXPECT_EQ(d.status(), kStatusSuccess);
  d.submit(keyed(proto::kAdminKeepAlive, 0));
  EXPECT_EQ(d.status(), kStatusSuccess);
  d.submit(keyed(0x80, 0));  // Format NVM
  EXPECT_EQ(d.status(), generic_status(proto::kScInvalidOpcode));
}

// Discovery Log Page Change notices, as nvmet sends them: advertised in OAES, queued only for a
// discovery controller that enabled them (AEC bit 31), once until the host reads the log without
// Retain Asynchronous Event, delivered through a held AER or the next one.
TEST_F(PortTest, DiscoveryLogChangeNoticeReachesAControllerThatAskedForIt) {
  Queue& d = admin(proto::kDiscoveryNqn, kHost1);
  const uint32_t change = proto::aen_dw0(proto::kAenTypeNotice, proto::kAenInfoDiscoveryLogChange,
                                         proto::kLogDiscovery);
  EXPECT_EQ(change, 0x0070F002u);
  ControlLock lock(control_mutex());
  EXPECT_EQ(discovery_->post_event(change, proto::kAecDiscoveryLogChange), 0u) << "not enabled";

  proto::Sqe id = keyed(proto::kAdminIdentify, 4096);
  id.cdw10 = proto::kCnsController;
  ASSERT_EQ(d.submit(id), NextStep::kWriteToHostThenRespond);
  EXPECT_EQ(reinterpret_cast<const proto::IdentifyController*>(d.buffer.data())->oaes,
            proto::kAecDiscoveryLogChange);
  proto::Sqe aec = keyed(proto::kAdminSetFeatures, 0);
  aec.cdw10 = proto::kFeatureAsyncEventConfig;
  aec.cdw11 = proto::kAecDiscoveryLogChange;
  d.submit(aec);
  ASSERT_EQ(d.status(), kStatusSuccess);

  // A held AER completes with the notice.
  proto::Sqe aer_sqe = keyed(proto::kAdminAsyncEventRequest, 0);
  aer_sqe.cid = 0x51;
  Request aer;
  aer.sqe = &aer_sqe;
  aer.buffer = d.buffer;
  ASSERT_EQ(d.proc.begin(aer), NextStep::kHold);
  EXPECT_EQ(discovery_->post_event(change, proto::kAecDiscoveryLogChange), 1u);
  ASSERT_EQ(d.link.held_responses.size(), 1u);
  EXPECT_EQ(d.link.held_responses[0].dw0, change);
  EXPECT_EQ(d.link.held_responses[0].status, kStatusSuccess);
  EXPECT_EQ(d.link.held_responses[0].cid, 0x51);
  EXPECT_EQ(d.proc.aers_held(), 0u);

  // Masked until the log is read: not with RAE set, then without it.
  EXPECT_EQ(discovery_->post_event(change, proto::kAecDiscoveryLogChange), 0u);
  proto::Sqe retain = get_log_page(proto::kLogDiscovery, 1024, 0);
  retain.cdw10 |= 1u << 15;
  d.submit(retain);
  ASSERT_EQ(d.status(), kStatusSuccess);
  EXPECT_EQ(discovery_->post_event(change, proto::kAecDiscoveryLogChange), 0u);
  d.submit(get_log_page(proto::kLogDiscovery, 1024, 0));
  ASSERT_EQ(d.status(), kStatusSuccess);
  EXPECT_EQ(discovery_->post_event(change, proto::kAecDiscoveryLogChange), 1u);
  EXPECT_EQ(d.link.held_responses.size(), 1u) << "no AER held: it waits";

  // The next AER takes it at once.
  EXPECT_EQ(d.submit(aer_sqe), NextStep::kRespond);
  EXPECT_EQ(d.status(), kStatusSuccess);
  EXPECT_EQ(d.req.cqe.dw0, change);
  EXPECT_EQ(d.submit(aer_sqe), NextStep::kHold) << "nothing left";
}

TEST_F(PortTest, ConnectCanDisableSqFlowControl) {
  Queue& q = queue(0);
  proto::Sqe c = connect_sqe(0);
  reinterpret_cast<proto::ConnectCommand&>(c).cattr = proto::kCattrDisableSqFlowControl;
  q.submit(c, connect_data(0xFFFF, kNqnA, kHost1));
  ASSERT_EQ(q.status(), kStatusSuccess);
  EXPECT_EQ(q.req.cqe.sqhd, 0xFFFF) << "nvmet: SQHD FFFFh from the Connect response on";
  q.submit(property_set_cc());
  EXPECT_EQ(q.req.cqe.sqhd, 0xFFFF);
  Queue& other = admin(kNqnA, kHost1);
  EXPECT_EQ(other.req.cqe.sqhd, 2) << "flow control stays on for a queue that did not ask";
}

TEST_F(PortTest, IoQueueOnDiscoveryControllerIsRefusedOnQid) {
  admin(proto::kDiscoveryNqn, kHost1);
  Queue& q = queue(1);
  q.submit(connect_sqe(1), connect_data(1, proto::kDiscoveryNqn, kHost1));
  EXPECT_EQ(q.status(),
            make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  EXPECT_EQ(q.req.cqe.dw0, 42u) << "IPO: QID in the SQE";
}

}  // namespace
}  // namespace nvmf::target
