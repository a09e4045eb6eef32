// SPDX-License-Identifier: BSD-3-Clause
// ChunkList: the free list and the waiters' FIFOs.
#include "target/chunk_list.h"

namespace nvmf::target {

ChunkList::ChunkList(uint8_t* base, uint32_t count, uint32_t chunk_bytes)
    : base_(base), count_(count), chunk_bytes_(chunk_bytes), is_free_(count, true) {
  free_.reserve(count);
  for (uint32_t i = count; i > 0; --i) free_.push_back(i - 1);  // chunk 0 on top
}

uint8_t* ChunkList::get() {
  if (free_.empty()) return nullptr;
  uint32_t index = free_.back();
  free_.pop_back();
  is_free_[index] = false;
  if (in_use() > high_water_) high_water_ = in_use();
  if (gauges_ != nullptr) {
    gauges_->in_use.add();
    if (gauges_->in_use.get() > gauges_->in_use_peak.get()) {
      gauges_->in_use_peak.set(gauges_->in_use.get());
    }
  }
  return base_ + static_cast<size_t>(index) * chunk_bytes_;
}

bool ChunkList::put(uint8_t* chunk) {
  if (chunk < base_ || chunk_bytes_ == 0) return false;
  size_t offset = static_cast<size_t>(chunk - base_);
  if (offset % chunk_bytes_ != 0 || offset / chunk_bytes_ >= count_) return false;
  auto index = static_cast<uint32_t>(offset / chunk_bytes_);
  if (is_free_[index]) return false;
  is_free_[index] = true;
  free_.push_back(index);
  if (gauges_ != nullptr) gauges_->in_use.sub();
  return true;
}

namespace {
// Owner load (chunks held plus waiters) going from 0 to 1 or back: the number of active owners.
void load_changed(uint32_t before, uint32_t after, uint32_t& active) {
  if (before == 0 && after > 0) ++active;
  if (before > 0 && after == 0) --active;
}
}  // namespace

uint8_t* ChunkList::take(ChunkWaiterOwner& owner) {
  uint8_t* chunk = get();
  if (chunk == nullptr) return nullptr;
  const uint32_t before = owner.pool_held_ + owner.pool_waiting_;
  ++owner.pool_held_;
  load_changed(before, before + 1, active_);
  return chunk;
}

bool ChunkList::give(uint8_t* chunk, ChunkWaiterOwner& owner) {
  if (!put(chunk)) return false;
  if (owner.pool_held_ == 0) return true;  // never so (a transport bug): the chunk is back anyway
  const uint32_t before = owner.pool_held_ + owner.pool_waiting_;
  --owner.pool_held_;
  load_changed(before, before - 1, active_);
  return true;
}

bool ChunkList::wait(ChunkWaiter& w) {
  if (w.linked || w.owner == nullptr) return false;
  ChunkWaiterOwner& o = *w.owner;
  w.linked = true;
  w.ticket = next_ticket_++;
  w.next = nullptr;
  w.prev = o.tail_;
  if (o.tail_ != nullptr) {
    o.tail_->next = &w;
  } else {  // its first waiter: the owner joins the list
    o.head_ = &w;
    o.prev_ = nullptr;
    o.next_ = owners_;
    if (owners_ != nullptr) owners_->prev_ = &o;
    owners_ = &o;
  }
  o.tail_ = &w;
  ++waiting_;
  const uint32_t before = o.pool_held_ + o.pool_waiting_;
  ++o.pool_waiting_;
  load_changed(before, before + 1, active_);
  return true;
}

void ChunkList::withdraw(ChunkWaiter& w) {
  if (!w.linked) return;
  ChunkWaiterOwner& o = *w.owner;
  if (w.prev != nullptr) {
    w.prev->next = w.next;
  } else {
    o.head_ = w.next;
  }
  if (w.next != nullptr) {
    w.next->prev = w.prev;
  } else {
    o.tail_ = w.prev;
  }
  w.prev = w.next = nullptr;
  w.linked = false;
  if (o.head_ == nullptr) {  // its last waiter: the owner leaves the list
    if (o.prev_ != nullptr) {
      o.prev_->next_ = o.next_;
    } else {
      owners_ = o.next_;
    }
    if (o.next_ != nullptr) o.next_->prev_ = o.prev_;
    o.prev_ = o.next_ = nullptr;
  }
  --waiting_;
  const uint32_t before = o.pool_held_ + o.pool_waiting_;
  --o.pool_waiting_;
  load_changed(before, before - 1, active_);
}

uint32_t ChunkList::serve() {
  uint32_t started = 0;
  while (owners_ != nullptr && !free_.empty()) {
    // Each waiting owner's oldest waiter: the oldest of those under their share, else the
    // oldest of all.
    const uint32_t fair = share();
    ChunkWaiter* oldest = nullptr;
    ChunkWaiter* oldest_under = nullptr;
    for (ChunkWaiterOwner* o = owners_; o != nullptr; o = o->next_) {
      ChunkWaiter* h = o->head_;
      if (oldest == nullptr || h->ticket < oldest->ticket) oldest = h;
      if (o->pool_held_ < fair && (oldest_under == nullptr || h->ticket < oldest_under->ticket)) {
        oldest_under = h;
      }
    }
    ChunkWaiter& w = oldest_under != nullptr ? *oldest_under : *oldest;
    withdraw(w);
    ++started;
    uint8_t* chunk = take(*w.owner);
    w.owner->chunk_ready(w.slot, chunk);
  }
  return started;
}

void ChunkList::set_gauges(SharedBufferGauges* gauges) {
  gauges_ = gauges;
  if (gauges_ != nullptr) gauges_->chunks.add(count_);
}

}  // namespace nvmf::target
