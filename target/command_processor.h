// SPDX-License-Identifier: BSD-3-Clause
// CommandProcessor: executes the commands of one queue (Fabrics, Admin, NVM I/O) without any
// RDMA: the transport hands it a Request and carries out the NextStep it returns. This is the
// seam between the NVMe-oF core and the RDMA transport (like SPDK's transport ops).
#ifndef NVMF_TARGET_COMMAND_PROCESSOR_H_
#define NVMF_TARGET_COMMAND_PROCESSOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "proto/fabrics.h"
#include "target/auth.h"
#include "target/controller.h"
#include "target/counters.h"
#include "target/io_engine.h"
#include "target/io_status.h"
#include "target/queue_link.h"
#include "target/request.h"
#include "target/subsystem.h"

namespace nvmf::target {

// One per connected queue; its poll group's thread only, except controller_freed(). Connect,
// Admin and Fabrics commands and detach() run under the control lock (target/control_lock.h);
// NVM I/O commands on a connected I/O queue do not take it.
//
// Protocol errors become CQE status values (common/nvme_status.h), never logs. Check order for
// every command: PSDT/FUSE, then Connect-first (a queue without controller accepts only
// Connect), then the controller must be enabled for non-Fabrics commands, then opcode, then
// namespace, then SGL decode, then command-specific fields, then the SGL length.
//
// Connection state (nvmet: one Connect per queue). A queue takes one Fabrics Connect:
//  - a command other than Connect on a queue without a controller: Command Sequence Error, DNR
//    (Fabrics 1.1 §3.3: Connect is the first command on every queue);
//  - a Connect while one is in progress (its data still arriving by RDMA READ) or after one
//    succeeded: Command Sequence Error, DNR; the queue keeps its binding;
//  - a Connect that fails changes nothing (subsystem, controller, SQHD modulus): the host may try
//    again on the same queue, as nvmet allows, until the transport's Connect deadline;
//  - an I/O Connect for a qid already live on the controller: Command Sequence Error, DNR
//    (nvmet_install_queue); the live queue is untouched.
// SQHD advances by one per command, modulo the CM request's queue size until a Connect succeeds
// and modulo that Connect's SQSIZE + 1 from its own response on.
class Port;

class CommandProcessor {
 public:
  // `cm_qid` and `queue_size` (hsqsize + 1) come from the CM request; `in_capsule_area_bytes`
  // is the in-capsule area of this queue's receives. `link`, `counters`, `statuses` and
  // `subsystem` must outlive the processor.
  CommandProcessor(Subsystem& subsystem, QueueLink& link, QueueCounters& counters,
                   StatusCounters& statuses, uint16_t cm_qid, uint32_t queue_size,
                   uint32_t in_capsule_area_bytes);
  // Calls detach().
  ~CommandProcessor();
  // The port this queue came in on (null: the given subsystem's port). Connect finds the
  // subsystem by SUBNQN among the port's links; the Discovery Log Page lists the port's
  // entries; Identify IOCCSZ is the port's in-capsule size. Call before the first capsule.
  void set_port(Port* port) { port_ = port; }
  Port* port() const;
  CommandProcessor(const CommandProcessor&) = delete;
  CommandProcessor& operator=(const CommandProcessor&) = delete;

  // A capsule arrived in `r` (sqe, in_capsule, buffer set). Advances SQHD and decides. `r` must
  // stay valid while the command is pending (kReadFromHost) or held (kHold).
  NextStep begin(Request& r);
  // The RDMA READ asked for by kReadFromHost completed: finish the command. Unless the READ's
  // data is not all there (read_data_missing()): then nothing is executed, the command is
  // answered Data Transfer Error and the transport is asked to disconnect.
  NextStep data_arrived(Request& r);
  // The backend operation asked for by kBackend finished (r.io.result): answer the command
  // (NVMe status from the errno, io_status.h), or return kBackend again for its next operation
  // (Dataset Management ranges, a broadcast Flush or a shutdown over several namespaces).
  NextStep io_done(Request& r);
  // A backend operation of `r` completed, whatever becomes of the queue (called before
  // io_done(), and also when the queue is being torn down and io_done() is not): its
  // namespace's count of operations in flight drops (Namespace::io_finished).
  static void backend_done(Request& r);

