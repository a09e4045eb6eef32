// SPDX-License-Identifier: BSD-3-Clause
// Encodes the command SGL (SQE DPTR) for a host and decodes and checks it for a target.
//
// Units: every address, offset and length here is in bytes. Every status returned is a full
// 16-bit CQE status field (common/nvme_status.h), phase bit 0; 0 means "no error".
// Spec: NVMe Base 2.0 §4.3.2 "Scatter Gather List (SGL)" and §4.1 (PSDT). Where the spec leaves
// the choice of status to the controller, we follow Linux nvmet-rdma
// (drivers/nvme/target/rdma.c, nvmet_rdma_map_sgl*), except where docs/wire-facts.md records
// nvmet as wrong (in-capsule wrap-around and short capsules).
#ifndef NVMF_COMMON_SGL_H_
#define NVMF_COMMON_SGL_H_

#include <cstdint>

#include "proto/nvme.h"

namespace nvmf {

// ------------------------------------------------------------------------------ host: encode --

// Fills `out` with a Keyed SGL Data Block: id 0x40, or 0x4F when `invalidate` (asks the target
// to answer with SEND with Invalidate of `rkey`; only for MRs that can be invalidated remotely,
// never for plain ibv_reg_mr buffers). `length` is 24 bits: returns false and leaves `out`
// untouched when length > 0xFFFFFF (proto::kKeyedSglMaxLength). Base 2.0 §4.3.2 figure
// "Keyed SGL Data Block descriptor".
[[nodiscard]] bool encode_keyed_sgl(proto::SglDescriptor& out, uint64_t addr, uint32_t length,
                                    uint32_t rkey, bool invalidate = false);

// Fills `out` with the null Keyed SGL used by commands that move no data: address 0, length 0,
// key 0, id 0x40 (what the Linux host sends, nvme_rdma_set_sg_null()).
void encode_null_sgl(proto::SglDescriptor& out);

// Fills `out` with an SGL Data Block, subtype Offset (id 0x01): in-capsule data of `length`
// bytes starting `offset` bytes into the capsule's in-capsule data area (which starts at
// ICDOFF, 0 here, right after the SQE). Base 2.0 §4.3.2 "SGL Data Block descriptor" with
// SGLS bit 20.
void encode_in_capsule_sgl(proto::SglDescriptor& out, uint32_t offset, uint32_t length);

// ---------------------------------------------------------------------------- target: decode --

// Data transfer direction of a command: opcode bits 1:0 (Base 2.0 figure "Opcodes for Admin
// Commands": 00b none, 01b host to controller, 10b controller to host, 11b bidirectional). For
// a Fabrics command (opcode 7Fh) FCTYPE bits 1:0 are read instead (Base 2.0 §6).
enum class DataDirection : uint8_t {
  kNone = 0,
  kHostToController = 1,
  kControllerToHost = 2,
  kBidirectional = 3,
};
// The direction `sqe` declares (see above); pure, no allocation.
DataDirection data_direction(const proto::Sqe& sqe);

// PSDT check: a command on NVMe-oF must set PSDT = 01b (flags byte 0x40, SGL with a contiguous
// metadata buffer). Returns 0, or Invalid Field in Command (SCT 0 SC 02h) with DNR otherwise.
// Source: Base 2.0 §4.1 (PSDT "shall be 01b" for Fabrics); nvmet_req_init() answers the same.
uint16_t check_psdt(const proto::Sqe& sqe);

// What the target knows about the receive buffer the command arrived in.
struct SglDecodeContext {
  // Size of the in-capsule data area the target offers, in bytes: the target's effective
  // in-capsule data size (IOCCSZ * 16 - 64 on I/O queues; 0 when in-capsule data is off).
  uint32_t in_capsule_area_bytes = 0;
  // In-capsule bytes really received: the receive completion's byte_len minus 64 (the SQE),
  // 0 when byte_len <= 64.
  uint32_t in_capsule_received_bytes = 0;
};

// Where an SGL1 data buffer lives (decode_command_sgl).
enum class SglKind : uint8_t {
  kKeyed,      // remote host memory: RDMA READ/WRITE at (addr, rkey)
  kInCapsule,  // data already in the receive buffer at `addr` bytes into the in-capsule area
};

// SGL1 of a command after decode_command_sgl checked it. Base 2.0 §4.3.2; RDMA 1.0 §3.
struct DecodedSgl {
  SglKind kind = SglKind::kKeyed;
  uint64_t addr = 0;        // keyed: host virtual address; in-capsule: offset in the area (bytes)
  uint32_t length = 0;      // bytes; 0 = no data buffer (see decode_command_sgl)
  uint32_t rkey = 0;        // keyed only
  bool invalidate = false;  // keyed 0x4F: answer with SEND with Invalidate of rkey
};

// decode_command_sgl's answer: a status to complete the command with (non-zero: the SGL is
// refused and `sgl` is meaningless), else the decoded SGL.
struct SglDecodeResult {
  uint16_t status = 0;  // 0: `sgl` is valid; otherwise the status field to complete with
  DecodedSgl sgl;
  bool ok() const { return status == 0; }
};

// Decodes and checks SQE DPTR (SGL1). Cases, in the order they are checked (all DNR):
//  - Keyed Data Block (type 4), subtype 0h or Fh: ok, kind kKeyed, invalidate for Fh. A keyed
//    length of 0 means "no data buffer" (what a host sends for a command that moves no data,
//    e.g. Keep Alive or Set Features Number of Queues); that is not an error here.
//    Keyed with another subtype: Invalid Field in Command (02h) (nvmet_rdma_map_sgl).
//  - Data Block (type 0), subtype Offset (1h): in-capsule data, checked as:
//    1. the command does not transfer data to the controller (direction bit 0 clear, nvmet's
//       nvme_is_write()): Invalid Field in Command (02h) (nvmet_rdma_map_sgl_inline);
//    2. the area size is 0, or offset > area size, or length > area size - offset (checked in
//       this order so nothing can overflow, like SPDK; wraps past 2^64 included): SGL Offset
//       Invalid (16h) (nvmet; wire-facts: the 6.1 nvmet crashed on a wrapping offset);
//    3. offset + length > bytes really received: Data SGL Length Invalid (0Fh) (wire-facts:
//       nvmet accepts this and writes stale buffer bytes; SPDK uses 0Fh for length errors).
//    Data Block with another subtype (e.g. 0h, a host address the target cannot reach):
//    Invalid Field in Command (02h) (nvmet).
//  - Any other type (Bit Bucket, Segment, Last Segment 0x31, Transport, Vendor, reserved): SGL
//    Descriptor Type Invalid (11h) (nvmet; we, like Linux, advertise MSDBD 1 and no SGL lists).
// Whether the length matches what the command moves is a separate check: check_data_length().
SglDecodeResult decode_command_sgl(const proto::Sqe& sqe, const SglDecodeContext& ctx);

// Compares the decoded SGL length with the bytes the command will transfer (`expected_bytes`,
// computed by the command handler: NLB x LBA size for Read/Write, 4096 for Identify, 1024 for
// Connect, 0 for Keep Alive, ...). Returns 0 when equal, else Data SGL Length Invalid (0Fh)
// with DNR. This covers a zero-length SGL on a command that needs data and a non-zero one on a
// command that moves none. Source: Base 2.0 §4.3.2 (a longer SGL is only allowed with SGLS
// bit 18, which we do not set); nvmet_check_transfer_len() answers the same.
uint16_t check_data_length(const DecodedSgl& sgl, uint64_t expected_bytes);

}  // namespace nvmf

#endif  // NVMF_COMMON_SGL_H_
