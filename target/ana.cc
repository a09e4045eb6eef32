// SPDX-License-Identifier: BSD-3-Clause
#include "target/ana.h"

#include <cstring>
#include <string>

#include "common/nvme_status.h"
#include "target/subsystem.h"

namespace nvmf::target {
namespace {

bool refuses_io(AnaState s) { return ana_io_status(s) != kStatusSuccess; }

}  // namespace

std::optional<AnaState> parse_ana_state(std::string_view name) {
  std::string n(name);
  for (char& c : n) {
    if (c == '_') c = '-';
  }
  if (n == "optimized") return AnaState::kOptimized;
  if (n == "non-optimized") return AnaState::kNonOptimized;
  if (n == "inaccessible") return AnaState::kInaccessible;
  if (n == "persistent-loss") return AnaState::kPersistentLoss;
  if (n == "change") return AnaState::kChange;
  return std::nullopt;
}

std::string_view ana_state_name(AnaState state) {
  return proto::ana_state_name(static_cast<uint8_t>(state));
}

uint16_t ana_io_status(AnaState state) {
  switch (state) {
    case AnaState::kOptimized:
    case AnaState::kNonOptimized:
      return kStatusSuccess;
    case AnaState::kPersistentLoss:
      return make_status(proto::kSctPath, proto::kScAnaPersistentLoss);
    case AnaState::kChange:
      return make_status(proto::kSctPath, proto::kScAnaTransition);
    case AnaState::kInaccessible:
      break;
  }
  return make_status(proto::kSctPath, proto::kScAnaInaccessible);
}

AnaStates::AnaStates() {
  for (auto& s : state_) s.store(static_cast<uint8_t>(AnaState::kOptimized));
  for (auto& c : group_change_count_) c.store(0);
  for (auto& r : reported_) r.store(false);
  reported_[kDefaultAnaGroup].store(true);
}

AnaState AnaStates::state(uint32_t grpid) const {
  if (grpid == 0 || grpid > kMaxAnaGroups) return AnaState::kInaccessible;
  return static_cast<AnaState>(state_[grpid].load(std::memory_order_relaxed));
}

bool AnaStates::set(uint32_t grpid, AnaState state) {
  if (grpid == 0 || grpid > kMaxAnaGroups) return false;
  reported_[grpid].store(true, std::memory_order_relaxed);
  const AnaState old = this->state(grpid);
  if (old == state) return false;
  if (refuses_io(old) != refuses_io(state)) {
    if (refuses_io(state)) {
      restricted_.fetch_add(1, std::memory_order_relaxed);
    } else {
      restricted_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  // The state first: a host that reads the new change count finds the new state.
  state_[grpid].store(static_cast<uint8_t>(state), std::memory_order_release);
  const uint64_t count = change_count_.fetch_add(1, std::memory_order_acq_rel) + 1;
  group_change_count_[grpid].store(count, std::memory_order_relaxed);
  return true;
}

void AnaStates::assign(const AnaStates& other) {
  for (uint32_t g = 1; g <= kMaxAnaGroups; ++g) {
    if (other.reported(g)) (void)set(g, other.state(g));
  }
}

uint64_t AnaStates::group_change_count(uint32_t grpid) const {
  if (grpid == 0 || grpid > kMaxAnaGroups) return 0;
  return group_change_count_[grpid].load(std::memory_order_relaxed);
}

bool AnaStates::reported(uint32_t grpid) const {
  if (grpid == 0 || grpid > kMaxAnaGroups) return false;
  return reported_[grpid].load(std::memory_order_relaxed);
}

std::vector<uint8_t> build_ana_log(const AnaStates& states,
                                   std::span<const SubsystemNamespace> namespaces, bool rgo) {
  std::array<uint32_t, kMaxAnaGroups + 1> members{};
  for (const SubsystemNamespace& n : namespaces) {
    if (n.anagrpid >= 1 && n.anagrpid <= kMaxAnaGroups) ++members[n.anagrpid];
  }
  proto::AnaLogHeader header{};
  header.change_count = states.change_count();
  std::vector<uint8_t> out(sizeof(header));
  for (uint32_t g = 1; g <= kMaxAnaGroups; ++g) {
    if (members[g] == 0 && !states.reported(g)) continue;
    ++header.ngrps;
    proto::AnaGroupDescriptor d{};
    d.grpid = g;
    d.nnsids = rgo ? 0 : members[g];
    d.change_count = states.group_change_count(g);
    d.state = static_cast<uint8_t>(states.state(g));
    const size_t at = out.size();
    out.resize(at + sizeof(d) + size_t{d.nnsids} * 4);
    std::memcpy(out.data() + at, &d, sizeof(d));
    if (rgo) continue;
    size_t i = at + sizeof(d);
    for (const SubsystemNamespace& n : namespaces) {
      if (n.anagrpid != g) continue;
      std::memcpy(out.data() + i, &n.nsid, 4);
      i += 4;
    }
  }
  std::memcpy(out.data(), &header, sizeof(header));
  return out;
}

}  // namespace nvmf::target
