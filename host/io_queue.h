// SPDX-License-Identifier: BSD-3-Clause
// IoQueue: one I/O queue for asynchronous commands, in SPDK's shape (spdk_nvme_ns_cmd_read and
// _write with a completion callback, spdk_nvme_qpair_process_completions): a submit call builds
// one command and posts it; process_completions() polls the queue and runs the callback of each
// finished command on the calling thread. One thread uses one IoQueue: no lock, no allocation
// and no system call beyond the verbs post and poll on its fast path.
//
// Recovery belongs to the association (IoQueueLink, the Controller): when the queue's connection
// fails (a work completion error, a failed post, the target's disconnect, no completion within
// the command timeout) the IoQueue reports the loss, drops the connection and holds its
// outstanding commands; when the link hands it the connection of a new association it sends
// them again in the order they were first submitted (whole-LBA Read, Write, Flush, Write Zeroes
// and Deallocate can be sent twice). Once the link says fast_io_fail_tmo passed, or the
// controller was deleted (ctrl_loss_tmo), held commands complete with Host Pathing Error (SCT 3h
// SC 70h, Linux's NVME_SC_HOST_PATH_ERROR) and new ones are refused with it: Linux's
// nvme_failover / nvme_host_path_error behaviour for one path.
#ifndef NVMF_HOST_IO_QUEUE_H_
#define NVMF_HOST_IO_QUEUE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "host/io_channel.h"
#include "host/io_plan.h"
#include "proto/nvme.h"

namespace nvmf::host {

// How one asynchronous command ended, passed to its callback.
struct IoCompletion {
  // The CQE's status field without the phase bit (common/nvme_status.h): 0 is success. A
  // command the association could not carry: Host Pathing Error (SCT 3h SC 70h).
  uint16_t status = 0;
  uint32_t dw0 = 0;            // command specific (CQE DW0)
  uint32_t resubmissions = 0;  // times it was sent again on a new association
};
// Called once per accepted command, from process_completions() on the IoQueue's thread. It may
// submit new commands on the same IoQueue.
using IoCallback = void (*)(void* arg, const IoCompletion& completion);

// What the association says of its queues.
enum class LinkState : uint8_t {
  kLive,          // connected: a queue works through the connection it was handed
  kReconnecting,  // lost and reconnecting: commands are held
  kFailFast,      // still reconnecting, fast_io_fail_tmo passed: commands fail (path error)
  kDeleted,       // ctrl_loss_tmo passed, or disconnected: commands fail (path error)
};
const char* link_state_name(LinkState state);  // "live", "reconnecting", ...

// The association side of IoQueues: the Controller, which owns the recovery (reconnect after
// reconnect_delay, fast_io_fail_tmo, ctrl_loss_tmo).
class IoQueueLink {
 public:
  virtual ~IoQueueLink() = default;
  // Moves on each change of what update() returns; an IoQueue compares it once per call.
  virtual const std::atomic<uint64_t>& generation() const = 0;
  struct Update {
    uint64_t generation = 0;
    LinkState state = LinkState::kLive;
    // The connection of queue `index` on a new association (state kLive), else null.
    std::unique_ptr<IoChannel> channel;
  };
  // The state now, and queue `index`'s new connection if there is one (handed over once).
  virtual Update update(size_t index) = 0;
  // Queue `index`'s connection failed with `why` while it knew `generation`.
  virtual void report_loss(size_t index, uint64_t generation, const Status& why) = 0;
  // Blocks until generation() differs from `generation` or `deadline` passes.
  virtual void wait_for_change(uint64_t generation, Deadline deadline) = 0;
  // Queue `index` sent a command again on a new association (for the association's counters;
  // called from the queue's thread).
  virtual void count_resubmission(size_t /*index*/) {}
  // Queue `index` is about to drop `channel` (a loss, a new association, close()): what it
  // counted can be kept (called from the queue's thread).
  virtual void channel_dropped(size_t /*index*/, const IoChannel& /*channel*/) {}
};

// Counters of one IoQueue (its thread reads them).
struct IoQueueStats {
  uint64_t submitted = 0;
  uint64_t completed = 0;      // callbacks run, any status
  uint64_t resubmitted = 0;    // sends on a new association of commands already sent
  uint64_t path_failures = 0;  // completed with Host Pathing Error by the recovery
  // Commands completed with Command Aborted By Host: passthrough ones lost with their
  // association, ones lost kMaxResubmissions times, ones the new connection cannot carry.
  uint64_t aborted = 0;
  uint64_t losses = 0;       // connections this queue saw fail
  uint64_t connections = 0;  // connections of new associations it took (reconnects, resets)
  // Capsules posted over all its connections (IoChannel::capsule_counters()).
  QueueCounters capsules;
};

class IoQueue {
 public:
  struct Params {
    size_t index = 0;  // the link's number for this queue
    uint32_t nsid = 1;
    TransferLimits limits;  // LBA size, bytes per command, in-capsule policy
    // Commands this queue keeps at most (in flight and held); the connection's slots when 0
    // or larger.
    uint16_t depth = 0;
    // Commands in flight and no completion this long: the connection has failed (kTimeout).
    std::chrono::milliseconds command_timeout{5000};
    // Submissions are chained and posted together by the next process_completions() or wait()
    // (one ibv_post_send for all): SPDK's spdk_nvme_io_qpair_opts.delay_cmd_submit. Off: each
    // submit call posts its command.
    bool delay_cmd_submit = false;
  };
  // `channel`: the queue's connection on the current association (null: none yet, as while
  // reconnecting). Allocates every table here.
  IoQueue(const Params& params, IoQueueLink& link, std::unique_ptr<IoChannel> channel);
  ~IoQueue();
  IoQueue(const IoQueue&) = delete;
  IoQueue& operator=(const IoQueue&) = delete;

