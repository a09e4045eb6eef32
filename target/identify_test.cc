// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for the Identify builders: the fields that steer hosts.
#include "target/identify.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "proto/nvme.h"

namespace nvmf::target {
namespace {

proto::IdentifyController controller_with(uint32_t in_capsule) {
  IdentifyControllerParams p;
  p.cntlid = 7;
  p.version = proto::make_version(1, 3);
  p.mdts = 5;
  p.in_capsule_data_size = in_capsule;
  p.maxcmd = 128;
  p.subnqn = "nqn.2024-01.io.nvmf-rdma:target";
  p.serial = "0123456789abcdef";
  p.model = "nvmf-rdma target";
  p.firmware = "0.1";
  proto::IdentifyController id;
  build_identify_controller(p, &id);
  return id;
}

TEST(IdentifyController, InCapsuleOff) {
  auto id = controller_with(0);
  EXPECT_EQ(id.sgls, 0x5u);
  EXPECT_EQ(id.ioccsz, 4u);
}

TEST(IdentifyController, InCapsule4096) {
  auto id = controller_with(4096);
  EXPECT_EQ(id.sgls, 0x100005u);
  EXPECT_EQ(id.ioccsz, 260u);
}

TEST(IdentifyController, InCapsule16384) {
  auto id = controller_with(16384);
  EXPECT_EQ(id.sgls, 0x100005u);
  EXPECT_EQ(id.ioccsz, 1028u);
}

TEST(IdentifyController, FixedFields) {
  auto id = controller_with(4096);
  EXPECT_EQ(id.iorcsz, 1u);
  EXPECT_EQ(id.icdoff, 0);
  EXPECT_EQ(id.msdbd, 1);
  EXPECT_EQ(id.fcatt, 0);
  EXPECT_EQ(id.cntlid, 7);
  EXPECT_EQ(id.mdts, 5);
  EXPECT_EQ(id.ver, 0x00010300u);
  EXPECT_EQ(id.sqes, 0x66);
  EXPECT_EQ(id.cqes, 0x44);
  EXPECT_EQ(id.nn, 1u);
  EXPECT_EQ(id.maxcmd, 128);
  EXPECT_NE(id.kas, 0);
  EXPECT_EQ(id.cntrltype, proto::kCntrltypeIo);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(&id)[76], 0x03);  // CMIC is byte 76
  EXPECT_STREQ(id.subnqn, "nqn.2024-01.io.nvmf-rdma:target");
  EXPECT_EQ(std::string(id.sn, 20), "0123456789abcdef    ");
  EXPECT_EQ(std::string(id.mn, 40), std::string("nvmf-rdma target") + std::string(24, ' '));
  EXPECT_EQ(std::string(id.fr, 8), "0.1     ");
}

// Linux native multipath needs both: a second controller to the subsystem is refused with CMIC
// bit 1 clear, and namespaces of two controllers merge only with NMIC bit 0 set.
TEST(IdentifyController, MultiControllerMultiPortNoAna) {
  auto id = controller_with(4096);
  EXPECT_EQ(id.cmic, 0x03);  // bit 0 multi-port, bit 1 multi-controller, bit 3 (ANA) clear
}

TEST(IdentifyNamespace, SharedNamespace) {
  proto::IdentifyNamespace ns;
  build_identify_namespace(2048, 9, stable_id_from("x"), &ns);
  EXPECT_EQ(ns.nmic, 0x01);
  const auto* raw = reinterpret_cast<const uint8_t*>(&ns);
  EXPECT_EQ(raw[30], 0x01);  // NMIC is byte 30
}

TEST(IdentifyNamespace, SizesAndFormat) {
  proto::IdentifyNamespace ns;
  build_identify_namespace(131072, 9, stable_id_from("x"), &ns);
  EXPECT_EQ(ns.nsze, 131072u);
  EXPECT_EQ(ns.ncap, 131072u);
  EXPECT_EQ(ns.nuse, 131072u);
  EXPECT_EQ(ns.flbas, 0);
  EXPECT_EQ(ns.nlbaf, 0);
  EXPECT_EQ(ns.lbaf[0].lbads, 9);
  build_identify_namespace(16384, 12, stable_id_from("x"), &ns);
  EXPECT_EQ(ns.lbaf[0].lbads, 12);
}

TEST(IdentifyLists, ActiveNamespaces) {
  std::vector<uint8_t> buf(4096, 0xFF);
  std::span<uint8_t, 4096> out(buf.data(), 4096);
  auto entry = [&](size_t i) {
    uint32_t v;
    std::memcpy(&v, buf.data() + 4 * i, 4);
    return v;
  };
  const uint32_t one[] = {1};
  build_active_ns_list(0, one, out);
  EXPECT_EQ(entry(0), 1u);
  EXPECT_EQ(entry(1), 0u);
  build_active_ns_list(1, one, out);
  EXPECT_EQ(entry(0), 0u);
  // Several, from CDW1 NSID on: only the greater ones, ascending, zero-terminated.
  const uint32_t three[] = {1, 2, 7};
  build_active_ns_list(0, three, out);
  EXPECT_EQ(entry(0), 1u);
  EXPECT_EQ(entry(1), 2u);
  EXPECT_EQ(entry(2), 7u);
  EXPECT_EQ(entry(3), 0u);
  build_active_ns_list(2, three, out);
  EXPECT_EQ(entry(0), 7u);
  EXPECT_EQ(entry(1), 0u);
  build_active_ns_list(7, three, out);
  EXPECT_EQ(entry(0), 0u);
}

TEST(IdentifyLists, NamespaceIdDescriptors) {
  std::vector<uint8_t> buf(4096, 0xFF);
  auto nguid = stable_id_from("nqn.test");
  build_ns_id_descriptors(nguid, std::span<uint8_t, 4096>(buf.data(), 4096));
  EXPECT_EQ(buf[0], 2);   // NIDT NGUID
  EXPECT_EQ(buf[1], 16);  // NIDL
  EXPECT_EQ(std::memcmp(buf.data() + 4, nguid.data(), 16), 0);
  EXPECT_EQ(buf[20], 0);  // list terminator
  EXPECT_NE(stable_id_from("a"), stable_id_from("b"));
  EXPECT_EQ(stable_id_from("a"), stable_id_from("a"));
}

}  // namespace
}  // namespace nvmf::target