  // The queue is going away (disconnect, error, stop): an I/O queue leaves its controller; the
  // admin queue frees its controller (which disconnects the I/O queues). Idempotent.
  void detach();
  // Called by Subsystem::free_controller() (control lock held, from any poll group): leave the
  // controller and, for an I/O queue, ask the transport to disconnect. On the queue's own
  // thread (QueueLink::on_owner_thread) the controller is forgotten at once; from another poll
  // group it is only marked freed (an atomic the queue's next command reads) and the queue keeps
  // the Controller alive until it goes away, so NVM I/O running meanwhile never sees it freed
  // under it.
  void controller_freed();
  // Asks the transport to tear this queue down (any thread; see QueueLink::request_disconnect).
  void disconnect(std::string_view reason) { link_.request_disconnect(reason); }
  // Admin queue: completes held Async Event Requests with the controller's queued events, one
  // each, oldest first (success, DW0 = the event). Owner thread; takes the control lock.
  void deliver_events();
  // Any thread, under the control lock: the controller queued an event. Delivered now on the
  // owner thread, else at the owner's next round (QueueLink::wake_for_events).
  void request_event_delivery();
  // The poll group's IoEngine for file-backed namespaces (null: the namespace's own).
  void set_engine(IoEngine* engine) { engine_ = engine; }

  // True once a Connect succeeded on this queue (it stays true after the controller is freed).
  bool connected() const { return state_ == ConnectState::kConnected; }
  // Connected, but the host has a DH-HMAC-CHAP key and this queue's authentication has not
  // succeeded yet: only Authentication Send/Receive are served (the transport's Connect deadline
  // still runs).
  bool awaiting_authentication() const { return unauthenticated_; }
  // Async Event Requests held, waiting for an event (at most AERL + 1).
  size_t aers_held() const { return held_aers_.size(); }

  uint16_t qid() const { return qid_; }
  uint32_t queue_size() const { return queue_size_; }
  // RDMA READs whose completion came without their data (read_data_missing()).
  uint64_t reads_without_data() const { return reads_without_data_; }
  Controller* controller() const {
    return freed_.load(std::memory_order_acquire) ? nullptr : controller_.get();
  }
  QueueLink& link() { return link_; }
  QueueCounters& counters() { return counters_; }

 private:
  enum class ConnectState : uint8_t { kNone, kInProgress, kConnected };

  // Dispatch.
  NextStep begin_unconnected(Request& r);
  NextStep begin_fabrics(Request& r);
  NextStep begin_admin(Request& r);
  NextStep begin_io(Request& r);

  // Data phase helpers: decode SGL1 into r.sgl (status on failure).
  uint16_t decode_sgl(Request& r);
  // Controller-to-host data of `bytes` (must be <= r.buffer.size()) prepared in r.buffer.
  NextStep respond_with_data(Request& r, uint32_t bytes);
  // Host-to-controller data of `bytes`: runs `op` now when in-capsule, else asks for a READ
  // (after stamp_read_sentinels()).
  NextStep receive_data(Request& r, uint32_t bytes, PendingOp op);
  // A successful RDMA READ completion is not taken on trust: soft-RoCE (rxe, Linux 6.1.192 at
  // least) completes a READ with IBV_WC_SUCCESS when its QP fails mid-READ (its completer's
  // error path, then the QP is moved to the error state and the rest is flushed), with none or
  // only part of the data placed. Executing that write would store whatever the buffer held: on
  // a shared chunk, the data of an earlier command, i.e. another LBA's blocks, silently, and for
  // a host that is gone nobody ever writes the LBA again. So before the READ is posted a random
  // 64-bit word (r.read_sentinel, new per READ) is stamped at the start of every 512 bytes of
  // r.buffer[0, transfer_bytes) and in its last 8 bytes; a READ that placed its data overwrote
  // them all (RDMA places a READ's data in order, so a short one leaves the tail). A false alarm
  // needs the host's data to hold that word at one of those places (2^-64 per word).
  void stamp_read_sentinels(Request& r);
  // The byte offset of the first sentinel still in r.buffer, or -1: every one was overwritten.
  int64_t read_data_missing(const Request& r) const;
  NextStep finish_pending(Request& r, const uint8_t* contiguous);
  void copy_payload(const Request& r, const uint8_t* contiguous, std::span<uint8_t> dst) const;

  // Fabrics.
  NextStep connect(Request& r, const proto::ConnectData& data);
  NextStep connect_admin(Request& r, Subsystem& chosen, const proto::ConnectCommand& c,
                         const proto::ConnectData& data);
  NextStep connect_io(Request& r, Subsystem& chosen, const proto::ConnectCommand& c,
                      const proto::ConnectData& data);
  NextStep property_get(Request& r);
  NextStep property_set(Request& r);
  // DH-HMAC-CHAP (target/auth.h): Authentication Send/Receive, and what Connect sets up.
  NextStep auth_send(Request& r);
  NextStep auth_send_data(Request& r, const uint8_t* contiguous);
  NextStep auth_receive(Request& r);
  // After a Connect to `chosen` by `hostnqn` succeeded: the host has a key there, so the queue
  // needs authentication (AUTHREQ.ATR in DW0).
  void require_authentication(Request& r, const Subsystem& chosen, const std::string& hostnqn);
  // Follows the responder's verdict; logs a failure once per host per limiter window.
  void auth_settled();

