// Poll-group placement: which poll group (target/event_loop.h) a new queue goes to.
#ifndef NVMF_TARGET_POLL_GROUP_H_
#define NVMF_TARGET_POLL_GROUP_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace nvmf::target {

// What the listener knows of one poll group's load: queues given to it and not yet gone, and
// how many of those are I/O queues (a queue counts from the listener's hand-over on, so that
// connections arriving back to back spread before the first is accepted).
struct GroupLoad {
  size_t queues = 0;
  size_t io_queues = 0;
};

// The group for a new queue of `qid`: an admin queue (qid 0) to the group with the fewest queues,
// an I/O queue to the one with the fewest I/O queues (I/O queues carry the load; an admin queue
// carries keep-alives and a few admin commands); a tie goes by the other count, then to the
// lowest index. 0 when `loads` is empty.
inline size_t least_loaded_group(std::span<const GroupLoad> loads, uint16_t qid) {
  auto key = [qid](const GroupLoad& l) {
    return qid == 0 ? std::pair{l.queues, l.io_queues} : std::pair{l.io_queues, l.queues};
  };
  size_t best = 0;
  for (size_t i = 1; i < loads.size(); ++i) {
    if (key(loads[i]) < key(loads[best])) best = i;
  }
  return best;
}

}  // namespace nvmf::target

#endif  // NVMF_TARGET_POLL_GROUP_H_
