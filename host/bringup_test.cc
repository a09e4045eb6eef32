// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of host/bringup over a scripted CommandChannel (no verbs).
#include "host/bringup.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "common/nvme_status.h"

namespace nvmf::host {
namespace {

// Records every command and answers with a scripted function.
class FakeChannel : public CommandChannel {
 public:
  struct Sent {
    proto::Sqe sqe;
    std::vector<uint8_t> data_out;
    bool allow_in_capsule;
  };
  using Answer = std::function<Result<proto::Cqe>(const proto::Sqe&, std::span<uint8_t> in)>;

  Result<proto::Cqe> run(const proto::Sqe& sqe, std::span<const uint8_t> out, std::span<uint8_t> in,
                         bool allow_in_capsule) override {
    sent.push_back({sqe, std::vector<uint8_t>(out.begin(), out.end()), allow_in_capsule});
    return answer(sqe, in);
  }

  std::vector<Sent> sent;
  Answer answer = [](const proto::Sqe&, std::span<uint8_t>) { return proto::Cqe{}; };
};

const auto kNoSleep = [](std::chrono::milliseconds) {};

proto::Cqe cqe_with(uint32_t dw0, uint16_t status = 0) {
  proto::Cqe c{};
  c.dw0 = dw0;
  c.status = status;
  return c;
}

TEST(FabricsConnect, ReturnsCntlidAndSendsData) {
  FakeChannel ch;
  ch.answer = [](const proto::Sqe&, std::span<uint8_t>) { return cqe_with(0x0007); };
  HostId id{};
  auto data = connect_data(id, proto::kAdminQueueCntlid, "nqn.s", "nqn.h");
  ASSERT_TRUE(data.ok());
  auto cntlid = fabrics_connect(ch, 0, 32, 0, *data, false);
  ASSERT_TRUE(cntlid.ok()) << cntlid.status().to_string();
  EXPECT_EQ(*cntlid, 7);
  ASSERT_EQ(ch.sent.size(), 1u);
  EXPECT_EQ(ch.sent[0].data_out.size(), 1024u);
  EXPECT_FALSE(ch.sent[0].allow_in_capsule);
  EXPECT_EQ(ch.sent[0].sqe.opcode, 0x7F);
}

TEST(FabricsConnect, InvalidParametersNamesTheField) {
  FakeChannel ch;
  ch.answer = [](const proto::Sqe&, std::span<uint8_t>) {
    return cqe_with(
        proto::connect_invalid_param_in_data(256),
        make_status(proto::kSctCommandSpecific, proto::kScConnectInvalidParameters, true));
  };
  proto::ConnectData data{};
  auto r = fabrics_connect(ch, 1, 128, 0, data, true);
  EXPECT_EQ(r.status().code(), StatusCode::kNvmeError);
  EXPECT_NE(r.status().message().find("Connect (qid 1)"), std::string::npos);
  EXPECT_NE(r.status().message().find("Connect data byte 256 (SUBNQN"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(ch.sent[0].allow_in_capsule);
}

// A controller whose CSTS reads `csts_sequence` in turn (the last value repeats).
void script_properties(FakeChannel& ch, std::vector<uint32_t> csts_sequence, uint32_t* cc) {
  auto index = std::make_shared<size_t>(0);
  ch.answer = [csts_sequence, index, cc](const proto::Sqe& sqe, std::span<uint8_t>) {
    auto cmd = std::bit_cast<proto::PropertySetCommand>(sqe);
    if (cmd.fctype == proto::kFctypePropertySet) {
      *cc = static_cast<uint32_t>(cmd.value);
      return Result<proto::Cqe>(cqe_with(0));
    }
    size_t i = std::min(*index, csts_sequence.size() - 1);
    ++*index;
    return Result<proto::Cqe>(cqe_with(csts_sequence[i]));
  };
}

TEST(EnableController, WritesCcAndWaitsForReady) {
  FakeChannel ch;
  uint32_t cc = 0;
  script_properties(ch, {0, 0, proto::kCstsRdy}, &cc);
  EXPECT_TRUE(enable_controller(ch, uint64_t{1} << 24, kNoSleep).ok());
  EXPECT_EQ(cc, 0x00460001u);
  EXPECT_EQ(ch.sent.size(), 4u);  // set CC, 3 x get CSTS
}

TEST(EnableController, FatalStatusIsAnError) {
  FakeChannel ch;
  uint32_t cc = 0;
  script_properties(ch, {proto::kCstsCfs}, &cc);
  Status st = enable_controller(ch, uint64_t{1} << 24, kNoSleep);
  EXPECT_EQ(st.code(), StatusCode::kIo);
  EXPECT_NE(st.message().find("fatal"), std::string::npos);
}

TEST(EnableController, TimesOutAfterCapTo) {
  FakeChannel ch;
  uint32_t cc = 0;
  script_properties(ch, {0}, &cc);
  int slept_ms = 0;
  Status st = enable_controller(ch, uint64_t{2} << 24,  // CAP.TO 2 = 1000 ms
                                [&](std::chrono::milliseconds ms) { slept_ms += ms.count(); });
  EXPECT_EQ(st.code(), StatusCode::kTimeout);
  EXPECT_NE(st.message().find("1000 ms"), std::string::npos) << st.message();
  EXPECT_EQ(slept_ms, 1000);
}

TEST(DisableController, ClearsEnAndWaitsForNotReady) {
  FakeChannel ch;
  uint32_t cc = 0;
  script_properties(ch, {proto::kCstsRdy, proto::kCstsRdy, 0}, &cc);
  EXPECT_TRUE(disable_controller(ch, kCcEnable, uint64_t{1} << 24, kNoSleep).ok());
  EXPECT_EQ(cc, 0x00460000u);     // IOSQES/IOCQES kept, EN 0
  EXPECT_EQ(ch.sent.size(), 4u);  // set CC, 3 x get CSTS
}

TEST(DisableController, TimesOutAfterCapToWhileReady) {
  FakeChannel ch;
  uint32_t cc = 0;
  script_properties(ch, {proto::kCstsRdy}, &cc);
  int slept_ms = 0;
  Status st = disable_controller(ch, kCcEnable, uint64_t{2} << 24,  // CAP.TO 2 = 1000 ms
                                 [&](std::chrono::milliseconds ms) { slept_ms += ms.count(); });
  EXPECT_EQ(st.code(), StatusCode::kTimeout);
  EXPECT_NE(st.message().find("RDY still 1 after CAP.TO = 1000 ms"), std::string::npos)
      << st.message();
  EXPECT_EQ(slept_ms, 1000);
}

TEST(ShutdownController, SetsShnAndWaitsForShst) {
  FakeChannel ch;
  uint32_t cc = 0;
  script_properties(ch, {proto::kCstsRdy, proto::kCstsRdy | (2u << 2)}, &cc);
  EXPECT_TRUE(shutdown_controller(ch, kCcEnable, 1000, kNoSleep).ok());
  EXPECT_EQ(cc, 0x00464001u);
  FakeChannel stuck;
  script_properties(stuck, {proto::kCstsRdy | (1u << 2)}, &cc);
  EXPECT_EQ(shutdown_controller(stuck, kCcEnable, 50, kNoSleep).code(), StatusCode::kTimeout);
}

TEST(PropertyGet, EightBytesFromDw0Dw1) {
  FakeChannel ch;
  ch.answer = [](const proto::Sqe&, std::span<uint8_t>) {
    proto::Cqe c = cqe_with(0x11223344);
    c.dw1 = 0x55667788;
    return Result<proto::Cqe>(c);
  };
  EXPECT_EQ(*property_get(ch, proto::kPropCap, true), 0x5566778811223344ull);
  EXPECT_EQ(*property_get(ch, proto::kPropVs, false), 0x11223344ull);
}

TEST(PropertyGet, NvmeErrorNamesTheProperty) {
  FakeChannel ch;
  ch.answer = [](const proto::Sqe&, std::span<uint8_t>) {
    return Result<proto::Cqe>(cqe_with(0, generic_status(proto::kScInvalidField)));
  };
  auto r = property_get(ch, proto::kPropCsts, false);
  EXPECT_EQ(r.status().code(), StatusCode::kNvmeError);
  EXPECT_NE(r.status().message().find("Property Get 0x1c: Invalid Field"), std::string::npos)
      << r.status().message();
}

// Answers Identify Controller / Active NS list / Identify Namespace.
void script_identify(FakeChannel& ch, proto::IdentifyController ctrl) {
  ch.answer = [ctrl](const proto::Sqe& sqe, std::span<uint8_t> in) {
    if (sqe.cdw10 == proto::kCnsController) {
      std::memcpy(in.data(), &ctrl, sizeof(ctrl));
    } else if (sqe.cdw10 == proto::kCnsActiveNamespaceList) {
      uint32_t nsid = 3;
      std::memcpy(in.data(), &nsid, 4);
    } else {
      proto::IdentifyNamespace ns{};
      ns.nsze = 2048;
      ns.lbaf[0].lbads = 12;
      std::memcpy(in.data(), &ns, sizeof(ns));
    }
    return Result<proto::Cqe>(cqe_with(0));
  };
}

TEST(IdentifyAll, ControllerAndFirstNamespace) {
  FakeChannel ch;
  proto::IdentifyController ctrl{};
  ctrl.ioccsz = 4;
  ctrl.iorcsz = 1;
  ctrl.kas = 1;
  script_identify(ch, ctrl);
  auto r = identify_all(ch);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->ns.nsid, 3u);
  EXPECT_EQ(r->ns.lba_size, 4096u);
  ASSERT_EQ(ch.sent.size(), 3u);
  EXPECT_EQ(ch.sent[2].sqe.nsid, 3u);
}

TEST(IdentifyAll, RefusesKasZero) {
  FakeChannel ch;
  proto::IdentifyController ctrl{};
  ctrl.ioccsz = 4;
  ctrl.iorcsz = 1;
  script_identify(ch, ctrl);
  auto r = identify_all(ch);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("KAS"), std::string::npos);
  EXPECT_EQ(ch.sent.size(), 1u);
}

TEST(NumberOfQueues, GrantedIsCapped) {
  FakeChannel ch;
  ch.answer = [](const proto::Sqe&, std::span<uint8_t>) {
    return Result<proto::Cqe>(cqe_with(0x00010001));  // 2 SQs, 2 CQs
  };
  EXPECT_EQ(*set_number_of_queues(ch, 4), 2);
  EXPECT_EQ(*set_number_of_queues(ch, 1), 1);
  EXPECT_EQ(ch.sent[0].sqe.cdw11, 0x00030003u);
}

TEST(Transport, ErrorsAreAnnotatedWithTheCommand) {
  FakeChannel ch;
  ch.answer = [](const proto::Sqe&, std::span<uint8_t>) {
    return Result<proto::Cqe>(Status::timeout("queue 0: no completion within 5000 ms"));
  };
  Status st = keep_alive(ch);
  EXPECT_EQ(st.code(), StatusCode::kTimeout);
  EXPECT_EQ(st.message(), "Keep Alive: queue 0: no completion within 5000 ms");
}

// Set Features Asynchronous Event Configuration: FID 0Bh, the notice bits in CDW11, an SGL
// command as every Fabrics command (nvmet answers Invalid Field to PSDT 0).
TEST(AsyncEventConfig, SetFeaturesCarriesTheNoticeBits) {
  FakeChannel ch;
  ASSERT_TRUE(
      set_async_event_config(ch, proto::kAecNamespaceAttribute | proto::kAecAnaChange).ok());
  ASSERT_EQ(ch.sent.size(), 1u);
  const proto::Sqe& sqe = ch.sent[0].sqe;
  EXPECT_EQ(sqe.opcode, proto::kAdminSetFeatures);
  EXPECT_EQ(sqe.cdw10, 0x0Bu);
  EXPECT_EQ(sqe.cdw11, (1u << 8) | (1u << 11));
  EXPECT_EQ(sqe.flags & 0xC0, proto::kFlagsPsdtSgl);
  ch.answer = [](const proto::Sqe&, std::span<uint8_t>) {
    return cqe_with(0, generic_status(proto::kScInvalidField));
  };
  Status st = set_async_event_config(ch, proto::kAecAnaChange);
  EXPECT_NE(st.to_string().find("Set Features Asynchronous Event Configuration: Invalid Field"),
            std::string::npos)
      << st.to_string();
}

// A namespace table as Identify serves it: CNS 02h lists the NSIDs, CNS 00h gives each NSZE
// (512-byte LBAs; zero data for an inactive NSID, as nvmet answers).
FakeChannel::Answer namespace_table(const std::map<uint32_t, uint64_t>* table) {
  return [table](const proto::Sqe& sqe, std::span<uint8_t> in) {
    std::fill(in.begin(), in.end(), 0);
    const uint8_t cns = sqe.cdw10 & 0xFF;
    if (cns == proto::kCnsActiveNamespaceList) {
      size_t at = 0;
      for (const auto& [nsid, nsze] : *table) {
        std::memcpy(in.data() + at, &nsid, 4);
        at += 4;
      }
    } else if (auto it = table->find(sqe.nsid); it != table->end()) {
      proto::IdentifyNamespace ns{};
      ns.nsze = ns.ncap = it->second;
      ns.lbaf[0].lbads = 9;
      std::memcpy(in.data(), &ns, sizeof(ns));
    }
    return cqe_with(0);
  };
}

TEST(NamespaceRescan, AddedRemovedResizedAndTheOverflowedList) {
  std::map<uint32_t, uint64_t> table = {{1, 100}, {2, 200}, {3, 300}};
  FakeChannel ch;
  ch.answer = namespace_table(&table);
  auto known = scan_namespaces(ch, 2);
  ASSERT_TRUE(known.ok()) << known.status().to_string();
  EXPECT_EQ(*known, (NamespaceSizes{{1, 100}, {2, 200}, {3, kSizeUnknown}}));

  table.erase(2);
  table[1] = 150;
  table[7] = 700;
  const std::vector<uint32_t> changed = {1, 2, 3, 7, 9};
  auto found = rescan_namespaces(ch, *known, changed);
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  ASSERT_EQ(found->size(), 4u) << "NSID 9 was never there: nothing to report";
  EXPECT_EQ((*found)[0].kind, NamespaceChange::Kind::kResized);
  EXPECT_EQ((*found)[0].nsze, 150u);
  EXPECT_EQ((*found)[0].lba_size, 512u);
  EXPECT_EQ((*found)[1].kind, NamespaceChange::Kind::kRemoved);
  EXPECT_EQ((*found)[2].kind, NamespaceChange::Kind::kChanged) << "size was not known";
  EXPECT_EQ((*found)[3].kind, NamespaceChange::Kind::kAdded);
  EXPECT_EQ(namespace_change_name((*found)[3].kind), std::string("added"));
  EXPECT_EQ(*known, (NamespaceSizes{{1, 150}, {3, 300}, {7, 700}}));

  // More than 1023 changed (the list's overflow): every active and known NSID is looked at.
  table.erase(3);
  table[8] = 800;
  const std::vector<uint32_t> overflow = {0xFFFFFFFF};
  found = rescan_namespaces(ch, *known, overflow);
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  std::vector<std::pair<uint32_t, NamespaceChange::Kind>> got;
  for (const NamespaceChange& c : *found) got.emplace_back(c.nsid, c.kind);
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, NamespaceChange::Kind>>{
                     {1, NamespaceChange::Kind::kChanged},
                     {3, NamespaceChange::Kind::kRemoved},
                     {7, NamespaceChange::Kind::kChanged},
                     {8, NamespaceChange::Kind::kAdded}}));
}

}  // namespace
}  // namespace nvmf::host
