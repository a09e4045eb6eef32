// SPDX-License-Identifier: BSD-3-Clause
// EventLoop: one poll group's thread: its queues' CQs, its rdma_cm channel and the wake-up eventfd,
// multiplexed with epoll; CQs are drained by polling and the loop sleeps only when idle. Group 0
// also owns the rdma_cm listeners and the keep-alive timers.
#ifndef NVMF_TARGET_EVENT_LOOP_H_
#define NVMF_TARGET_EVENT_LOOP_H_

#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/verbs/cm_event.h"
#include "common/verbs/cm_id.h"
#include "common/verbs/event_channel.h"
#include "target/counters.h"
#include "target/device_context.h"
#include "target/io_engine.h"
#include "target/poll_group.h"
#include "target/port.h"
#include "target/rdma_queue.h"
#include "target/subsystem.h"
#include "target/target_options.h"

namespace nvmf::target {

// Owns the RDMA side of one poll group (Target::create() makes poll_groups().groups of them and
// gives each the options with poll_groups resolved: never kPollGroupsAuto here).
// Not thread-safe except stop(), close_listener() and post().
//
// Poll groups: group 0 listens. It checks a CONNECT_REQUEST (private data, the pending-Connect
// limit over every group, the device, which resolves the ports' in-capsule sizes once), then
// gives the connection to the group with the fewest queues (admin queue) or the fewest I/O queues
// (I/O queue), counting connections given and not yet gone: when that is another group, the id
// moves to that group's CM channel (rdma_migrate_id) and the group creates and accepts the queue
// on its own thread (post()). Each group has its own per-device PD, completion channel, SRQ,
// shared buffer pool and async event thread, and its own IoEngine. Controller and subsystem state
// goes through the control lock (target/control_lock.h); a queue of another group is asked to
// disconnect through RdmaQueue::request_disconnect (an atomic flag and this group's eventfd).
//
// Loop: deliver the IoEngine's finished backend operations, poll the shared CQs (each
// completion goes to the queue its wc.qp_num names; target/shared_cq.h), then hand
// the backend operations that round produced to the kernel (one io_uring_enter); while there is
// work, keep polling (checking the CM channel
// every 64 rounds). Then, by TargetOptions::poll_mode:
//   event: once busy_poll_us have passed since the last completion (the clock is read every
//          64 empty polls), arm every shared CQ, poll once more (a completion may have landed
//          before the arm), then block in epoll_wait on the CM channel, the devices' completion
//          channels, the IoEngine's eventfd and the eventfd that stop() writes;
//   busy:  never sleeps; stop() is seen at the next round.
// While spinning, the CM channel is read without blocking every 64 × 64 empty polls, and the
// controllers' keep-alive timers are checked every 64 × 64 polls (busy or not); a sleeping loop
// wakes up for the next keep-alive deadline.
class EventLoop {
 public:
  // Creates the CM channel and one listener per port (at most kMaxPorts), bound to the port's
  // traddr:trsvcid (Port::address()), and listens. When an address belongs to an RDMA device,
  // the ports' in-capsule sizes are resolved now; otherwise at the first connection. Queues are
  // sized and checked by their port's limits (PortLimits); a new queue starts on the port's
  // discovery subsystem until its Connect picks one by SUBNQN through the port. `engine` (null
  // when no namespace is file-backed) and `ports` must outlive the loop.
  // `group` > 0: a poll group without listeners (serving the same ports' queues).
  static Result<std::unique_ptr<EventLoop>> create(const TargetOptions& options,
                                                   StatusCounters& statuses, IoEngine* engine,
                                                   std::vector<Port*> ports, size_t group = 0);
  // Group 0: every poll group, itself first (they must outlive it, and it outlives their
  // run()s). Each other group opens the devices group 0 opened at start-up (PD, completion
  // channel, SRQ, async event thread); a failure there is a WARN, retried at its first
  // connection. Call before any run().
  void set_groups(std::vector<EventLoop*> groups);
  // Runs `task` on this group's thread at its next round (thread-safe; wakes it up).
  void post(std::function<void()> task);
  // A quiescent point: calls `done` on this group's thread at the top of its next round, where
  // no request of this group is inside a step (between a namespace lookup and its use), or at
  // once on the caller's thread when run() is not running (then no request runs at all).
  // Thread-safe; wakes the group up. Target::quiesce_poll_groups() waits for every group's.
  void at_next_round(std::function<void()> done);
  size_t group() const { return group_; }
  // Queues given to this group and not yet gone (admin and I/O; I/O only): the load the listener
  // places new queues by. Any thread.
  size_t queues_assigned() const { return queues_assigned_.load(std::memory_order_relaxed); }
  size_t io_queues_assigned() const { return io_queues_assigned_.load(std::memory_order_relaxed); }
  // Waits for the backend operations in flight, then disconnects and destroys every queue, then
  // the devices, the listener and the channel.
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  Status run();
  void stop();  // async-signal-safe
  // The service number and "ADDR:PORT" port `index` listens on (as bound, trsvcid 0 resolved).
  uint16_t port(size_t index) const { return listeners_.at(index).number; }
  const std::string& listen_address(size_t index) const { return listeners_.at(index).address; }
  // Group 0: asks the loop to remove port `index` as nvmet does when a port is disabled or its
  // subsystem links dropped: destroy its listener and disconnect every queue that came in on
  // it, in every poll group. Thread-safe; waits (at most 10 s) until every group has destroyed
  // each such queue (one waiting for a backend operation goes once it completed). Errors:
  // kInvalidArgument (index), kTimeout (a group's run() is not running).
  Status close_listener(size_t index);
  // Group 0: listens on `port`'s address too (a port added to a running target; nvmet enables
  // a port when its first subsystem is linked): binds here (an address in use or not on an
  // RDMA device fails now), then the loop listens, resolves the port's in-capsule data size
  // against the device the others were (capped at what the shared receive queue's receives
  // hold), and every group learns the port. The port's trsvcid is set to the one bound.
  // Thread-safe; waits at most 10 s. Errors: kResourceExhausted (kMaxPorts listeners), the
  // rdma_cm call's, kTimeout (run() is not running).
  Status add_listener(Port& port);