  // Submit calls: one command each. Ok: accepted, the callback will run exactly once; any error:
  // refused, no callback. Errors: kInvalidArgument (not whole LBAs, more than one command's
  // bytes (Params::limits.max_command_bytes), a write that one command cannot describe);
  // kResourceExhausted (depth() commands outstanding); kNvmeError Host Pathing Error (LinkState
  // kFailFast or kDeleted). The buffers stay the caller's and must stay valid and unchanged
  // until the callback: a command may be sent again after a reconnect.
  //
  // Read of dst.length bytes (whole LBAs) at `slba` into registered memory (keyed SGL).
  // `fua`: Force Unit Access (NVM CS 1.0 §3.2.6, CDW12 bit 30).
  Status submit_read(uint64_t slba, const DataSegment& dst, IoCallback cb, void* arg,
                     bool fua = false);
  // Write of the segments' bytes in order at `slba`, in-capsule or keyed as
  // next_write_command() decides (host/io_plan.h: the one place that choice is made).
  Status submit_write(uint64_t slba, std::span<const DataSegment> src, IoCallback cb, void* arg,
                      bool fua = false);
  // Write of one command already planned by next_write_command() (host/io_plan.h) for these
  // limits, at `slba`: how a caller that cuts a long transfer into commands submits each
  // (Controller::write()). kInvalidArgument for a plan of no bytes, not whole LBAs, above
  // max_command_bytes or with no piece.
  Status submit_write_command(uint64_t slba, const CommandPlan& plan, IoCallback cb, void* arg,
                              bool fua = false);
  // Flush of the namespace (NVM CS 1.0 §3.2.1).
  Status submit_flush(IoCallback cb, void* arg);
  // Write Zeroes of `nlb` blocks (1..65536) at `slba` (NVM CS 1.0 §3.2.8), no data.
  Status submit_write_zeroes(uint64_t slba, uint32_t nlb, IoCallback cb, void* arg);
  // Dataset Management, Deallocate (NVM CS 1.0 §3.2.3): `ranges` holds `nr` (1..256) 16-byte
  // Range entries (proto::DsmRange) in registered memory.
  Status submit_deallocate(const DataSegment& ranges, uint32_t nr, IoCallback cb, void* arg);
  // Passthrough (SPDK's spdk_nvme_ctrlr_cmd_io_raw): `sqe` exactly as given except its CID, SGL1
  // untouched; `in_capsule_data` (at most 4 registered segments) follows the SQE in the same
  // SEND. Never sent twice: lost with its association it completes with Command Aborted By
  // Host (SCT 3h SC 71h), as Linux fails a passthrough request (REQ_FAILFAST_DRIVER) that
  // nvme_cancel_request aborted. kInvalidArgument for more than 4 segments.
  Status submit_raw(const proto::Sqe& sqe, std::span<const DataSegment> in_capsule_data,
                    IoCallback cb, void* arg);

  // Polls the connection once and runs the callbacks of the commands found finished (and of
  // those the recovery failed); follows the link (a new connection, the held commands sent
  // again). At most `max` callbacks when max > 0. The number of callbacks run; an error only
  // for what the IoQueue cannot recover from (none today: a failed connection is the link's).
  Result<int> process_completions(int max = 0);
  // Sleeps until process_completions() may find work: on the connection's channels (event
  // mode; busy mode returns at once), or on the link while there is no connection; at most
  // until `deadline`.
  void wait(Deadline deadline) { wait(deadline, -1); }
  // The same, returning also when `also_fd` is readable (an io_uring, an eventfd: what else the
  // thread serves; -1 for none). While there is no connection the link cannot be slept on
  // together with `also_fd`: it is looked at again every kLinkRecheck.
  void wait(Deadline deadline, int also_fd);
  static constexpr std::chrono::milliseconds kLinkRecheck{10};
  // A command lost with its association this many times completes with Command Aborted By Host
  // instead of going out again (Linux's nvme_max_retries, 5): a command that breaks every
  // connection it is sent on must not keep the host reconnecting.
  static constexpr uint32_t kMaxResubmissions = 5;

