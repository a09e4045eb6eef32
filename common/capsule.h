// Builds a host command capsule: sets the SQE's PSDT and SGL1 and fills the send SGE list.
//
// A capsule is the 64-byte SQE, optionally followed by in-capsule data (NVMe Base 2.0 Fabrics
// capsules; RDMA transport: one SEND per capsule). No allocation and no copy: the caller owns
// the registered SQE and data buffers and passes the output SGE array. The capsule is posted
// as one SEND whose sg_list is the returned SGEs (whether it is an inline send is decided
// separately, common/inline_send.h). All lengths are in bytes.
#ifndef NVMF_COMMON_CAPSULE_H_
#define NVMF_COMMON_CAPSULE_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <span>

#include "common/status.h"
#include "proto/nvme.h"

namespace nvmf {

// A host buffer the target reaches by RDMA READ/WRITE (registered with ibv_reg_mr).
struct KeyedBuffer {
  uint64_t addr = 0;
  uint32_t length = 0;  // at most 0xFFFFFF (Keyed SGL 24-bit length)
  uint32_t rkey = 0;
  bool invalidate = false;  // SGL id 0x4F; leave false for ibv_reg_mr MRs (see wire-facts.md)
};

// A piece of write data placed after the SQE in the same SEND (registered, lkey).
struct DataSegment {
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};

// Without in-capsule data, data in host memory: PSDT = SGL (FUSE bits kept), SGL1 = Keyed SGL
// Data Block (addr, length, rkey; id 0x40, or 0x4F when data.invalidate), and sges[0] = the
// 64-byte SQE at &sqe with `sqe_lkey`. Returns the SGE count (1).
// Errors (kInvalidArgument, nothing written): data.length > 0xFFFFFF; sges.size() < 1.
Result<uint32_t> build_capsule_keyed(proto::Sqe& sqe, uint32_t sqe_lkey, const KeyedBuffer& data,
                                     std::span<ibv_sge> sges);

// For a command that moves no data: as build_capsule_keyed with the null Keyed SGL (address 0,
// length 0, key 0, id 0x40), as the Linux host sends. Returns 1.
// Errors (kInvalidArgument, nothing written): sges.size() < 1.
Result<uint32_t> build_capsule_no_data(proto::Sqe& sqe, uint32_t sqe_lkey, std::span<ibv_sge> sges);

// With in-capsule data: PSDT = SGL, SGL1 = Data Block, subtype Offset (id 0x01), offset 0,
// length = sum of the segment lengths; sges[0] = the SQE, sges[1..n] = `segments` in order
// (not copied). Returns the SGE count (1 + n). Check fits_in_capsule() (common/in_capsule.h)
// first; this only enforces the hard limits.
// Errors (kInvalidArgument, nothing written): no segments; more than `max_segments` or more than
// kMaxInCapsuleSegments (4); total length above 2^32 - 1; sges.size() < 1 + n.
Result<uint32_t> build_capsule_in_capsule(proto::Sqe& sqe, uint32_t sqe_lkey,
                                          std::span<const DataSegment> segments,
                                          uint32_t max_segments, std::span<ibv_sge> sges);

}  // namespace nvmf

#endif  // NVMF_COMMON_CAPSULE_H_