  static constexpr size_t kMaxPorts = 32;

 private:
  struct Listener {
    Port* port = nullptr;
    std::optional<verbs::CmId> id;  // empty once closed
    uint16_t number = 0;
    std::string address;
  };

  EventLoop(const TargetOptions& options, StatusCounters& statuses, verbs::EventChannel channel,
            IoEngine* engine, std::vector<Port*> ports, size_t group);
  Status open(const TargetOptions& options);
  Status add_fd(int fd, uint64_t tag);

  // CM events.
  Status drain_cm_events();
  void handle_cm_event(verbs::CmEvent& event);
  void on_connect_request(verbs::CmEvent& event);
  // A connection the listener checked and gave to this group: create the queue and accept.
  struct Handoff {
    verbs::CmId id;
    Port* port = nullptr;
    uint16_t qid = 0;
    uint16_t hrqsize = 0;
    uint32_t queue_size = 0;
    rdma_conn_param param{};
    std::string peer;       // "addr:port"
    std::string peer_host;  // "addr"
    PendingSlot pending;    // its place under --max-pending-connections, until the queue has it
  };
  void accept_connection(Handoff& h);
  // Port removal in this group (close_listener): `ports` (bit i: listener i's port) have their
  // queues disconnected and destroyed by sweep(), which reports to group 0 when none is left.
  void drop_ports(uint64_t ports);
  // Group 0, any thread: `group` has no queue left of `ports`.
  void ports_dropped(size_t group, uint64_t ports);
  void drain_inbox();
  // The queues a departing queue was counted in (queues_assigned_ / io_queues_assigned_).
  void unassign(const RdmaQueue& q);
  void reject(verbs::CmId& id, uint16_t sts, std::string_view peer, std::string_view reason);
  Result<DeviceContext*> device_for(ibv_context* context);
  // A device's shared buffer pool has free chunks and commands waiting for one.
  bool buffer_waiters_can_start() const;
  // Makes `dev`'s SRQ (TargetOptions::srq) unless it has one or has none to give (called when
  // the device is first seen: at start-up for a listen address on it); a failure is one WARN
  // and per-queue receives for that device.
  void ensure_srq(DeviceContext& dev);
  // Re-arms the SRQ limits that fired (housekeeping), one WARN a second at most.
  void maintain_srqs();
  void resolve_negotiation(const DeviceContext& dev);
  // One port's in-capsule data size against `dev` (`report`: into the stats' negotiation).
  void resolve_port(Port& port, const DeviceContext& dev, bool report);
  // Carries out the close_listener() requests (event-loop thread).
  void close_requested_listeners();

