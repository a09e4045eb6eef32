// SPDX-License-Identifier: BSD-3-Clause
// HostOptions: everything the host library needs to connect to one NVMe-oF RDMA controller.
#ifndef NVMF_HOST_OPTIONS_H_
#define NVMF_HOST_OPTIONS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/dhchap.h"

namespace nvmf::host {

// How a queue waits for completions.
enum class PollMode {
  kBusy,   // Spin on ibv_poll_cq until the deadline: lowest latency, one CPU per waiter.
  kEvent,  // Arm the CQ and sleep on its completion channel; the better choice under emulation.
};

// "busy" / "event".
const char* poll_mode_name(PollMode mode);

// One transport address of the target: a path to the subsystem.
struct TransportPath {
  std::string traddr;
  std::string trsvcid = "4420";
  bool operator==(const TransportPath&) const = default;
};

// nvme-cli's --dhchap-secret (the host's key) and --dhchap-ctrl-secret (the controller's key:
// set, the host also checks the controller, bidirectional authentication). Base 2.0 §8.13.5.
struct DhchapSecrets {
  std::optional<dhchap::Secret> host;
  std::optional<dhchap::Secret> ctrl;
};

struct PdHolder;  // host/controller.h

// The 128-bit Host Identifier of Connect data (HOSTID, bytes 0..15), as stored on the wire.
// Base 2.0 §6.3 (Connect data).
using HostId = std::array<uint8_t, 16>;

// A random RFC 4122 version 4 UUID from /dev/urandom (std::random_device). Setup path only.
HostId random_host_id();
// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower-case hex).
std::string uuid_string(const HostId& id);
// The NVMe default host NQN for a host id: "nqn.2014-08.org.nvmexpress:uuid:<uuid>"
// (Base 2.0 §4.5 "NVMe Qualified Names", UUID format).
std::string default_hostnqn(const HostId& id);

// What a rescan after a Namespace Attribute Changed event found for one NSID (Linux's
// nvme_scan_ns_list: added, removed or resized namespaces).
struct NamespaceChange {
  enum class Kind : uint8_t { kAdded, kRemoved, kResized, kChanged };
  uint32_t nsid = 0;
  Kind kind = Kind::kChanged;
  uint64_t nsze = 0;      // LBAs now (0 when removed)
  uint32_t lba_size = 0;  // bytes now (0 when removed)
};
// "added", "removed", "resized", "changed".
const char* namespace_change_name(NamespaceChange::Kind kind);

// An Asynchronous Event the controller reported (AER completion DW0, Base 2.0 §5.2: type bits
// 2:0, information bits 15:8, log page bits 23:16), after the host read the log page it names.
struct AsyncEvent {
  uint8_t type = 0;      // 2: notice
  uint8_t info = 0;      // notice: 00h Namespace Attribute Changed, 03h ANA Change
  uint8_t log_page = 0;  // 04h Changed Namespace List, 0Ch ANA
  // Namespace Attribute Changed: the Changed Namespace List (04h) as read; {0xFFFFFFFF} when
  // more than 1023 namespaces changed.
  std::vector<uint32_t> changed_nsids;
  // Namespace Attribute Changed: each listed NSID identified again (every active and known one
  // when the list overflowed): what was added, removed, resized or otherwise changed.
  std::vector<NamespaceChange> namespaces;
};

// Connection parameters. The library does no argument parsing: the CLI fills this struct.
struct HostOptions {
  std::string traddr;            // Target IPv4/IPv6 address (required).
  std::string trsvcid = "4420";  // Target port (NVMe-oF RDMA default).
  std::string subnqn;            // Subsystem NQN (required).
  std::string hostnqn;           // Empty: "nqn.2014-08.org.nvmexpress:uuid:<hostid>".
  std::string host_traddr;       // Local source address; empty lets rdma_cm choose.
  // DH-HMAC-CHAP: every queue whose Connect response sets AUTHREQ.ATR authenticates with these
  // right after its Connect (host/auth.h); ATR without a host secret fails the connect.
  DhchapSecrets dhchap;
  uint16_t queue_size = 128;   // I/O queue entries (CM hrqsize; hsqsize = queue_size - 1).
  uint16_t num_io_queues = 1;  // I/O queues to connect (qid 1..N), capped by Set Features.
  // Keep Alive Timeout sent in the admin Connect, in ms; 0 = no keep-alive (the library's
  // default; nvmf-host's -k/--keep-alive-tmo defaults to 5 s like nvme-cli and Linux). When > 0
  // and send_keep_alive is set, the Controller sends Keep Alive on the admin queue every
  // kato_ms / 2 from its own thread, whatever other traffic there is (Linux's nvme_keep_alive
  // work does the same at KATO/2, or KATO/4 when it skips a round after traffic); each is due
  // one period after the previous one was due, its round trip not added (keep_alive_schedule.h).
  uint32_t kato_ms = 0;
  // false: no keep-alive thread; the caller sends Controller::keep_alive() itself (tests of the
  // target's timer use this to let a controller expire).
  bool send_keep_alive = true;
  int timeout_ms = 5000;  // Per command and per CM step (resolve, connect).
  // Local ACK timeout of every QP, 0..31: 4.096 us x 2^N before an unacknowledged SEND (a
  // command capsule) is sent again; set with rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT) before
  // rdma_connect. 0 = rdma_cm's own (19 = 2147 ms on rxe). SPDK's host calls this
  // transport_ack_timeout; nvmf-target has the same --ack-timeout for its QPs.
  uint8_t ack_timeout = 0;
  // max_inline_data asked of each QP (IBV_SEND_INLINE capsules). The QP wrapper retries without
  // inline send when the device refuses; 0 never asks.
  uint32_t requested_max_inline_data = 64;
  PollMode poll_mode = PollMode::kEvent;
  int shutdown_timeout_ms = 5000;  // Wait for CSTS.SHST = complete on disconnect().
  // Recovery of a lost association (Controller::write/read/flush; see controller.h), with
  // nvme-cli's names and Linux's defaults (NVMF_DEF_RECONNECT_DELAY, NVMF_DEF_CTRL_LOSS_TMO):
  // seconds between the loss and the first reconnect attempt, and between attempts.
  int reconnect_delay_s = 10;
  // Seconds after the loss after which reconnecting stops and the controller is deleted; -1
  // retries forever, 0 never reconnects.
  int ctrl_loss_tmo_s = 600;
  // Seconds after the loss after which a command waiting for the reconnect fails with Host
  // Pathing Error (SCT 3h SC 70h) while reconnecting goes on; -1 = off (wait for ctrl_loss_tmo).
  int fast_io_fail_tmo_s = -1;
  // Further paths to the same subsystem (nvmf-host -a A,B / -s S1,S2), tried in turn when the
  // current one is lost, like SPDK bdev_nvme's failover transport IDs: after a loss, one round
  // tries every path once, starting with the one after the lost path, at once when there is
  // more than one path (a single path waits reconnect_delay_s first, as Linux); further rounds
  // follow every reconnect_delay_s until ctrl_loss_tmo_s. Each path's association is a fresh
  // controller (new cntlid) of the same subsystem. Every path must be reachable through the
  // same local RDMA device as the first (registered buffers belong to its PD).
  std::vector<TransportPath> failover_paths;
  // Called with the new state (as controller_state_name() names it: "live", "resetting",
  // "connecting", "deleting") on every state change after the first live, from the thread that
  // made it: the recovery thread (losses, reconnects, reset()), the caller's for disconnect().
  // Must not call into the Controller.
  std::function<void(const char* state)> on_state_change;
  // Asynchronous events (Base 2.0 §5.2), as Linux's host: the controller enables the notices it
  // acts on (Set Features Asynchronous Event Configuration: Namespace Attribute and ANA Change,
  // as far as OAES offers them), keeps one Asynchronous Event Request outstanding on the admin
  // queue from its admin thread, reads the log page each event names (which re-arms the event:
  // RAE 0), keeps the ANA log it read, and calls on_async_event (from the admin thread; it must
  // not call into the Controller). The admin queue then waits on its completion channel.
  bool async_events = false;
  std::function<void(const AsyncEvent& event)> on_async_event;
  // The Host Identifier sent in Connect; unset: a random one per Controller. Controllers that
  // are paths of one host to one subsystem share it (host/multipath.h), as Linux's do.
  std::optional<std::array<uint8_t, 16>> hostid;
  // The protection domain to use (shared by several Controllers, so that one registered buffer
  // serves them all; every path must then go through the same RDMA device); null: its own.
  std::shared_ptr<PdHolder> pd;
};

// traddr:trsvcid first, then failover_paths.
std::vector<TransportPath> transport_paths(const HostOptions& options);

}  // namespace nvmf::host

#endif  // NVMF_HOST_OPTIONS_H_
