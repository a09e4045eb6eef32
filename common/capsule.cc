// Host command capsule building; see capsule.h.
#include "common/capsule.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/in_capsule.h"
#include "common/sgl.h"

namespace nvmf {
namespace {

void set_psdt_sgl(proto::Sqe& sqe) {
  sqe.flags = static_cast<uint8_t>((sqe.flags & ~proto::kFlagsPsdtMask) | proto::kFlagsPsdtSgl);
}

void set_sqe_sge(ibv_sge& sge, const proto::Sqe& sqe, uint32_t lkey) {
  sge.addr = reinterpret_cast<uintptr_t>(&sqe);
  sge.length = sizeof(proto::Sqe);
  sge.lkey = lkey;
}

Status too_few_sges(size_t have, size_t need) {
  return Status::invalid_argument("build capsule: " + std::to_string(have) + " output SGEs, need " +
                                  std::to_string(need));
}

}  // namespace

Result<uint32_t> build_capsule_keyed(proto::Sqe& sqe, uint32_t sqe_lkey, const KeyedBuffer& data,
                                     std::span<ibv_sge> sges) {
  if (sges.empty()) return too_few_sges(0, 1);
  if (!encode_keyed_sgl(sqe.dptr, data.addr, data.length, data.rkey, data.invalidate)) {
    return Status::invalid_argument("build capsule: keyed SGL length " +
                                    std::to_string(data.length) + " exceeds 0xFFFFFF");
  }
  set_psdt_sgl(sqe);
  set_sqe_sge(sges[0], sqe, sqe_lkey);
  return 1u;
}

Result<uint32_t> build_capsule_no_data(proto::Sqe& sqe, uint32_t sqe_lkey,
                                       std::span<ibv_sge> sges) {
  if (sges.empty()) return too_few_sges(0, 1);
  encode_null_sgl(sqe.dptr);
  set_psdt_sgl(sqe);
  set_sqe_sge(sges[0], sqe, sqe_lkey);
  return 1u;
}

Result<uint32_t> build_capsule_in_capsule(proto::Sqe& sqe, uint32_t sqe_lkey,
                                          std::span<const DataSegment> segments,
                                          uint32_t max_segments, std::span<ibv_sge> sges) {
  const size_t n = segments.size();
  if (n == 0) return Status::invalid_argument("build capsule: no in-capsule data segments");
  if (n > max_segments || n > kMaxInCapsuleSegments) {
    return Status::invalid_argument("build capsule: " + std::to_string(n) +
                                    " in-capsule segments, at most " +
                                    std::to_string(std::min(max_segments, kMaxInCapsuleSegments)));
  }
  if (sges.size() < 1 + n) return too_few_sges(sges.size(), 1 + n);
  uint64_t total = 0;
  for (const DataSegment& s : segments) total += s.length;
  if (total > UINT32_MAX) {
    return Status::invalid_argument("build capsule: in-capsule length " + std::to_string(total) +
                                    " exceeds 2^32 - 1");
  }
  encode_in_capsule_sgl(sqe.dptr, 0, static_cast<uint32_t>(total));
  set_psdt_sgl(sqe);
  set_sqe_sge(sges[0], sqe, sqe_lkey);
  for (size_t i = 0; i < n; ++i) {
    sges[1 + i] = ibv_sge{segments[i].addr, segments[i].length, segments[i].lkey};
  }
  return static_cast<uint32_t>(1 + n);
}

}  // namespace nvmf