  // Completions: backend operations reaped, commands waiting for a shared buffer started when
  // one is free, then every shared CQ, then the new backend operations submitted. Returns the
  // completions handled.
  int poll_queues();
  // Polls each of `dev`'s shared CQs, up to `max_batches` batches of kPollBatch each (< 0: until
  // it is empty), hands every completion to its queue by QP number (dispatch) and flushes the
  // queues that chained work after each batch. Returns the completions handled.
  int poll_device(DeviceContext& dev, int max_batches);
  void dispatch(DeviceContext& dev, const ibv_wc& wc);
  void flush_touched(DeviceContext& dev);
  // More of `dev`'s SRQ receives held by parked capsules (with in-capsule data, on queues
  // whose every command slot waits for its SEND) than SharedReceiveQueue::parked_share(): the
  // queues parking the most are torn down, heaviest first, until the others' parked receives
  // fit, each with one WARN naming its host (rate limited). A host that takes no responses
  // and keeps sending capsules with in-capsule data takes at most half the SRQ, for as long as
  // it takes to disconnect it, never the receives every other host needs.
  void evict_srq_parkers(DeviceContext& dev);
  // ibv_poll_cq failed (the CQ overflowed or the device failed): the CQ takes no new queue and
  // every queue on it is asked to disconnect.
  void shared_cq_failed(DeviceContext& dev, SharedCq& cq);
  // Arms every shared CQ that is not armed (one ibv_req_notify_cq each).
  void arm_queues();
  void drain_cq_events(DeviceContext& dev);
  // Frees the controllers whose keep-alive timer expired, in every subsystem on the port, and
  // disconnects the queues past their Connect deadline; returns the milliseconds until the next
  // deadline of either kind (-1: none), for epoll_wait.
  int expire_keep_alives();
  // Asks every queue that has had no successful Connect for connect_timeout_ms since its CM
  // accept to disconnect (one WARN line a second at most); returns the earliest deadline left.
  std::optional<std::chrono::steady_clock::time_point> expire_connect_deadlines(
      std::chrono::steady_clock::time_point now);
  // Asks every queue whose posted send work has had no completion for send_stall_timeout_ms
  // while it holds shared buffers that commands wait for, or has capsules parked for a slot
  // (with or without their SRQ receives), to disconnect (target/stall_watch.h); returns the
  // earliest such deadline left (only while it holds them: a command that starts waiting, or a
  // capsule parked, is work the loop handles, and it looks again before it sleeps).
  std::optional<std::chrono::steady_clock::time_point> expire_stalled_queues(
      std::chrono::steady_clock::time_point now);
  // Feeds every queue's IdleWatch (RdmaQueue::check_stall, target/stall_report.h); returns the
  // milliseconds until the next look is due (-1: no queue has commands outstanding).
  int check_stalls();
  // Non-blocking CM events, then keep-alive timers (both sweep torn-down queues), then stalls.
  void housekeeping();
  // Arms every shared CQ, polls once more, and sleeps in epoll_wait only when that poll found
  // nothing.
  // Returns the completions the poll after the arm handled (0 when it slept), -1 when
  // epoll_wait failed.
  int wait_idle();
  // Pins the calling thread (run()'s) as TargetOptions::cpu says; a failure is a WARN. Returns
  // the thread's affinity mask from before, when it pinned: run() puts it back as it returns, so
  // a library caller's thread (and the threads it makes later) is not left on one CPU.
  std::optional<cpu_set_t> pin_thread();
  // Destroys the queues that want teardown, except those still waiting for a backend
  // operation (disconnected now, destroyed once it completed).
  void sweep();
  void shutdown();
  // The first port: its discovery subsystem's registry holds the target-wide counters.
  Port& first_port() const { return *listeners_.front().port; }

  const TargetOptions options_;
  const size_t group_;
  std::vector<EventLoop*> groups_;  // group 0: every group, itself first
  EventLoop* leader_ = this;        // group 0
  // Connections without a successful Connect over every group (group 0 admits; the queues'
  // groups give the places back).
  std::shared_ptr<PendingConnections> pending_ = std::make_shared<PendingConnections>();
  std::atomic<size_t> queues_assigned_{0};
  std::atomic<size_t> io_queues_assigned_{0};
  std::mutex inbox_mutex_;
  std::vector<std::function<void()>> inbox_;  // guarded by inbox_mutex_
  std::atomic<bool> inbox_pending_{false};
  std::mutex round_mutex_;
  std::vector<std::function<void()>> round_tasks_;  // guarded by round_mutex_
  bool running_ = false;                            // run() is running; guarded by round_mutex_
  std::atomic<bool> round_pending_{false};
  void run_round_tasks();
  void stop_running();  // run() returning: later at_next_round() calls run at once
  StatusCounters& statuses_;
  IoEngine* engine_;
  verbs::EventChannel cm_channel_;  // destroyed last
  std::vector<Listener> listeners_;
  std::atomic<uint64_t> close_requests_{0};  // bit i: close_listener(i) waits
  std::mutex close_mutex_;
  std::condition_variable close_done_;
  uint64_t closed_ = 0;  // bit i: port i removed in every group (guarded by close_mutex_)
  std::vector<uint64_t> ports_dropped_;     // per group: its queues of port i gone (close_mutex_)
  std::atomic<uint64_t> drop_requests_{0};  // bit i: drop port i's queues (from group 0)
  uint64_t dropping_ = 0;  // bit i: port i's queues being torn down here (loop thread)
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stop_requested_{false};
  bool resolved_ = false;
  std::vector<std::unique_ptr<DeviceContext>> devices_;
  std::map<rdma_cm_id*, std::unique_ptr<RdmaQueue>> queues_;  // destroyed first
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_EVENT_LOOP_H_
