// SPDX-License-Identifier: BSD-3-Clause
// Controller: one host's NVMe controller in the subsystem (dynamic model: created by an admin
// queue Connect with CNTLID FFFFh, freed when that admin queue goes away).
#ifndef NVMF_TARGET_CONTROLLER_H_
#define NVMF_TARGET_CONTROLLER_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "target/controller_registers.h"

namespace nvmf::target {

class CommandProcessor;

// State shared by the admin queue and the I/O queues of one association. Owned by the
// Subsystem (shared_ptr: a queue of another poll group keeps it until it saw it freed).
// Everything is under the control lock (target/control_lock.h) except what NVM I/O reads on
// any poll group without it: enabled() and note_traffic() (atomics).
class Controller {
 public:
  // `max_io_queues`: I/O qids 1..max_io_queues may connect. `io_queue_size`: CAP.MQES + 1.
  // The keep-alive timer starts now.
  Controller(uint16_t cntlid, std::string hostnqn, const std::array<uint8_t, 16>& hostid,
             uint32_t kato_ms, uint16_t max_io_queues, uint32_t io_queue_size, uint32_t version);

  uint16_t cntlid() const { return cntlid_; }
  const std::string& hostnqn() const { return hostnqn_; }
  // The address its admin queue connected from (QueueLink::peer_host), set at creation.
  const std::string& peer_host() const { return peer_host_; }
  void set_peer_host(std::string peer_host) { peer_host_ = std::move(peer_host); }
  const std::array<uint8_t, 16>& hostid() const { return hostid_; }
  ControllerRegisters& registers() { return registers_; }
  const ControllerRegisters& registers() const { return registers_; }
  uint16_t max_io_queues() const { return max_io_queues_; }

  // CC.EN = 1 and CSTS.RDY = 1: commands other than Fabrics ones may run.
  bool enabled() const;

  // Keep Alive Timeout in ms (Connect KATO, Set Features 0Fh); 0 = no keep-alive timer. The
  // timer runs like nvmet's: in whole seconds (KATO rounded up), started when the controller is
  // created and restarted by every Keep Alive command and KATO change. The event loop frees a
  // controller whose timer expired (Subsystem::expire_keep_alives).
  using Clock = std::chrono::steady_clock;
  uint32_t kato_ms() const { return kato_ms_; }
  void set_kato_ms(uint32_t ms, Clock::time_point now);
  void keep_alive(Clock::time_point now) { keep_alive_at_ = now; }
  // Traffic Based Keep Alive (CTRATT.TBKAS, as nvmet's reset_tbkas): any command on any queue
  // marks the controller; a timer that expires over a mark restarts instead (one store per
  // command, no clock read on the I/O path).
  void note_traffic() { traffic_.store(true, std::memory_order_relaxed); }
  // At or after keep_alive_deadline(): true when traffic was seen since the timer last
  // (re)started, in which case the timer restarts at `now`.
  bool restart_for_traffic(Clock::time_point now);
  // When the timer expires; nullopt when KATO is 0.
  std::optional<Clock::time_point> keep_alive_deadline() const;
  uint32_t async_event_config() const { return async_event_config_; }
  void set_async_event_config(uint32_t v) { async_event_config_ = v; }

  // Asynchronous events (Base 2.0 §5.2), as nvmet keeps them: an event is queued only when the
  // host enabled its notices (Asynchronous Event Configuration, `aec_bit`) and the same log
  // page is not masked; queuing it masks that log page until the host reads it with RAE 0
  // (log_page_read), so a host is told once per change it has not looked at. `dw0` is
  // proto::aen_dw0(). False when not queued.
  bool post_event(uint32_t dw0, uint32_t aec_bit);
  // The oldest queued event, taken (an Async Event Request completes with it).
  std::optional<uint32_t> take_event();
  // The host read `log_page` without Retain Asynchronous Event: its events may come again.
  void log_page_read(uint8_t log_page);
  size_t events_waiting() const { return events_.size(); }

  // Changed Namespace List (log page 04h, Base 2.0 §5.16.1.5), as nvmet keeps it: the NSIDs
  // whose namespace was added, removed or resized since the host last read the log, each once,
  // at most kMaxChangedNamespaces; beyond that the list is the single entry FFFFFFFFh.
  void note_namespace_changed(uint32_t nsid);
  // The list as the log page has it (empty: nothing changed), cleared.
  std::vector<uint32_t> take_changed_namespaces();
  const std::vector<uint32_t>& changed_namespaces() const { return changed_namespaces_; }
  static constexpr size_t kMaxChangedNamespaces = 1024;

  // Set Features Number of Queues: NSQR/NCQR are 0-based requests; grants min(request + 1,
  // max_io_queues) of each and returns the CQE DW0 (NCQA << 16 | NSQA, 0-based).
  uint32_t grant_queues(uint16_t nsqr, uint16_t ncqr);
  // DW0 of Get Features Number of Queues: what was granted (max_io_queues before any Set).
  uint32_t granted_queues_dw0() const;
  // Highest I/O qid a Connect may open: min(NSQA, NCQA) + 1 after Set Features Number of
  // Queues (an NVMe-oF I/O queue is one SQ/CQ pair, Base 2.0 §5.27.1.5), max_io_queues before
  // it (nvmet grants every queue of the subsystem to a host that never asked).
  uint16_t io_qid_limit() const;

  // Queue bookkeeping: the processor serving `qid`, or null.
  CommandProcessor* queue(uint16_t qid) const;
  // Binds `qid` (0..max_io_queues) to `q`, replacing any previous one.
  void attach(uint16_t qid, CommandProcessor* q);
  // Unbinds `qid` if it is still bound to `q`.
  void detach(uint16_t qid, const CommandProcessor* q);
  // Every bound I/O queue (qid >= 1).
  std::vector<CommandProcessor*> io_queues() const;

 private:
  uint16_t cntlid_;
  std::string hostnqn_;
  std::string peer_host_;
  std::array<uint8_t, 16> hostid_;
  uint32_t kato_ms_;
  Clock::time_point keep_alive_at_;
  std::atomic<bool> traffic_{false};  // set by any poll group, cleared under the control lock
  uint16_t max_io_queues_;
  ControllerRegisters registers_;
  uint32_t async_event_config_ = 0;
  std::vector<uint32_t> events_;              // queued, oldest first (one per log page at most)
  std::vector<uint8_t> masked_log_pages_;     // events queued or reported, log not read since
  std::vector<uint32_t> changed_namespaces_;  // {FFFFFFFFh} once more than the log holds
  uint16_t granted_sq_ = 0;                   // 1-based, 0 = never set
  uint16_t granted_cq_ = 0;
  std::vector<CommandProcessor*> queues_;  // index qid
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_CONTROLLER_H_
