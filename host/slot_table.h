// SPDX-License-Identifier: BSD-3-Clause
// SlotTable: the command-slot bookkeeping of a host queue (CID = slot index), without verbs.
#ifndef NVMF_HOST_SLOT_TABLE_H_
#define NVMF_HOST_SLOT_TABLE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "proto/nvme.h"

namespace nvmf::host {

// Tracks which slots are in flight and what arrived for them. A slot is reusable only after
// BOTH its response capsule (matched by CQE CID) and its send completion arrived: the target
// may answer before the HCA reports the SEND done, and the SQE buffer must not be rewritten
// until then. Storage is allocated in the constructor; the other calls allocate nothing.
class SlotTable {
 public:
  // `slots` slots (a queue's queue_size - 1), all free; CID i is slot i.
  explicit SlotTable(uint16_t slots);

  uint16_t size() const { return static_cast<uint16_t>(state_.size()); }  // slots in all
  uint16_t free_count() const { return static_cast<uint16_t>(free_count_); }

  // A free slot, now in flight; nullopt when all are busy. The lowest-numbered slots are
  // handed out first after construction.
  std::optional<uint16_t> acquire();
  // Gives back a slot whose send could not be posted (nothing can arrive for it). A slot not in
  // flight (or out of range) is left alone.
  void abandon(uint16_t slot);

  // The send completion of `slot`. False when the slot is not in flight or already sent.
  bool on_send_complete(uint16_t slot);
  // A response capsule: stored in the slot its CID names. False when the CID is out of range,
  // not in flight, or already answered (a protocol error the queue treats as fatal).
  bool on_response(const proto::Cqe& cqe);

  // True when `slot` is in flight and has both its response and its send completion (false
  // once released, or out of range).
  bool done(uint16_t slot) const;
  // Frees a done() slot and returns its CQE; any other slot: nothing changes, a zero CQE.
  proto::Cqe release(uint16_t slot);

 private:
  struct State {
    bool busy = false;
    bool sent = false;
    bool answered = false;
    proto::Cqe cqe{};
  };
  std::vector<State> state_;
  std::vector<uint16_t> free_list_;
  size_t free_count_ = 0;
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_SLOT_TABLE_H_
