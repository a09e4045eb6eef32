// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of host/commands: CM private data, Connect data and SQE bytes at spec offsets.
#include "host/commands.h"

#include <gtest/gtest.h>

#include <cstring>

#include "common/nvme_status.h"

namespace nvmf::host {
namespace {

template <typename T>
const uint8_t* raw(const T& v) {
  return reinterpret_cast<const uint8_t*>(&v);
}

uint16_t le16_at(const uint8_t* p, size_t off) {
  return static_cast<uint16_t>(p[off] | p[off + 1] << 8);
}
uint32_t le32_at(const uint8_t* p, size_t off) {
  uint32_t v;
  std::memcpy(&v, p + off, 4);
  return v;
}

TEST(CmPrivateData, AdminQueueIs32And31) {
  auto pd = cm_request_private_data(0, kAdminQueueSize);
  const uint8_t* b = raw(pd);
  ASSERT_EQ(sizeof(pd), 32u);
  EXPECT_EQ(le16_at(b, 0), 0);   // recfmt
  EXPECT_EQ(le16_at(b, 2), 0);   // qid
  EXPECT_EQ(le16_at(b, 4), 32);  // hrqsize
  EXPECT_EQ(le16_at(b, 6), 31);  // hsqsize, 0-based
  for (size_t i = 8; i < 32; ++i) EXPECT_EQ(b[i], 0) << i;
}

TEST(CmPrivateData, IoQueueUsesQueueSize) {
  auto pd = cm_request_private_data(3, 128);
  const uint8_t* b = raw(pd);
  EXPECT_EQ(le16_at(b, 2), 3);
  EXPECT_EQ(le16_at(b, 4), 128);
  EXPECT_EQ(le16_at(b, 6), 127);
}

TEST(CmReject, NamesTheStatus) {
  uint8_t data[4] = {0, 0, 4, 0};
  EXPECT_EQ(cm_reject_message(data, 4, 28), "CM reject: invalid HSQSIZE (4)");
  data[2] = 5;
  EXPECT_EQ(cm_reject_message(data, 4, 28), "CM reject: invalid HRQSIZE (5)");
  data[2] = 6;
  EXPECT_EQ(cm_reject_message(data, 56, 28), "CM reject: no resources (6)");  // padded REQ-like
  data[2] = 42;
  EXPECT_EQ(cm_reject_message(data, 4, 28), "CM reject: unknown status (42)");
}

TEST(CmReject, WithoutNvmeofDataNamesTheCmReason) {
  uint8_t data[2] = {0, 0};
  EXPECT_EQ(cm_reject_message(data, 2, 28), "CM reject: no NVMe-oF status (consumer reason 28)");
  EXPECT_EQ(cm_reject_message(nullptr, 0, 8), "CM reject: no NVMe-oF status (consumer reason 8)");
}

TEST(HostId, IsRandomVersion4Uuid) {
  HostId a = random_host_id(), b = random_host_id();
  EXPECT_NE(a, b);
  EXPECT_EQ(a[6] >> 4, 4);
  EXPECT_EQ(a[8] >> 6, 2);
  std::string s = uuid_string(a);
  ASSERT_EQ(s.size(), 36u);
  EXPECT_EQ(s[8], '-');
  EXPECT_EQ(s[14], '4');
  EXPECT_EQ(default_hostnqn(a), "nqn.2014-08.org.nvmexpress:uuid:" + s);
}

TEST(ConnectData, FieldsAtSpecOffsets) {
  HostId id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(i + 1);
  auto data = connect_data(id, 0xFFFF, "nqn.sub", "nqn.host");
  ASSERT_TRUE(data.ok()) << data.status().to_string();
  const uint8_t* b = raw(*data);
  ASSERT_EQ(sizeof(*data), 1024u);
  EXPECT_EQ(std::memcmp(b, id.data(), 16), 0);
  EXPECT_EQ(le16_at(b, 16), 0xFFFF);
  EXPECT_STREQ(reinterpret_cast<const char*>(b + 256), "nqn.sub");
  EXPECT_STREQ(reinterpret_cast<const char*>(b + 512), "nqn.host");
  for (size_t i = 768; i < 1024; ++i) EXPECT_EQ(b[i], 0) << i;
}

TEST(ConnectData, RejectsBadNqns) {
  HostId id{};
  EXPECT_EQ(connect_data(id, 1, "", "h").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(connect_data(id, 1, "s", "").status().code(), StatusCode::kInvalidArgument);
  std::string long_nqn(224, 'a');
  auto r = connect_data(id, 1, long_nqn, "h");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("223"), std::string::npos);
  EXPECT_TRUE(connect_data(id, 1, std::string(223, 'a'), "h").ok());
}

TEST(ConnectSqe, BytesAtSpecOffsets) {
  proto::Sqe sqe = connect_sqe(2, 128, 0);
  const uint8_t* b = raw(sqe);
  EXPECT_EQ(b[0], 0x7F);
  EXPECT_EQ(b[1], 0x40);           // PSDT 01b
  EXPECT_EQ(b[4], 0x01);           // FCTYPE Connect
  EXPECT_EQ(le16_at(b, 40), 0);    // recfmt
  EXPECT_EQ(le16_at(b, 42), 2);    // qid
  EXPECT_EQ(le16_at(b, 44), 127);  // sqsize 0-based
  EXPECT_EQ(le32_at(b, 48), 0u);   // kato
  proto::Sqe admin = connect_sqe(0, 32, 5000);
  EXPECT_EQ(le16_at(raw(admin), 44), 31);
  EXPECT_EQ(le32_at(raw(admin), 48), 5000u);
}

TEST(PropertySqe, SetCcAndGetCap) {
  proto::Sqe set = property_set_sqe(proto::kPropCc, kCcEnable);
  const uint8_t* b = raw(set);
  EXPECT_EQ(b[4], 0x00);  // FCTYPE Property Set
  EXPECT_EQ(b[40], 0);    // 4 bytes
  EXPECT_EQ(le32_at(b, 44), 0x14u);
  EXPECT_EQ(le32_at(b, 48), 0x00460001u);
  proto::Sqe get = property_get_sqe(proto::kPropCap, true);
  EXPECT_EQ(raw(get)[4], 0x04);
  EXPECT_EQ(raw(get)[40], 1);  // 8 bytes
  EXPECT_EQ(le32_at(raw(get), 44), 0u);
}

TEST(PropertyMath, CapTimeoutAndShutdown) {
  EXPECT_EQ(cap_timeout_ms(uint64_t{20} << 24), 10000u);
  EXPECT_EQ(cap_timeout_ms(0), 500u);
  EXPECT_EQ(cap_mpsmin_bytes(0), 4096u);
  EXPECT_EQ(cap_mpsmin_bytes(uint64_t{1} << 48), 8192u);
  EXPECT_EQ(cc_with_normal_shutdown(kCcEnable), 0x00464001u);
}

TEST(AdminSqe, IdentifyAndSetFeatures) {
  proto::Sqe id = identify_sqe(proto::kCnsNamespace, 7);
  EXPECT_EQ(id.opcode, 0x06);
  EXPECT_EQ(id.flags, 0x40);
  EXPECT_EQ(id.nsid, 7u);
  EXPECT_EQ(id.cdw10, 0u);
  proto::Sqe sf = set_num_queues_sqe(4);
  EXPECT_EQ(sf.opcode, 0x09);
  EXPECT_EQ(sf.cdw10, 0x07u);
  EXPECT_EQ(sf.cdw11, 0x00030003u);
  EXPECT_EQ(granted_num_queues(0x00010003), 2u);
  EXPECT_EQ(keep_alive_sqe().opcode, 0x18);
}

TEST(IoSqe, ReadWriteFlush) {
  proto::Sqe w = write_sqe(1, 0x123456789ull, 8);
  EXPECT_EQ(w.opcode, 0x01);
  EXPECT_EQ(w.cdw10, 0x23456789u);
  EXPECT_EQ(w.cdw11, 0x1u);
  EXPECT_EQ(w.cdw12, 7u);
  EXPECT_EQ(read_sqe(1, 0, 65536).cdw12, 0xFFFFu);
  EXPECT_EQ(read_sqe(1, 0, 1).opcode, 0x02);
  EXPECT_EQ(flush_sqe(1).opcode, 0x00);
  EXPECT_EQ(command_name(w, false), "Write");
  EXPECT_EQ(command_name(connect_sqe(0, 32, 0), true), "Connect");
  EXPECT_EQ(command_name(identify_sqe(1, 0), true), "Identify");
}

}  // namespace
}  // namespace nvmf::host
