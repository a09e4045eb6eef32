// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of host/io_plan: MDTS splitting, in-capsule vs keyed choice, CQE status messages.
#include "host/io_plan.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/in_capsule.h"
#include "common/nvme_status.h"

namespace nvmf::host {
namespace {

uint8_t g_memory[1 << 22];  // addresses for segments; never touched

DataSegment seg(size_t offset, size_t length) {
  return DataSegment{g_memory + offset, length, 0x11, 0x22};
}

// In-capsule policy of a target advertising IOCCSZ `ioccsz`, SGLS bit 20 set, ICDOFF 0, on a
// device with `max_send_sge`.
HostInCapsulePolicy policy(uint32_t ioccsz, uint32_t max_send_sge = 32) {
  proto::IdentifyController id{};
  id.ioccsz = ioccsz;
  id.iorcsz = 1;
  id.sgls = proto::kSglsSupported | proto::kSglsKeyedDataBlock | proto::kSglsOffset;
  return host_in_capsule_policy(id, max_send_sge);
}

TransferLimits limits(uint64_t mdts_bytes_value, uint32_t lba, HostInCapsulePolicy icd = {}) {
  TransferLimits l;
  l.lba_size = lba;
  l.max_command_bytes = max_command_bytes(mdts_bytes_value, lba);
  l.in_capsule = std::move(icd);
  return l;
}

// All commands of a write; fails the test on a planning error.
std::vector<CommandPlan> plan_write(std::span<const DataSegment> segs, const TransferLimits& l) {
  std::vector<CommandPlan> out;
  EXPECT_TRUE(validate_transfer(segs, l).ok());
  TransferCursor c;
  while (c.done < total_bytes(segs)) {
    auto p = next_write_command(segs, c, l);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    if (!p.ok()) break;
    out.push_back(*p);
  }
  return out;
}

std::vector<uint32_t> read_chunks(size_t length, const TransferLimits& l) {
  std::vector<uint32_t> out;
  DataSegment s = seg(0, length);
  TransferCursor c;
  while (c.done < length) out.push_back(next_read_command(s, c, l).bytes);
  return out;
}

TEST(MaxCommandBytes, Limits) {
  EXPECT_EQ(max_command_bytes(128 * 1024, 512), 128u * 1024);
  // No MDTS: keyed SGL 24-bit length, rounded down to LBAs.
  EXPECT_EQ(max_command_bytes(0, 512), 0xFFFFFFu - 0xFFFFFFu % 512);
  // NLB 16 bits: 65536 blocks of 512 bytes = 32 MiB > keyed max, so keyed max wins.
  EXPECT_EQ(max_command_bytes(uint64_t{1} << 30, 512), 0xFFFFFFu - 0xFFFFFFu % 512);
  EXPECT_EQ(max_command_bytes(uint64_t{1} << 30, 4096), 0xFFF000u);
}

TEST(MdtsSplit, ChunksAroundTheBoundary) {
  auto l = limits(128 * 1024, 512);
  EXPECT_EQ(read_chunks(512, l), (std::vector<uint32_t>{512}));
  EXPECT_EQ(read_chunks(128 * 1024 - 512, l), (std::vector<uint32_t>{128 * 1024 - 512}));
  EXPECT_EQ(read_chunks(128 * 1024, l), (std::vector<uint32_t>{128 * 1024}));
  EXPECT_EQ(read_chunks(128 * 1024 + 512, l), (std::vector<uint32_t>{128 * 1024, 512}));
  EXPECT_EQ(read_chunks(3 * 128 * 1024, l),
            (std::vector<uint32_t>{128 * 1024, 128 * 1024, 128 * 1024}));
}

TEST(MdtsSplit, WriteCommandsAdvanceLbas) {
  auto l = limits(8192, 4096);
  DataSegment s = seg(0, 5 * 4096);
  auto plans = plan_write(std::span<const DataSegment>(&s, 1), l);
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].bytes, 8192u);
  EXPECT_EQ(plans[1].pieces[0].addr, reinterpret_cast<uint64_t>(g_memory) + 8192);
  EXPECT_EQ(plans[2].bytes, 4096u);
  for (const auto& p : plans) EXPECT_EQ(p.path, WritePath::kKeyed);
  EXPECT_EQ(plans[0].pieces[0].rkey, 0x22u);
}

TEST(WritePathChoice, SizesAroundInCapsuleLimit) {
  auto icd = policy(260);  // 260 * 16 - 64 = 4096 bytes
  ASSERT_TRUE(icd.enabled) << icd.why_off;
  ASSERT_EQ(icd.max_bytes, 4096u);
  auto l = limits(1 << 20, 512, icd);
  DataSegment at = seg(0, 4096), above = seg(0, 4096 + 512), below = seg(0, 4096 - 512);
  EXPECT_EQ(plan_write(std::span(&below, 1), l)[0].path, WritePath::kInCapsule);
  EXPECT_EQ(plan_write(std::span(&at, 1), l)[0].path, WritePath::kInCapsule);
  auto p = plan_write(std::span(&above, 1), l);
  ASSERT_EQ(p.size(), 1u);  // one keyed command, not split by the in-capsule size
  EXPECT_EQ(p[0].path, WritePath::kKeyed);
  EXPECT_EQ(p[0].bytes, 4096u + 512);
}

