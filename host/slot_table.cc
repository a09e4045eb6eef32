// SPDX-License-Identifier: BSD-3-Clause
// Command-slot bookkeeping; see slot_table.h.
#include "host/slot_table.h"

namespace nvmf::host {

SlotTable::SlotTable(uint16_t slots) : state_(slots), free_list_(slots), free_count_(slots) {
  for (uint16_t i = 0; i < slots; ++i) free_list_[i] = static_cast<uint16_t>(slots - 1 - i);
}

std::optional<uint16_t> SlotTable::acquire() {
  if (free_count_ == 0) return std::nullopt;
  uint16_t slot = free_list_[--free_count_];
  state_[slot] = State{};
  state_[slot].busy = true;
  return slot;
}

void SlotTable::abandon(uint16_t slot) {
  // A slot not in flight is already on the free list: pushing it again would hand it out twice
  // (and write past the list).
  if (slot >= state_.size() || !state_[slot].busy) return;
  state_[slot] = State{};
  free_list_[free_count_++] = slot;
}

bool SlotTable::on_send_complete(uint16_t slot) {
  if (slot >= state_.size() || !state_[slot].busy || state_[slot].sent) return false;
  state_[slot].sent = true;
  return true;
}

bool SlotTable::on_response(const proto::Cqe& cqe) {
  if (cqe.cid >= state_.size()) return false;
  State& s = state_[cqe.cid];
  if (!s.busy || s.answered) return false;
  s.answered = true;
  s.cqe = cqe;
  return true;
}

bool SlotTable::done(uint16_t slot) const {
  return slot < state_.size() && state_[slot].busy && state_[slot].sent && state_[slot].answered;
}

proto::Cqe SlotTable::release(uint16_t slot) {
  if (!done(slot)) return proto::Cqe{};
  proto::Cqe cqe = state_[slot].cqe;
  abandon(slot);
  return cqe;
}

}  // namespace nvmf::host
