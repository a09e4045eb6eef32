// SPDX-License-Identifier: BSD-3-Clause
// SGL encode (host) and decode with bounds checks (target); see sgl.h for the rules.
#include "common/sgl.h"

#include "common/nvme_status.h"

namespace nvmf {
namespace {

using proto::SglDescriptor;

constexpr uint16_t kInvalidFieldDnr = generic_status(proto::kScInvalidField);
constexpr uint16_t kSglTypeInvalidDnr = generic_status(proto::kScSglDescriptorTypeInvalid);
constexpr uint16_t kSglOffsetInvalidDnr = generic_status(proto::kScSglOffsetInvalid);
constexpr uint16_t kDataSglLengthInvalidDnr = generic_status(proto::kScDataSglLengthInvalid);

SglDecodeResult fail(uint16_t status) { return SglDecodeResult{status, DecodedSgl{}}; }

SglDecodeResult decode_keyed(const SglDescriptor& d) {
  uint8_t subtype = proto::sgl_subtype(d.id);
  if (subtype != proto::kSglSubtypeAddress && subtype != proto::kSglSubtypeInvalidateKey) {
    return fail(kInvalidFieldDnr);
  }
  DecodedSgl s;
  s.kind = SglKind::kKeyed;
  s.addr = d.addr;
  s.length = d.keyed_length();
  s.rkey = d.keyed.key;
  s.invalidate = subtype == proto::kSglSubtypeInvalidateKey;
  return SglDecodeResult{0, s};
}

SglDecodeResult decode_in_capsule(const proto::Sqe& sqe, const SglDecodeContext& ctx) {
  if ((static_cast<uint8_t>(data_direction(sqe)) & 1u) == 0) return fail(kInvalidFieldDnr);
  const uint64_t area = ctx.in_capsule_area_bytes;
  const uint64_t offset = sqe.dptr.addr;
  const uint64_t length = sqe.dptr.unkeyed.length;
  if (area == 0 || offset > area || length > area - offset) return fail(kSglOffsetInvalidDnr);
  // Both are now <= area <= 2^32 - 1, so the sum cannot overflow 64 bits.
  if (offset + length > ctx.in_capsule_received_bytes) return fail(kDataSglLengthInvalidDnr);
  DecodedSgl s;
  s.kind = SglKind::kInCapsule;
  s.addr = offset;
  s.length = static_cast<uint32_t>(length);
  return SglDecodeResult{0, s};
}

}  // namespace

bool encode_keyed_sgl(SglDescriptor& out, uint64_t addr, uint32_t length, uint32_t rkey,
                      bool invalidate) {
  if (length > proto::kKeyedSglMaxLength) return false;
  out.addr = addr;
  out.set_keyed_length(length);
  out.keyed.key = rkey;
  out.id = invalidate ? proto::kSglIdKeyedInvalidate : proto::kSglIdKeyed;
  return true;
}

void encode_null_sgl(SglDescriptor& out) {
  out.addr = 0;
  out.set_keyed_length(0);
  out.keyed.key = 0;
  out.id = proto::kSglIdKeyed;
}

void encode_in_capsule_sgl(SglDescriptor& out, uint32_t offset, uint32_t length) {
  out.addr = offset;
  out.unkeyed.length = length;
  out.unkeyed.rsvd[0] = out.unkeyed.rsvd[1] = out.unkeyed.rsvd[2] = 0;
  out.id = proto::kSglIdDataBlockOffset;
}

DataDirection data_direction(const proto::Sqe& sqe) {
  // Fabrics: FCTYPE is SQE byte 4, the low byte of the NSID field (little-endian).
  uint8_t code = sqe.opcode == proto::kOpcodeFabrics ? static_cast<uint8_t>(sqe.nsid) : sqe.opcode;
  return static_cast<DataDirection>(code & 0x3u);
}

uint16_t check_psdt(const proto::Sqe& sqe) {
  return (sqe.flags & proto::kFlagsPsdtMask) == proto::kFlagsPsdtSgl ? 0 : kInvalidFieldDnr;
}

SglDecodeResult decode_command_sgl(const proto::Sqe& sqe, const SglDecodeContext& ctx) {
  const uint8_t type = proto::sgl_type(sqe.dptr.id);
  if (type == proto::kSglTypeKeyedDataBlock) return decode_keyed(sqe.dptr);
  if (type != proto::kSglTypeDataBlock) return fail(kSglTypeInvalidDnr);
  if (proto::sgl_subtype(sqe.dptr.id) != proto::kSglSubtypeOffset) return fail(kInvalidFieldDnr);
  return decode_in_capsule(sqe, ctx);
}

uint16_t check_data_length(const DecodedSgl& sgl, uint64_t expected_bytes) {
  return sgl.length == expected_bytes ? 0 : kDataSglLengthInvalidDnr;
}

}  // namespace nvmf
