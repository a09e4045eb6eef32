// SPDX-License-Identifier: BSD-3-Clause
// Asymmetric Namespace Access (Base 2.0 §8.1 "Asymmetric Namespace Access Reporting"): the
// state of each ANA group as one port presents one subsystem, the I/O status each state gives,
// and the ANA log page (Log Identifier 0Ch, Base 2.0 §5.16.1.13).
#ifndef NVMF_TARGET_ANA_H_
#define NVMF_TARGET_ANA_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "proto/nvme.h"

namespace nvmf::target {

struct SubsystemNamespace;

// ANA group identifiers run 1..kMaxAnaGroups: Identify Controller ANAGRPMAX and NANAGRPID
// (nvmet's NVMET_MAX_ANAGRPS). Every namespace is in group 1 unless configured otherwise.
inline constexpr uint32_t kMaxAnaGroups = 128;
inline constexpr uint32_t kDefaultAnaGroup = 1;
// ANATT, seconds: the longest a group stays in the change state (nvmet reports 10).
inline constexpr uint8_t kAnaTransitionTimeSeconds = 10;

// ANA states (proto::kAna*).
enum class AnaState : uint8_t {
  kOptimized = proto::kAnaOptimized,
  kNonOptimized = proto::kAnaNonOptimized,
  kInaccessible = proto::kAnaInaccessible,
  kPersistentLoss = proto::kAnaPersistentLoss,
  kChange = proto::kAnaChange,
};

// nvmetcli's ana_state names ("optimized", "non-optimized", "inaccessible", "persistent-loss",
// "change") and SPDK's, which spell them with an underscore ("non_optimized"); nullopt for any
// other.
std::optional<AnaState> parse_ana_state(std::string_view name);
// nvmetcli's name of `state`.
std::string_view ana_state_name(AnaState state);

// The status of an I/O command to a namespace whose group is in `state` on the command's port:
// success (0) for optimized and non-optimized; otherwise Path Related Status (SCT 3h)
// Asymmetric Access Persistent Loss (01h), Inaccessible (02h) or Transition (03h, the change
// state), without DNR: another path may serve the command (nvmet_check_ana_state).
uint16_t ana_io_status(AnaState state);

// The state of every ANA group as one port presents one subsystem (nvmet keeps it per port,
// SPDK per listener of a subsystem). The I/O path reads it from any poll group without a lock;
// set() runs under the control lock.
class AnaStates {
 public:
  // Every group optimized, change count 0.
  AnaStates();
  AnaStates(const AnaStates&) = delete;
  AnaStates& operator=(const AnaStates&) = delete;

  // The state of group `grpid` (1..kMaxAnaGroups; any other reads as inaccessible).
  AnaState state(uint32_t grpid) const;
  // Sets group `grpid`'s state and marks the group reported; returns true when the state
  // changed, and the change count moved on. `grpid` must be 1..kMaxAnaGroups.
  bool set(uint32_t grpid, AnaState state);
  // The log's content changed without a state change (a namespace joined or left a group):
  // the change count moves on.
  void touch() { change_count_.fetch_add(1, std::memory_order_acq_rel); }
  // Sets each group `other` reports to its state there (a newly linked subsystem takes its
  // port's defaults).
  void assign(const AnaStates& other);
  // ANA log page Change Count: moves on with every state change.
  uint64_t change_count() const { return change_count_.load(std::memory_order_relaxed); }
  // The change count at the group's last state change (its descriptor's Change Count).
  uint64_t group_change_count(uint32_t grpid) const;
  // True when some group's state refuses I/O: only then does the I/O path look up its
  // namespace's group (one relaxed load per command otherwise).
  bool any_restricted() const { return restricted_.load(std::memory_order_relaxed) != 0; }
  // Group 1, and each group whose state was set: reported in the ANA log even without a
  // namespace.
  bool reported(uint32_t grpid) const;

 private:
  std::array<std::atomic<uint8_t>, kMaxAnaGroups + 1> state_;
  std::array<std::atomic<uint64_t>, kMaxAnaGroups + 1> group_change_count_;
  std::array<std::atomic<bool>, kMaxAnaGroups + 1> reported_;
  std::atomic<uint64_t> change_count_{0};
  std::atomic<uint32_t> restricted_{0};  // groups whose state refuses I/O
};

// The whole ANA log page for `states` and the subsystem's `namespaces` (ascending NSID): the
// header (Change Count, Number of ANA Group Descriptors), then one 32-byte descriptor per
// reported group in ascending ANA group ID — group 1, every group set on `states`, every group
// a namespace is in — each followed by the NSIDs of its namespaces, ascending, unless `rgo`
// (Return Groups Only, LSP bit 0: no NSIDs, NNSIDS 0). Little endian, as the wire carries it.
std::vector<uint8_t> build_ana_log(const AnaStates& states,
                                   std::span<const SubsystemNamespace> namespaces, bool rgo);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_ANA_H_