TEST(WritePathChoice, SegmentCounts) {
  auto l = limits(1 << 20, 512, policy(1028));  // 16 KiB
  std::vector<DataSegment> four = {seg(0, 512), seg(4096, 512), seg(8192, 512), seg(12288, 512)};
  auto p = plan_write(four, l);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].path, WritePath::kInCapsule);
  EXPECT_EQ(p[0].num_pieces, 4u);
  EXPECT_EQ(p[0].pieces[3].addr, reinterpret_cast<uint64_t>(g_memory) + 12288);
  EXPECT_EQ(p[0].pieces[3].lkey, 0x11u);
  std::vector<DataSegment> five = four;
  five.push_back(seg(16384, 512));
  // Five segments do not fit one capsule: the first goes keyed, the other four in-capsule.
  p = plan_write(five, l);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].path, WritePath::kKeyed);
  EXPECT_EQ(p[0].bytes, 512u);
  EXPECT_EQ(p[1].path, WritePath::kInCapsule);
  EXPECT_EQ(p[1].num_pieces, 4u);
}

TEST(WritePathChoice, DeviceSgesLimitSegments) {
  auto l = limits(1 << 20, 512, policy(1028, /*max_send_sge=*/3));  // 2 data SGEs
  std::vector<DataSegment> two = {seg(0, 512), seg(4096, 512)};
  std::vector<DataSegment> three = {seg(0, 512), seg(4096, 512), seg(8192, 512)};
  EXPECT_EQ(plan_write(two, l)[0].path, WritePath::kInCapsule);
  EXPECT_EQ(plan_write(three, l)[0].path, WritePath::kKeyed);
}

TEST(WritePathChoice, OffWhenTargetSaysSo) {
  auto icd = policy(4);  // IOCCSZ 4: no in-capsule bytes
  EXPECT_FALSE(icd.enabled);
  auto l = limits(1 << 20, 512, icd);
  DataSegment s = seg(0, 512);
  EXPECT_EQ(plan_write(std::span(&s, 1), l)[0].path, WritePath::kKeyed);
}

TEST(WritePathChoice, StraddlingLbaWithoutInCapsuleIsRefusedBeforeSending) {
  auto l = limits(1 << 20, 512);  // in-capsule off
  std::vector<DataSegment> segs = {seg(0, 700), seg(4096, 324)};
  ASSERT_TRUE(validate_transfer(segs, l).ok());
  TransferCursor c;
  auto p = next_write_command(segs, c, l);  // the whole LBA of segment 0 goes keyed
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->path, WritePath::kKeyed);
  EXPECT_EQ(p->bytes, 512u);
  p = next_write_command(segs, c, l);  // bytes 512..1023 straddle segments 0 and 1
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  Status whole = check_write_plan(segs, l);
  EXPECT_EQ(whole.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(whole.message().find("data segment 0 ends inside the LBA at byte 512"),
            std::string::npos)
      << whole.message();
  EXPECT_NE(whole.message().find("in-capsule data is off"), std::string::npos) << whole.message();
  // In-capsule, the same two segments form one command.
  auto l2 = limits(1 << 20, 512, policy(260));
  EXPECT_EQ(plan_write(segs, l2)[0].path, WritePath::kInCapsule);
  EXPECT_TRUE(check_write_plan(segs, l2).ok());
}

TEST(WritePathChoice, StraddlingLbasGoInCapsuleWhenTheWriteIsTooBig) {
  // 4 KiB in-capsule; 3 pieces of 5000, 3000 and 8384 bytes (16 KiB, too big for a capsule).
  auto l = limits(1 << 20, 512, policy(260));
  std::vector<DataSegment> segs = {seg(0, 5000), seg(65536, 3000), seg(131072, 8384)};
  auto p = plan_write(segs, l);
  // keyed 4608 (9 LBAs of piece 0) | in-capsule 4096 = 392 + 3000 + 704 | keyed 7680 of piece 2
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].path, WritePath::kKeyed);
  EXPECT_EQ(p[0].bytes, 4608u);
  EXPECT_EQ(p[1].path, WritePath::kInCapsule);
  EXPECT_EQ(p[1].bytes, 4096u);
  ASSERT_EQ(p[1].num_pieces, 3u);
  EXPECT_EQ(p[1].pieces[0].addr, reinterpret_cast<uint64_t>(g_memory) + 4608);
  EXPECT_EQ(p[1].pieces[0].length, 392u);
  EXPECT_EQ(p[1].pieces[1].length, 3000u);
  EXPECT_EQ(p[1].pieces[2].addr, reinterpret_cast<uint64_t>(g_memory) + 131072);
  EXPECT_EQ(p[1].pieces[2].length, 704u);
  EXPECT_EQ(p[2].path, WritePath::kKeyed);
  EXPECT_EQ(p[2].bytes, 7680u);
  EXPECT_EQ(p[2].pieces[0].addr, reinterpret_cast<uint64_t>(g_memory) + 131072 + 704);
  uint64_t sum = 0;
  for (const auto& c : p) sum += c.bytes;
  EXPECT_EQ(sum, 16384u);
}

