// SPDX-License-Identifier: BSD-3-Clause
// Identify data builders.
#include "target/identify.h"

#include <algorithm>
#include <cstring>

#include "common/in_capsule.h"
#include "target/ana.h"

namespace nvmf::target {
namespace {

// Copies `text` into a fixed ASCII field, space padded, no terminator (Base 2.0 §1.5 "ASCII").
template <size_t N>
void set_ascii(char (&field)[N], std::string_view text) {
  std::memset(field, ' ', N);
  std::memcpy(field, text.data(), std::min(N, text.size()));
}

constexpr uint8_t kNidtNguid = 2;  // Base 2.0 figure "Namespace Identifier Type Values"
constexpr uint8_t kNidtUuid = 3;

}  // namespace

void build_identify_controller(const IdentifyControllerParams& p, proto::IdentifyController* out) {
  std::memset(out, 0, sizeof(*out));
  set_ascii(out->sn, p.serial);
  set_ascii(out->mn, p.model);
  set_ascii(out->fr, p.firmware);
  out->rab = 6;
  // Every subsystem serves several controllers at once (a CNTLID each, one per association) on
  // every port it is linked to, like nvmet.
  out->cmic = proto::kCmicMultiPort | proto::kCmicMultiCtrl;
  if (p.ana) {
    out->cmic |= proto::kCmicAna;
    out->anatt = kAnaTransitionTimeSeconds;
    out->anacap = proto::kAnacapAllStates;
    out->anagrpmax = kMaxAnaGroups;
    out->nanagrpid = kMaxAnaGroups;
  }
  out->mdts = p.mdts;
  out->cntlid = p.cntlid;
  out->ver = p.version;
  out->cntrltype = proto::kCntrltypeIo;
  out->acl = 3;
  out->aerl = p.aerl;
  out->kas = p.kas;
  out->ctratt = proto::kCtrattTbkas;  // nvmet: any command restarts the keep-alive timer
  out->sqes = (proto::kSqesLog2 << 4) | proto::kSqesLog2;
  out->cqes = (proto::kCqesLog2 << 4) | proto::kCqesLog2;
  out->maxcmd = p.maxcmd;
  out->nn = p.nn;
  out->mnan = p.nn;
  out->oaes = p.oaes;
  out->vwc = p.volatile_write_cache ? 1 : 0;
  out->oncs = p.oncs;
  out->sgls = proto::kSglsSupported | proto::kSglsKeyedDataBlock;
  if (p.in_capsule_data_size > 0) out->sgls |= proto::kSglsOffset;
  std::memcpy(out->subnqn, p.subnqn.data(), std::min(p.subnqn.size(), sizeof(out->subnqn) - 1));
  out->ioccsz = ioccsz_for_in_capsule_size(p.in_capsule_data_size);
  out->iorcsz = sizeof(proto::Cqe) / 16;
  out->icdoff = 0;
  out->fcatt = 0;
  out->msdbd = 1;
}

void build_identify_namespace(uint64_t num_lbas, uint8_t lba_shift,
                              const std::array<uint8_t, 16>& nguid, proto::IdentifyNamespace* out,
                              uint8_t dlfeat, uint32_t anagrpid) {
  std::memset(out, 0, sizeof(*out));
  out->nsze = num_lbas;
  out->ncap = num_lbas;
  out->nuse = num_lbas;
  out->nlbaf = 0;
  out->flbas = 0;
  out->lbaf[0].lbads = lba_shift;
  out->nmic = proto::kNmicShared;  // every controller of the subsystem reaches the namespace
  out->dlfeat = dlfeat;
  out->anagrpid = anagrpid;
  std::memcpy(out->nguid, nguid.data(), nguid.size());
}

void build_active_ns_list(uint32_t nsid, std::span<const uint32_t> active,
                          std::span<uint8_t, proto::kIdentifyDataSize> out) {
  std::fill(out.begin(), out.end(), 0);
  size_t n = 0;
  for (uint32_t id : active) {
    if (id <= nsid) continue;
    if (n == out.size() / sizeof(uint32_t)) break;
    std::memcpy(out.data() + n * sizeof(uint32_t), &id, sizeof(id));
    ++n;
  }
}

void build_ns_id_descriptors(const std::array<uint8_t, 16>& nguid,
                             std::span<uint8_t, proto::kIdentifyDataSize> out,
                             const std::array<uint8_t, 16>* uuid) {
  std::fill(out.begin(), out.end(), 0);
  out[0] = kNidtNguid;
  out[1] = static_cast<uint8_t>(nguid.size());
  std::memcpy(out.data() + 4, nguid.data(), nguid.size());
  if (uuid != nullptr) {  // next descriptor: 4-byte header + 16 bytes later
    out[20] = kNidtUuid;
    out[21] = static_cast<uint8_t>(uuid->size());
    std::memcpy(out.data() + 24, uuid->data(), uuid->size());
  }
}

std::array<uint8_t, 16> stable_id_from(std::string_view text) {
  std::array<uint8_t, 16> id{};
  uint64_t h1 = 0xcbf29ce484222325ull;
  uint64_t h2 = 0x84222325cbf29ce4ull;
  for (unsigned char c : text) {
    h1 = (h1 ^ c) * 0x100000001b3ull;
    h2 = (h2 ^ c) * 0x100000001b3ull;
    h2 ^= h2 >> 29;
  }
  std::memcpy(id.data(), &h1, 8);
  std::memcpy(id.data() + 8, &h2, 8);
  return id;
}

}  // namespace nvmf::target
