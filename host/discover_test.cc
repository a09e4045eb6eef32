// SPDX-License-Identifier: BSD-3-Clause
// Host discovery: decoding the Discovery Log Page, the Get Log Page SQE, and the read sequence
// over a scripted CommandChannel serving a log built by the target's builder layout.
#include "host/discover.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "common/nvme_status.h"
#include "host/log_reads.h"
#include "host/queue.h"

namespace nvmf::host {
namespace {

std::vector<uint8_t> sample_log(uint64_t genctr, int entries) {
  std::vector<uint8_t> log(1024 + 1024 * entries);
  proto::DiscoveryLogHeader h{};
  h.genctr = genctr;
  h.numrec = static_cast<uint64_t>(entries);
  std::memcpy(log.data(), &h, sizeof(h));
  for (int i = 0; i < entries; ++i) {
    proto::DiscoveryLogEntry e{};
    e.trtype = 1;
    e.adrfam = 1;
    e.subtype = 2;
    e.treq = 0;
    e.portid = 1;
    e.cntlid = 0xFFFF;
    e.asqsz = 32;
    std::strcpy(e.trsvcid, "4420");
    std::snprintf(e.subnqn, sizeof(e.subnqn), "nqn.2024-01.io.nvmf-rdma:s%d", i);
    std::strcpy(e.traddr, "10.99.0.1");
    e.tsas.qptype = 1;
    e.tsas.prtype = 1;
    e.tsas.cms = 1;
    std::memcpy(log.data() + 1024 * (i + 1), &e, sizeof(e));
  }
  return log;
}

TEST(DiscoverTest, ParsesEntries) {
  auto log = parse_discovery_log(sample_log(9, 2));
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  EXPECT_EQ(log->genctr, 9u);
  EXPECT_EQ(log->numrec, 2u);
  ASSERT_EQ(log->entries.size(), 2u);
  const DiscoveryEntry& e = log->entries[1];
  EXPECT_EQ(e.subnqn, "nqn.2024-01.io.nvmf-rdma:s1");
  EXPECT_EQ(e.traddr, "10.99.0.1");
  EXPECT_EQ(e.trsvcid, "4420");
  EXPECT_EQ(e.cntlid, 0xFFFF);
  EXPECT_EQ(e.asqsz, 32);
  EXPECT_EQ(trtype_name(e.trtype), "rdma");
  EXPECT_EQ(adrfam_name(e.adrfam), "ipv4");
  EXPECT_EQ(subtype_name(e.subtype), "nvme subsystem");
  EXPECT_EQ(treq_name(e.treq), "not specified");
  EXPECT_EQ(rdma_qptype_name(e.rdma_qptype), "connected");
  EXPECT_EQ(rdma_prtype_name(e.rdma_prtype), "not specified");
  EXPECT_EQ(rdma_cms_name(e.rdma_cms), "rdma-cm");
  EXPECT_EQ(trtype_name(77), "unrecognized (77)");
}

TEST(DiscoverTest, ShortLogIsAnError) {
  auto bytes = sample_log(1, 2);
  bytes.resize(2048);
  auto log = parse_discovery_log(bytes);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("hold 1 of NUMREC 2"), std::string::npos)
      << log.status().message();
}

TEST(DiscoverTest, GetLogPageSqe) {
  proto::Sqe s = get_log_page_sqe(0x70, 4096, 1024);
  EXPECT_EQ(s.opcode, proto::kAdminGetLogPage);
  EXPECT_EQ(s.cdw10, 0x70u | (1023u << 16));
  EXPECT_EQ(s.cdw11, 0u);
  EXPECT_EQ(s.cdw12, 1024u);
  EXPECT_EQ(s.cdw13, 0u);
  proto::Sqe big = get_log_page_sqe(0x70, 1u << 20, 1ull << 32);
  EXPECT_EQ(big.cdw10 >> 16, 0xFFFFu);
  EXPECT_EQ(big.cdw11, 3u);
  EXPECT_EQ(big.cdw13, 1u);
}

// Serves Identify and windows of `log`.
class LogChannel : public CommandChannel {
 public:
  Result<proto::Cqe> run(const proto::Sqe& sqe, std::span<const uint8_t>, std::span<uint8_t> in,
                         bool) override {
    if (sqe.opcode == proto::kAdminIdentify) {
      std::fill(in.begin(), in.end(), 0);
      in[111] = proto::kCntrltypeDiscovery;
      return proto::Cqe{};
    }
    uint64_t offset = (uint64_t{sqe.cdw13} << 32) | sqe.cdw12;
    offsets.push_back(offset);
    std::fill(in.begin(), in.end(), 0);
    for (size_t i = 0; i < in.size() && offset + i < log.size(); ++i) in[i] = log[offset + i];
    if (on_read) on_read();
    return proto::Cqe{};
  }
  std::vector<uint8_t> log;
  std::vector<uint64_t> offsets;
  std::function<void()> on_read;
};

TEST(DiscoverTest, ReadsHeaderThenEntriesInChunks) {
  LogChannel ch;
  ch.log = sample_log(3, 5);  // 6 KiB: header + 5 entries
  auto log = read_discovery_log(ch);
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  EXPECT_EQ(log->entries.size(), 5u);
  EXPECT_EQ(log->identify.cntrltype, proto::kCntrltypeDiscovery);
  EXPECT_EQ(ch.offsets, (std::vector<uint64_t>{0, 1024, 5120, 0}));
}

TEST(DiscoverTest, GenctrChangeRereads) {
  LogChannel ch;
  ch.log = sample_log(3, 1);
  int reads = 0;
  ch.on_read = [&] {
    if (++reads == 2) ch.log = sample_log(4, 2);  // changes after the entries were read
  };
  auto log = read_discovery_log(ch);
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  EXPECT_EQ(log->genctr, 4u);
  EXPECT_EQ(log->entries.size(), 2u);
}

TEST(DiscoverTest, ErrorNamesTheCommand) {
  struct Failing : CommandChannel {
    Result<proto::Cqe> run(const proto::Sqe& sqe, std::span<const uint8_t>, std::span<uint8_t>,
                           bool) override {
      proto::Cqe c{};
      if (sqe.opcode == proto::kAdminGetLogPage) c.status = generic_status(proto::kScInvalidField);
      return c;
    }
  } ch;
  auto log = read_discovery_log(ch);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("Get Log Page 70h at offset 0"), std::string::npos)
      << log.status().message();
}

// discover() and Controller build their queues from HostOptions through one mapping.
TEST(QueueParamsTest, CarriesEveryConnectionOptionOfTheHost) {
  HostOptions o;
  o.traddr = "192.0.2.7";
  o.trsvcid = "4421";
  o.host_traddr = "192.0.2.1";
  o.requested_max_inline_data = 0;
  o.poll_mode = PollMode::kBusy;
  o.timeout_ms = 1234;
  o.ack_timeout = 16;
  QueueParams p = queue_params(o, 3, 128);
  EXPECT_EQ(p.qid, 3);
  EXPECT_EQ(p.queue_size, 128);
  EXPECT_EQ(p.traddr, "192.0.2.7");
  EXPECT_EQ(p.trsvcid, "4421");
  EXPECT_EQ(p.host_traddr, "192.0.2.1");
  EXPECT_EQ(p.requested_max_inline_data, 0u);
  EXPECT_EQ(p.poll_mode, PollMode::kBusy);
  EXPECT_EQ(p.timeout_ms, 1234);
  EXPECT_EQ(p.ack_timeout, 16);
}

}  // namespace
}  // namespace nvmf::host