  // Admin.
  NextStep identify(Request& r);
  NextStep get_log_page(Request& r);
  // The ANA log page (0Ch) of this controller's port, `bytes` of it from LPO; RGO (LSP bit 0).
  NextStep ana_log_page(Request& r, uint64_t bytes);
  NextStep set_features(Request& r);
  NextStep get_features(Request& r);
  NextStep async_event_request(Request& r);

  // Discovery controller admin commands (discovery_commands.cc).
  NextStep begin_discovery(Request& r);
  NextStep discovery_identify(Request& r);
  NextStep discovery_log_page(Request& r);

  // NVM I/O.
  NextStep read_write(Request& r, bool is_write);
  NextStep flush(Request& r);
  NextStep write_data(Request& r, const uint8_t* contiguous);
  NextStep write_zeroes(Request& r);
  NextStep dataset_management(Request& r);
  NextStep dsm_ranges_arrived(Request& r, const uint8_t* contiguous);
  // The namespace `nsid` names in this subsystem; null when it is not active.
  Namespace* find_namespace(uint32_t nsid) const;
  // The namespace of a command past its first step: r.nsid's, when it is still the one the
  // command started on (r.ns_serial); null when it was removed (or replaced) meanwhile.
  Namespace* namespace_of(const Request& r) const;
  // Fills r.io for `ns` and submits it; returns kBackend.
  NextStep submit_io(Request& r, Namespace& ns, IoOp op, uint64_t offset, uint64_t length,
                     uint8_t* data);
  // Flush (r.step: the NSID of the namespace flushed last, for the broadcast NSID, walked in
  // ascending order so that a namespace added or removed meanwhile shifts nothing) and the
  // CC.SHN flush.
  NextStep flush_next(Request& r);
  NextStep shutdown_next(Request& r);
  // Dataset Management deallocate: the ranges from r.step on.
  NextStep dsm_next(Request& r);
  // Completes `r` with the status for r.io.result and logs it (rate-limited).
  NextStep io_failed(Request& r, IoCommand command);

  NextStep complete(Request& r, uint16_t status);
  // Completes a refused Connect with `status` and DW0 (IATTR/IPO); logs `why` at INFO.
  NextStep connect_failed(Request& r, uint16_t status, uint32_t dw0, std::string_view why);
  // The Connect passed every check: the queue now belongs to `chosen` and `ctrl`, its SQHD wraps
  // at `sqsize` + 1.
  void bind(Subsystem& chosen, Controller* ctrl, uint16_t sqsize);
  // "controller N: asynchronous event 0x... (log page L) sent", rate-limited.
  void log_event_sent(uint32_t dw0) const;
  // Completes every held Async Event Request with `status` (controller reset or shutdown).
  void complete_held_aers(uint16_t status);

  Subsystem* subsystem_;  // the one given, until Connect selects one from its port by SUBNQN
  Port* port_ = nullptr;  // the port the queue came in on (set_port)
  // The ANA states of the bound subsystem on that port (bind()); null when used without a port.
  std::shared_ptr<const AnaStates> ana_;
  QueueLink& link_;
  QueueCounters& counters_;
  StatusCounters& statuses_;
  uint16_t qid_;
  uint32_t queue_size_;
  uint32_t in_capsule_area_bytes_;
  uint32_t sq_entries_;  // SQHD modulus: queue_size_, then the Connect's SQSIZE + 1
  uint16_t sq_head_ = 0;
  bool sqhd_disabled_ = false;  // Connect CATTR asked: SQHD FFFFh in every CQE (nvmet)
  ConnectState state_ = ConnectState::kNone;
  std::vector<Request*> held_aers_;  // capacity AERL + 1, reserved up front (admin queue)
  uint32_t io_errors_logged_ = 0;
  uint64_t reads_armed_ = 0;         // READs stamped (stamp_read_sentinels), for the sentinel
  uint64_t reads_without_data_ = 0;  // READ completions that came without their data
  std::shared_ptr<Controller> controller_;
  // controller_freed() from another poll group: treat controller_ as null (it stays set only to
  // keep the Controller alive until this queue goes).
  std::atomic<bool> freed_{false};
  bool bound_ = false;  // counted in subsystem_'s bound queues (bind() to the destructor)
  // DH-HMAC-CHAP: the queue's transaction state (null: its host has no key), and whether it must
  // still authenticate before other commands.
  std::unique_ptr<AuthResponder> auth_;
  bool unauthenticated_ = false;
  uint32_t auth_failures_seen_ = 0;
  IoEngine* engine_ = nullptr;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_COMMAND_PROCESSOR_H_
