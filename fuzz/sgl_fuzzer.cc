// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes SGL decoding (common/sgl.h) with any SQE and receive: what decode_command_sgl accepts
// must lie inside the in-capsule area and the bytes received, copying it out must stay inside
// the receive's pages, and keyed SGLs the host encodes must decode to the same fields.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/nvme_status.h"
#include "common/sgl.h"
#include "fuzz/input.h"
#include "target/in_capsule_area.h"
#include "target/testing/fake_queue.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nvmf::target::testing::require;
  nvmf::fuzz::Input in(data, size);
  auto sqe = in.object<nvmf::proto::Sqe>();
  nvmf::SglDecodeContext ctx;
  uint8_t shape = in.u8();
  ctx.in_capsule_area_bytes = shape & 1 ? in.u32() : (in.u8() % 5) * 4096;
  ctx.in_capsule_received_bytes =
      shape & 2 ? in.u32()
                : static_cast<uint32_t>(in.u16() % (uint64_t{ctx.in_capsule_area_bytes} + 1));
  nvmf::SglDecodeResult d = nvmf::decode_command_sgl(sqe, ctx);
  (void)nvmf::check_psdt(sqe);
  (void)nvmf::data_direction(sqe);
  if (d.ok()) {
    uint16_t st = nvmf::check_data_length(d.sgl, in.u64());
    require(st == 0 || nvmf::status_dnr(st), "a length error without DNR");
    if (d.sgl.kind == nvmf::SglKind::kInCapsule) {
      require(d.sgl.addr <= ctx.in_capsule_area_bytes &&
                  d.sgl.length <= ctx.in_capsule_area_bytes - d.sgl.addr,
              "in-capsule SGL outside the area");
      require(d.sgl.addr + d.sgl.length <= ctx.in_capsule_received_bytes,
              "in-capsule SGL beyond the bytes received");
      // Copy it out of a receive of exactly that many pages, at most 64 KiB of area here.
      if (ctx.in_capsule_area_bytes <= 65536) {
        uint32_t pages = (ctx.in_capsule_area_bytes + 4095) / 4096;
        std::vector<std::vector<uint8_t>> bufs(pages, std::vector<uint8_t>(4096));
        std::vector<uint8_t*> ptrs;
        for (auto& b : bufs) ptrs.push_back(b.data());
        nvmf::target::InCapsuleArea area{ptrs, 4096, ctx.in_capsule_received_bytes};
        std::vector<uint8_t> out(d.sgl.length);
        if (d.sgl.addr + d.sgl.length <= area.size()) area.copy_out(d.sgl.addr, out);
      }
    } else {
      require(d.sgl.length <= nvmf::proto::kKeyedSglMaxLength, "keyed length above 24 bits");
    }
  } else {
    require(nvmf::status_dnr(d.status), "an SGL error without DNR");
  }
  // Host side: what encode_keyed_sgl writes decodes to the same address, length and key.
  uint64_t addr = in.u64();
  uint32_t length = in.u32(), rkey = in.u32();
  bool invalidate = in.u8() & 1;
  nvmf::proto::Sqe w{};
  w.opcode = nvmf::proto::kNvmRead;
  w.flags = nvmf::proto::kFlagsPsdtSgl;
  if (nvmf::encode_keyed_sgl(w.dptr, addr, length, rkey, invalidate)) {
    nvmf::SglDecodeResult r = nvmf::decode_command_sgl(w, ctx);
    require(r.ok() && r.sgl.kind == nvmf::SglKind::kKeyed && r.sgl.addr == addr &&
                r.sgl.length == length && r.sgl.rkey == rkey && r.sgl.invalidate == invalidate,
            "a keyed SGL does not survive encode and decode");
  } else {
    require(length > nvmf::proto::kKeyedSglMaxLength, "encode_keyed_sgl refused a 24-bit length");
  }
  return 0;
}
