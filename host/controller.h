// SPDX-License-Identifier: BSD-3-Clause
// Controller: the host side of one NVMe-oF RDMA controller association: connect (admin queue,
// enable, Identify, I/O queues), block I/O over registered buffers, and orderly disconnect.
#ifndef NVMF_HOST_CONTROLLER_H_
#define NVMF_HOST_CONTROLLER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/verbs/memory_region.h"
#include "common/verbs/protection_domain.h"
#include "common/verbs/registered_buffer.h"
#include "host/ana.h"
#include "host/identify.h"
#include "host/io_plan.h"
#include "host/io_queue.h"
#include "host/options.h"
#include "proto/nvme.h"

namespace nvmf::host {

class Queue;

// Owns the protection domain so that registered buffers can outlive the Controller safely.
struct PdHolder {
  std::optional<verbs::ProtectionDomain> pd;
};

// Bytes [offset, offset + length) of `buffer` as a DataSegment (not range-checked: fast path).
DataSegment segment_of(const verbs::RegisteredBuffer& buffer, size_t offset, size_t length);
// The whole of `buffer` as one DataSegment.
inline DataSegment segment_of(const verbs::RegisteredBuffer& buffer) {
  return segment_of(buffer, 0, buffer.size());
}

// max_inline_data of one queue's QP (and its local ACK timeout).
struct QueueInlineSend {
  uint16_t qid = 0;
  uint32_t requested = 0;
  uint32_t granted = 0;
  bool fallback = false;  // the QP was created again without inline send
  uint32_t usable = 0;    // IBV_SEND_INLINE ceiling: 0 after a fallback or a request of 0
  uint64_t capsules_inline = 0;
  uint64_t capsules_by_reference = 0;  // includes capsules_with_in_capsule_data
  uint64_t capsules_with_in_capsule_data = 0;
  uint8_t ack_timeout = 0;  // Queue::ack_timeout(): 4.096 us x 2^N
};

// What was negotiated with the target, for reports and tests.
struct Negotiation {
  uint16_t cntlid = 0;
  uint32_t ioccsz = 0;  // 16-byte units
  uint32_t iorcsz = 0;  // 16-byte units
  uint16_t icdoff = 0;  // 16-byte units
  uint32_t sgls = 0;
  uint8_t msdbd = 0;
  uint32_t in_capsule_data_size = 0;  // the target's: IOCCSZ * 16 - 64 bytes
  bool in_capsule_enabled = false;    // the host uses in-capsule writes
  std::string in_capsule_why_off;     // empty when enabled
  uint32_t max_in_capsule_segments = 0;
  uint64_t mdts_bytes = 0;         // 0 = no limit
  uint32_t max_command_bytes = 0;  // per command after MDTS/keyed/NLB limits
  uint16_t io_queue_size = 0;
  uint16_t num_io_queues = 0;
  std::vector<QueueInlineSend> queues;  // admin first
  uint32_t min_granted_max_inline_data = 0;
};

// Counters since connect. Writes and reads count commands (a transfer above MDTS is several).
struct HostStats {
  uint64_t writes_in_capsule = 0;
  uint64_t writes_keyed = 0;
  uint64_t bytes_in_capsule = 0;
  uint64_t bytes_keyed = 0;
  uint64_t reads = 0;
  uint64_t bytes_read = 0;
  uint64_t flushes = 0;
  uint64_t capsules_inline = 0;        // posted with IBV_SEND_INLINE (all queues)
  uint64_t capsules_by_reference = 0;  // posted from registered memory (all queues)
  // Of capsules_by_reference, those with in-capsule data (they never go inline, by design).
  uint64_t capsules_with_in_capsule_data = 0;
  // Keep Alive commands the keep-alive thread sent that completed successfully, and those that
  // failed (an NVMe error status, a timeout after HostOptions::timeout_ms, a lost connection).
  uint64_t keep_alives = 0;
  uint64_t keep_alive_failures = 0;
};

// Controller states, Linux's names (/sys/class/nvme/nvmeX/state): new (connecting the first
// time), live, resetting (reset(): CC.EN 1 to 0 and back, as `nvme reset`), connecting (the
// association was lost: queues torn down, reconnecting; also reset() when the association
// failed during it), deleting (disconnect() or ctrl_loss_tmo ran out).
enum class ControllerState : uint8_t { kNew, kLive, kResetting, kConnecting, kDeleting };
// "new", "live", "resetting", "connecting", "deleting".
const char* controller_state_name(ControllerState state);

// What recovery did since connect.
struct RecoveryStats {
  uint64_t losses = 0;              // associations lost (transport error, timeout, disconnect)
  uint64_t reconnect_attempts = 0;  // connects tried after a loss
  uint64_t reconnects = 0;          // of which succeeded: a fresh association, new cntlid
  uint64_t retried_transfers = 0;   // commands sent again on a new association
  // Times I/O turned to failing with Host Pathing Error: fast_io_fail_tmo passed while
  // reconnecting, or the controller was deleted after ctrl_loss_tmo.
  uint64_t path_errors = 0;
  uint64_t longest_outage_ms = 0;  // loss to live again, the longest
  uint64_t failovers = 0;          // reconnects on another path than the lost one
  uint64_t resets = 0;             // reset() calls that brought the controller live again
  std::string last_loss;           // the error that ended the last association
  std::string path;                // "traddr:trsvcid" of the current association
};

// One association and its recovery. Use from one thread, except that the Controller's own
// threads share it: the keep-alive thread (HostOptions::kato_ms > 0, async events) serialises
// admin commands (keep_alive(), disconnect()) with a mutex, and the recovery
// thread reconnects after a loss. I/O goes through IoQueues (io_queue()): the synchronous
// write(), read() and flush() are wrappers over io_queue(0), so they share its thread rule.
class Controller {
 public:
  // Connects the admin queue (CM private data hrqsize 32, hsqsize 31), Fabrics Connect (cntlid
  // 0xFFFF, KATO = kato_ms, keyed Connect data), reads CAP and VS, enables (CC 0x00460001, waits
  // CSTS.RDY within CAP.TO), Identify Controller (refuses IOCCSZ < 4, IORCSZ < 1, KAS 0),
  // first active namespace, Identify Namespace, Set Features Number of Queues, then connects
  // the I/O queues (qid 1..N, queue_size entries, Connect data in-capsule when allowed).
  // Errors name the step: "queue 0 to 10.0.0.1:4420: ... connection refused", "CM reject:
  // invalid HSQSIZE (4)", "Identify Controller: KAS is 0 ...", NVMe statuses by name.
  static Result<std::unique_ptr<Controller>> connect(const HostOptions& options);
  // Disconnects (see disconnect()) if not done yet.
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Registers `length` bytes of caller memory at `addr` for I/O (local write, remote read,
  // remote write: the target RDMA READs write data and RDMA WRITEs read data), sharing the
  // controller's PD and keeping it alive. The memory stays the caller's and must outlive the
  // buffer. kUnavailable before connect; kInvalidArgument for null/empty; ibv_reg_mr errors
  // name "caller I/O buffer".
  Result<verbs::RegisteredBuffer> register_buffer(void* addr, size_t length);
  // Allocates `bytes` of zeroed, 4096-byte aligned memory registered for I/O (local write,
  // remote read, remote write), sharing the controller's PD and keeping it alive: the buffer may
  // outlive the Controller. kUnavailable before connect; kInvalidArgument for 0 bytes;
  // allocation and ibv_reg_mr errors name "I/O buffer".
  Result<verbs::RegisteredBuffer> allocate_buffer(size_t bytes);

  // Recovery (every IoQueue, the synchronous calls included): a transport failure (a work
  // completion error or failed post, the target's disconnect, no completion within timeout_ms,
  // a failed Keep Alive) puts the controller in state connecting: the recovery thread tears its
  // queues down without shutdown (the association is gone), and after reconnect_delay_s connects
  // admin and I/O queues again with a fresh association (cntlid 0xFFFF, new cntlid), every
  // reconnect_delay_s until it works or ctrl_loss_tmo_s has passed since the loss. Meanwhile the
  // IoQueues hold their commands and send them again once live (whole-LBA Read, Write and
  // Flush can be sent twice). Once fast_io_fail_tmo_s passes while connecting, held and new
  // commands fail with Host Pathing Error (kNvmeError, SCT 3h SC 70h, Linux's
  // NVME_SC_HOST_PATH_ERROR) while reconnecting goes on; once ctrl_loss_tmo_s passes the
  // controller is deleted and every command fails so. Registered buffers stay valid: the PD
  // outlives the queues. NVMe errors from the target are returned as they are, never retried.

  // Writes the segments' bytes, in order, starting at `slba`, through io_queue(0), waiting for
  // every command. The total must be a non-zero multiple of the LBA size (kInvalidArgument). Cut
  // into commands of at most negotiation().max_command_bytes; each goes in-capsule when the
  // target allows it (SGEs point at the caller's memory, no copy) or keyed (SGL 0x40 with the
  // segment's rkey, whole LBAs of one segment). An LBA that straddles two segments goes
  // in-capsule; when it cannot, the write is refused with kInvalidArgument before any command
  // is sent (host/io_plan.h, next_write_command). Up to 32 commands in flight. Errors:
  // kNvmeError "Write at LBA n: <status name>" (the first command that failed), Host Pathing
  // Error naming fast-io-fail-tmo or ctrl-loss-tmo (recovery above), kUnavailable after
  // disconnect().
  Status write(uint64_t slba, std::span<const DataSegment> segments);
  // Reads segment.length bytes (a multiple of the LBA size) from `slba` into the segment
  // (keyed SGL 0x40, the target RDMA WRITEs). Errors as write().
  Status read(uint64_t slba, const DataSegment& segment);
  // Flush of the namespace. Errors as write().
  Status flush();
  // Keep Alive (admin 18h) on the admin queue, now; the keep-alive thread calls this every
  // kato_ms / 2 when HostOptions::send_keep_alive is set, each due one period after the previous
  // one was due (host/keep_alive_schedule.h: the round trip does not stretch the period). Errors:
  // kUnavailable when disconnected, kTimeout after timeout_ms, kNvmeError with the status.
  Status keep_alive();

  // CC.SHN = normal, waits CSTS.SHST = complete (shutdown_timeout_ms), then disconnects and
  // destroys the I/O queues and the admin queue. Returns the shutdown's status; the queues are
  // torn down either way. Idempotent; I/O afterwards fails with kUnavailable.
  Status disconnect();

  // Controller Level Reset as `nvme reset` (Linux nvme_rdma_reset_ctrl_work): state resetting;
  // CC.EN is set to 0 and CSTS.RDY 0 awaited (CAP.TO), the admin queue dropped; then a new
  // association as a reconnect makes it (admin queue, Connect with cntlid FFFFh: a new cntlid,
  // enable, Identify, the I/O queues); state live. The recovery thread does it while the caller
  // waits; the IoQueues stay valid and take the new connections. Commands in flight on any
  // queue are sent again afterwards (a passthrough one completes with Command Aborted By Host),
  // so call it with none in flight where a command must not run twice. When the
  // controller cannot be set up again the failure is returned ("reset: ...") and it is a loss:
  // state connecting, recovered as above. kUnavailable when not live, or when the association
  // is lost (before or during the call: the recovery reconnects instead).
  Status reset();

  // Asymmetric Namespace Access (Base 2.0 §8.1). Whether the controller reports it (Identify
  // CMIC bit 3): it then reads the ANA log at every connect, at every ANA Change notice
  // (HostOptions::async_events) and in refresh_ana_log().
  bool ana_reporting() const { return (identify_.ctrl.cmic & proto::kCmicAna) != 0; }
  // The ANA state of the namespace in use (its ANAGRPID's group) in the last log read:
  // proto::kAnaOptimized when the controller reports no ANA, proto::kAnaInaccessible when the
  // log leaves the group out. Thread-safe.
  uint8_t ana_state() const { return ana_state_.load(std::memory_order_acquire); }
  // Moves each time an ANA log is stored (an event may have changed ana_state()). Thread-safe.
  uint64_t ana_generation() const { return ana_generation_.load(std::memory_order_acquire); }
  // The last ANA log read (empty without ANA). Thread-safe.
  AnaLog ana_log() const;
  // Reads the ANA log now on the admin queue (the ANA log page, under the admin lock)
  // and stores it. kUnavailable when not connected or without ANA; kNvmeError "Get Log Page 0Ch at
  // offset N: <status>", kIo for a log that does not fit or does not decode.
  Result<AnaLog> refresh_ana_log();
  // Asynchronous events completed since connect (HostOptions::async_events). Thread-safe.
  uint64_t async_events() const { return async_events_.load(std::memory_order_relaxed); }

  // The state; thread-safe.
  ControllerState state() const { return state_.load(std::memory_order_acquire); }
  // Thread-safe.
  RecoveryStats recovery_stats() const;
  const HostOptions& options() const { return options_; }

  // What connect() read: Identify Controller, the namespace used (host/identify.h), its LBA
  // size in bytes, and the CAP and VS properties (Base 2.0 §3.1.3.1, §3.1.3.2).
  const proto::IdentifyController& identify_controller() const { return identify_.ctrl; }
  const NamespaceInfo& namespace_info() const { return identify_.ns; }
  uint32_t lba_size() const { return identify_.ns.lba_size; }
  uint64_t cap() const { return cap_; }
  uint32_t vs() const { return vs_; }
  // The Host Identifier and host NQN sent in every Connect of this controller.
  const HostId& hostid() const { return hostid_; }
  const std::string& hostnqn() const { return hostnqn_; }
  // What was negotiated (Negotiation above), per queue included (the I/O queues' connections on
  // the current association). Takes the admin lock; the queues' counters are read as they are,
  // so call it while no other thread does I/O.
  Negotiation negotiation() const;
  // The host's counters so far (HostStats above): the commands of write(), read() and flush(),
  // the capsules of every queue. The same lock and the same condition.
  HostStats stats() const;

  // Whether `st` is a failure of the association (kIo, kUnavailable, kTimeout) that recovery
  // handles, rather than an NVMe status or a caller error.
  static bool is_transport_error(const Status& st);

  // How transfers are cut and whether writes go in-capsule (valid after connect).
  const TransferLimits& transfer_limits() const { return limits_; }
  // Commands one I/O queue keeps in flight at most (its slots: IoQueue::depth()).
  uint16_t io_queue_slots() const { return io_queue_slots_; }

  // Asynchronous I/O (host/io_queue.h, the shape of SPDK's qpairs): the IoQueue of I/O queue
  // `index` (0 .. num_io_queues() - 1, qid index + 1), used by one thread at a time; several
  // threads each drive their own (write(), read() and flush() drive io_queue(0)). connect()
  // hands every I/O queue to an IoQueue and starts the controller's recovery thread: a loss any
  // IoQueue or the keep-alive thread reports tears the association down and reconnects
  // (recovery above), while the IoQueues hold their commands and send them again on the new
  // association. An IoQueue stays valid across reconnects and resets until the Controller is
  // destroyed. kInvalidArgument for an index out of range.
  Result<IoQueue*> io_queue(size_t index);
  // Asynchronous I/O, for a program that is ending (nvmf-host ublk removing its block
  // device): from now on, while the association is lost, the IoQueues fail their held and new
  // commands with Host Pathing Error at once, as once fast_io_fail_tmo_s passed, instead of
  // holding them until a reconnect or ctrl_loss_tmo_s. Commands in flight on a live
  // association complete as they do. Thread-safe.
  void fail_held_io();
  // Asynchronous I/O: an IoQueue command's status (IoCompletion::status, or a submit call's
  // refusal) as a Status for messages: ok for 0; Host Pathing Error naming why the association
  // fails its I/O (fast-io-fail-tmo or ctrl-loss-tmo passed, the program is ending) and the last
  // loss; any other status by name, "<what>: <status name>". Thread-safe.
  Status command_status(uint16_t status, const std::string& what) const;
  // Whether the association is lost or being recovered (a loss reported and not recovered yet,
  // or state connecting). Thread-safe.
  bool association_lost() const;
  // Asynchronous I/O: asks the recovery thread to take the association as lost and reconnect,
  // for a failure the queues cannot see (a multipath user got Controller Pathing Error: the
  // target freed the controller). Nothing while not live. Thread-safe.
  void drop_association(const Status& why);
  // I/O queues connected (what Set Features Number of Queues granted, at most num_io_queues).
  size_t num_io_queues() const { return async_queues_.size(); }

 private:
  // The raw-capsule test layer (host/raw/raw_commands.h) sends admin commands as given.
  friend Result<proto::Cqe> submit_raw(Controller& c, uint16_t qid, proto::Sqe sqe,
                                       std::span<const DataSegment> in_capsule_data);
  // `sqe` as given on the admin queue (the CID aside), `pieces` after it, under the admin lock.
  Result<proto::Cqe> submit_admin_raw(const proto::Sqe& sqe, std::span<const Piece> pieces);
  explicit Controller(const HostOptions& options);
  class AsyncLink;  // the IoQueueLink of io_queue() (controller.cc)
  // The recovery thread of asynchronous I/O: waits for a loss, tears down, reconnects, hands the
  // new I/O queues to the IoQueues.
  void recovery_loop();
  // One round of recovery_loop() after a loss: false when the controller was deleted or stopped.
  bool recover_async();
  // One reconnect attempt of recovery (recover_async()): a new association on the
  // next path. kLive: live again (state, counters, log); kRetry: failed, next_attempt_ set one
  // `delay` on (or at loss_deadline); kGiveUp: no attempt follows, `why` says why (the namespace
  // changed, too few I/O queues for the IoQueues, a Connect refused with DNR, ctrl-loss-tmo).
  enum class Attempt { kLive, kRetry, kGiveUp };
  using Clock = std::chrono::steady_clock;
  Attempt attempt_reconnect(const NamespaceInfo& before, Clock::time_point loss_deadline,
                            std::chrono::seconds delay, std::string& why);
  // `seconds` after the last loss (ctrl_loss_tmo_s, fast_io_fail_tmo_s); never when negative.
  Clock::time_point after_loss(int seconds) const;
  // Copies recovery_ for recovery_stats() from other threads.
  void publish_recovery();
  // Hands the I/O queues to IoQueues and starts the recovery thread (connect()).
  Status start_io_queues();
  // The recovery thread: reset() as asked; a failure becomes a loss.
  void reset_async();
  // A synchronous call's commands on io_queue(0): `submit(q, slba, cb, arg)` submits the next
  // one (Result<bool>: whether more follow); waits for all, returns the first error.
  template <typename Submit>
  Status transfer(const char* verb, Submit&& submit);
  // The keep-alive thread saw the association fail: a loss for the recovery thread.
  void mark_keep_alive_lost(const Status& why);
  Status connect_admin();
  Status connect_io_queues();
  // The admin thread: Keep Alive every KATO / 2 (kato_ms > 0 and send_keep_alive) and, with
  // async_events, one Asynchronous Event Request kept outstanding and its events handled.
  void start_keep_alive();
  void stop_keep_alive();
  void keep_alive_loop(std::chrono::milliseconds interval);
  void admin_loop(std::chrono::milliseconds interval, bool keep_alive);
  // Admin lock held: posts an Asynchronous Event Request (aer_slot_).
  Status post_aer_locked();
  // Admin lock held: when the AER answered, reads the log page its event names, stores an ANA
  // log, posts the next AER. The event to report (type 0xFF: none).
  Result<AsyncEvent> take_event_locked();
  // Wakes the admin thread from its poll() (the eventfd; nothing without async_events).
  void wake_admin_thread();
  // Admin lock held: wakes the admin thread when another thread's admin command found the AER's
  // completion (the completion channel's event is then gone).
  void nudge_admin_thread_locked();
  // Admin lock held: stores `log` and the namespace's state in it.
  void store_ana_log(AnaLog log);
  HostStats stats_locked() const;  // admin_mutex_ held; the raw I/O queues only
  // The IoQueues' current connections.
  template <typename Fn>
  void for_each_io_connection(Fn&& fn) const;
  // Marks the association lost: state connecting, queues torn down, the loss time kept.
  void begin_loss(const Status& why);
  // Stores the state and tells HostOptions::on_state_change.
  void set_state(ControllerState state);
  Status connect_association();  // admin + I/O queues, keep-alive thread, on path_index_
  // One round: connect_association() on each path once, from path `first` on (wrapping);
  // path_index_ ends on the path that worked. Errors: the last path's.
  Status connect_round(size_t first);
  void teardown_queues();

  HostOptions options_;
  HostId hostid_{};
  std::string hostnqn_;
  uint16_t cntlid_ = 0;
  uint64_t cap_ = 0;
  uint32_t vs_ = 0;
  uint32_t cc_ = 0;
  bool enabled_ = false;
  IdentifyResult identify_;
  TransferLimits limits_;
  uint16_t io_queue_size_ = 0;   // entries per I/O queue, as connected
  uint16_t io_queue_slots_ = 0;  // command slots per I/O queue
  HostStats stats_;
  // The synchronous calls' command counters (writes, reads, flushes), on io_queue(0)'s thread.
  HostStats io_stats_;
  // Declared before the queues: the PD outlives every QP.
  std::shared_ptr<PdHolder> pd_;
  // Guards admin_ (its slots, bounce buffer and counters) between the caller's thread and the
  // keep-alive thread. Never taken on the I/O path.
  mutable std::mutex admin_mutex_;
  std::unique_ptr<Queue> admin_;
  std::vector<std::unique_ptr<Queue>> io_queues_;
  // The keep-alive thread and how it is told to stop.
  std::thread keep_alive_thread_;
  std::mutex keep_alive_mutex_;
  std::condition_variable keep_alive_cv_;
  bool keep_alive_stop_ = false;
  std::atomic<uint64_t> keep_alives_{0};
  std::atomic<uint64_t> keep_alive_failures_{0};
  std::optional<uint16_t> aer_slot_;  // the outstanding AER (admin lock)
  NamespaceSizes known_namespaces_;   // for Namespace Attribute Changed (admin lock)
  int wake_fd_ = -1;                  // eventfd: stops or nudges the admin thread
  std::atomic<uint64_t> async_events_{0};
  mutable std::mutex ana_mutex_;  // ana_log_
  AnaLog ana_log_;
  std::atomic<uint8_t> ana_state_{proto::kAnaOptimized};
  std::atomic<uint64_t> ana_generation_{0};
  std::atomic<ControllerState> state_{ControllerState::kNew};
  std::atomic<bool> keep_alive_lost_{false};  // set by the keep-alive thread on a transport error
  std::atomic<bool> deleted_by_loss_{false};  // ctrl_loss_tmo ran out (not disconnect())
  std::chrono::steady_clock::time_point lost_at_{};
  std::chrono::steady_clock::time_point next_attempt_{};
  RecoveryStats recovery_;
  // Asynchronous I/O (io_queue()): the link, the IoQueues (after pd_: destroyed first), and the
  // recovery thread. async_ is read by the keep-alive thread (set once, before it matters).
  std::unique_ptr<AsyncLink> link_;
  std::atomic<AsyncLink*> async_{nullptr};
  std::vector<std::unique_ptr<IoQueue>> async_queues_;
  std::thread recovery_thread_;
  mutable std::mutex recovery_snapshot_mutex_;
  RecoveryStats recovery_snapshot_;
  std::vector<TransportPath> paths_;  // transport_paths(options_)
  size_t path_index_ = 0;             // the path of the current (or last) association
  size_t lost_path_ = 0;              // the path of the association lost last
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_CONTROLLER_H_