  // For a thread that sleeps on several IoQueues at once (one epoll set, as the benchmark's
  // threads): the connection's completion channel and rdma_cm channel (fd -1 where there is
  // none: busy polling, or no connection while reconnecting: then look again within
  // kLinkRecheck), and, after the sleep, what fired consumed (a failed connection is a loss, as
  // in wait()). Posts what delay_cmd_submit holds back first.
  void wait_fds(pollfd fds[2]);
  void after_wait(const pollfd fds[2]);
  // Until when this queue may sleep: the command timeout's deadline while commands are in
  // flight, else Deadline::max().
  Deadline progress_deadline() const {
    return n_posted_ > 0 ? progress_deadline_ : Deadline::max();
  }

  // Drops the connection (the Controller's disconnect(), while no other thread uses this
  // IoQueue): what was in flight or held completes with Host Pathing Error on the next
  // process_completions(); new commands are refused with it.
  void close();

  // Params::delay_cmd_submit, changed: turned off, what it holds back is posted at once.
  void set_delay_cmd_submit(bool on) {
    params_.delay_cmd_submit = on;
    if (!on) post_delayed();
  }

  uint16_t depth() const { return depth_; }
  // The limits commands are planned with; the in-capsule policy follows the connection of each
  // new association (a failover path may take less in-capsule data).
  const TransferLimits& limits() const { return params_.limits; }
  // Commands accepted whose callback has not run yet.
  uint32_t outstanding() const { return depth_ - n_free_; }
  LinkState link_state() const { return state_; }
  // Counters since construction; the capsules include the connection in use. On the queue's
  // thread (it reads the connection's counters).
  IoQueueStats stats() const;
  // Connections of new associations taken so far (stats().connections, without the copy).
  uint64_t connections() const { return stats_.connections; }
  // The connection in use (null while there is none).
  const IoChannel* channel() const { return channel_.get(); }

 private:
  static constexpr uint16_t kNone = 0xFFFF;
  struct Request {
    proto::Sqe sqe{};    // as built; the CID is the slot of each post
    CommandPlan plan{};  // the in-capsule pieces posted after the SQE (none when keyed)
    IoCallback cb = nullptr;
    void* arg = nullptr;
    uint64_t seq = 0;  // submission order
    uint32_t resubmissions = 0;
    bool passthrough = false;  // submit_raw(): never sent twice
    bool abort = false;        // the connection it waits for cannot carry it
    uint16_t slot = kNone;     // its slot while posted
    uint16_t status = 0;       // the result, once it is done
    uint32_t dw0 = 0;
  };

  // The generation moved: takes the link's update (a new connection, held commands sent again;
  // or failures).
  void follow_link();
  // Takes a free request for `sqe` and `plan` and posts it (or holds it).
  Status accept(const proto::Sqe& sqe, const CommandPlan& plan, IoCallback cb, void* arg,
                bool passthrough = false);
  Status refuse_if_failing() const;
  // Posts request `r` on the connection: false when the connection failed (it is then dropped).
  bool post(uint16_t r);
  // Posts held requests in order while slots are free.
  void drain_held();
  // delay_cmd_submit: posts the chained capsules (a failure is a loss).
  void post_delayed() {
    if (delayed_) [[unlikely]]
      post_delayed_now();
  }
  void post_delayed_now();
  // The connection failed: report, drop it, hold everything in flight.
  void lose_channel(const Status& why);
  // Drops the connection (after telling the link, for its counters).
  void drop_channel();
  // A new connection: its in-capsule policy from now on; held writes planned in-capsule that it
  // cannot take go keyed (one piece) or are aborted.
  void take_channel(std::unique_ptr<IoChannel> channel);
  // Every posted request back to the held list, in submission order, ahead of those held; a
  // passthrough one completes with Command Aborted By Host instead.
  void hold_posted();
  // Every held request completes with Host Pathing Error.
  void fail_held();
  void finish(uint16_t r, uint16_t status, uint32_t dw0);  // into done_
  int run_callbacks(int max);

  Params params_;
  IoQueueLink& link_;
  const std::atomic<uint64_t>& generation_;
  uint64_t seen_generation_ = 0;
  LinkState state_ = LinkState::kLive;
  std::unique_ptr<IoChannel> channel_;
  uint16_t depth_ = 0;
  uint64_t next_seq_ = 0;

  std::vector<Request> requests_;
  std::vector<uint16_t> free_;  // free request indices (stack)
  uint16_t n_free_ = 0;
  std::vector<uint16_t> posted_;  // requests in flight on channel_ (any order)
  uint16_t n_posted_ = 0;
  std::vector<uint16_t> held_;  // requests waiting for a connection, in order (ring)
  uint16_t held_head_ = 0;
  uint16_t n_held_ = 0;
  std::vector<uint16_t> done_;  // finished requests whose callbacks have not run (ring)
  uint16_t done_head_ = 0;
  uint16_t n_done_ = 0;

  Deadline progress_deadline_{};  // with commands in flight: no completion by then, kTimeout
  uint32_t idle_polls_ = 0;
  bool delayed_ = false;  // delay_cmd_submit: capsules chained, not posted yet
  bool closed_ = false;   // close(): no connection is taken again
  IoQueueStats stats_;
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_IO_QUEUE_H_