TEST(WritePathChoice, StraddlingLbaOverTooManyPiecesIsRefused) {
  // One LBA spread over three pieces, but the device leaves only 2 data SGEs.
  auto l = limits(1 << 20, 512, policy(260, /*max_send_sge=*/3));
  std::vector<DataSegment> segs = {seg(0, 100), seg(4096, 100), seg(8192, 8504)};
  Status st = check_write_plan(segs, l);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("more than 2 in-capsule segments"), std::string::npos)
      << st.message();
}

TEST(ValidateTransfer, Errors) {
  auto l = limits(1 << 20, 512);
  DataSegment odd = seg(0, 1000), empty = seg(0, 0);
  EXPECT_EQ(validate_transfer(std::span(&odd, 1), l).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(validate_transfer(std::span(&odd, 1), l).message().find("multiple of the LBA size"),
            std::string::npos);
  EXPECT_EQ(validate_transfer(std::span(&empty, 1), l).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(validate_transfer({}, l).code(), StatusCode::kInvalidArgument);
  TransferLimits unset;
  unset.max_command_bytes = 0;
  DataSegment ok = seg(0, 512);
  EXPECT_EQ(validate_transfer(std::span(&ok, 1), unset).code(), StatusCode::kInternal);
}

TEST(CqeStatus, NamesTheStatus) {
  proto::Cqe cqe{};
  EXPECT_TRUE(cqe_status(cqe, "Read at LBA 123").ok());
  cqe.status = generic_status(proto::kScLbaOutOfRange, true);
  Status st = cqe_status(cqe, "Read at LBA 123");
  EXPECT_EQ(st.code(), StatusCode::kNvmeError);
  EXPECT_EQ(st.nvme_status(), cqe.status);
  EXPECT_EQ(st.message(), "Read at LBA 123: LBA Out of Range (SCT 0x0 SC 0x80, DNR)");
  cqe.status = generic_status(proto::kScLbaOutOfRange, true) | proto::kStatusPhase;
  EXPECT_FALSE(cqe_status(cqe, "x").ok());
}

TEST(ChooseWritePathTest, InCapsuleExactlyWhenThePolicyAcceptsBytesAndPieces) {
  const HostInCapsulePolicy on = policy(1028);  // 16384 bytes of in-capsule data
  ASSERT_EQ(on.max_bytes, 16384u);
  EXPECT_EQ(choose_write_path(on, 16384, 1), WritePath::kInCapsule);
  EXPECT_EQ(choose_write_path(on, 512, on.max_segments), WritePath::kInCapsule);
  EXPECT_EQ(choose_write_path(on, 16385, 1), WritePath::kKeyed);
  EXPECT_EQ(choose_write_path(on, 512, on.max_segments + 1), WritePath::kKeyed);
  EXPECT_EQ(choose_write_path(on, 0, 1), WritePath::kKeyed);
  EXPECT_EQ(choose_write_path(on, uint64_t{1} << 32, 1), WritePath::kKeyed);  // no wrap to 0
  EXPECT_EQ(choose_write_path(HostInCapsulePolicy{}, 512, 1), WritePath::kKeyed);
}

TEST(PlanOnePieceWriteTest, EncodesTheChosenSglAndReturnsThePiecesToPost) {
  const HostInCapsulePolicy on = policy(260);  // 4096 bytes
  const Piece piece{0x1000, 4096, 0x11, 0x22};
  CommandPlan in = plan_one_piece_write(on, piece);
  ASSERT_EQ(in.path, WritePath::kInCapsule);
  proto::Sqe sqe{};
  std::span<const Piece> posted = encode_data(sqe, in);
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(posted[0].addr, 0x1000u);
  EXPECT_EQ(posted[0].lkey, 0x11u);
  EXPECT_EQ(sqe.dptr.id, 0x01);  // Data Block, subtype Offset
  EXPECT_EQ(sqe.dptr.addr, 0u);
  EXPECT_EQ(sqe.dptr.unkeyed.length, 4096u);

  const Piece big{0x2000, 8192, 0x11, 0x22};
  CommandPlan keyed = plan_one_piece_write(on, big);
  ASSERT_EQ(keyed.path, WritePath::kKeyed);
  proto::Sqe k{};
  EXPECT_TRUE(encode_data(k, keyed).empty());
  EXPECT_EQ(k.dptr.id, 0x40);  // Keyed SGL Data Block
  EXPECT_EQ(k.dptr.addr, 0x2000u);
  EXPECT_EQ(k.dptr.keyed_length(), 8192u);
  EXPECT_EQ(uint32_t{k.dptr.keyed.key}, 0x22u);  // a copy: the field is unaligned
}

}  // namespace
}  // namespace nvmf::host
