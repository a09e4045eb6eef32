// SPDX-License-Identifier: BSD-3-Clause
// TargetOptions: everything the target library needs, filled by the CLI or a test.
#ifndef NVMF_TARGET_TARGET_OPTIONS_H_
#define NVMF_TARGET_TARGET_OPTIONS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "target/ana.h"
#include "target/auth.h"
#include "target/io_engine.h"

namespace nvmf::target {

inline constexpr char kDefaultSubnqn[] = "nqn.2024-01.io.nvmf-rdma:target";

// A further namespace of a subsystem: a file or a block device (file_path), or RAM (ram_size).
struct NamespaceOptions {
  uint32_t nsid = 0;  // 1..0xFFFFFFFE, distinct within the subsystem
  std::string file_path;
  uint64_t file_size = 0;                        // create/extend a file to this size (0: as it is)
  uint64_t ram_size = 0;                         // bytes of RAM, when file_path is empty
  std::optional<bool> direct_io;                 // O_DIRECT; unset: TargetOptions::direct_io
  std::optional<std::array<uint8_t, 16>> nguid;  // unset: derived from the NQN and NSID
  std::optional<std::array<uint8_t, 16>> uuid;
  uint32_t anagrpid = kDefaultAnaGroup;  // ANA group, 1..kMaxAnaGroups (nvmetcli ana.grpid)
};

// One NVM subsystem with its namespaces, as an nvmetcli config describes it (target/config.h).
// Empty strings and zero mean "the target's default".
struct SubsystemOptions {
  std::string nqn;
  bool allow_any_host = true;
  std::vector<std::string> allowed_hosts;  // host NQNs admitted when !allow_any_host
  std::string serial;                      // Identify SN (at most 20 characters)
  std::string model;                       // Identify MN (at most 40)
  std::string firmware;                    // Identify FR (at most 8)
  uint32_t version = 0;                    // VS, e.g. 0x00010300
  uint16_t cntlid_min = 1;
  uint16_t cntlid_max = 0xFFEF;
  // nvmet attr_qid_max: I/O queues per controller of this subsystem, at most
  // TargetOptions::max_io_queues; 0 = max_io_queues.
  uint16_t qid_max = 0;
  // The first namespace's backing: at most one of file_path (a file or a block device, used at
  // its size unless file_size is larger) or ram_size; neither: the subsystem starts without a
  // namespace (nvmet allows that; the control socket may add some), and more_namespaces is
  // empty.
  std::string file_path;
  uint64_t file_size = 0;
  uint64_t ram_size = 0;
  // O_DIRECT for this namespace (nvmetcli's buffered_io 0); unset: TargetOptions::direct_io.
  std::optional<bool> direct_io;
  std::optional<std::array<uint8_t, 16>> nguid;
  std::optional<std::array<uint8_t, 16>> uuid;
  uint32_t anagrpid = kDefaultAnaGroup;
  uint32_t nsid = 1;  // the NSID of the namespace described by the fields above
  std::vector<NamespaceOptions> more_namespaces;  // the subsystem's other namespaces
};

// One listening port (nvmet's port: an address, its in-capsule size and the subsystems it
// links), as an nvmetcli config's "ports" entry describes it.
struct PortOptions {
  uint16_t portid = 1;           // Discovery Log Page PORTID; distinct between ports
  std::string traddr;            // local IPv4/IPv6 address
  std::string trsvcid = "4420";  // "0" picks an ephemeral port
  uint8_t treq = 0;              // Discovery Log TREQ (proto::kTreqNotSpecified)
  // In-capsule data size of this port's queues, nvmet's param_inline_data_size meaning (bytes):
  // -1 = one page, 0 = off, larger values clamped as TargetOptions::inline_data_size.
  int32_t inline_data_size = -1;
  // NQNs of the subsystems linked to this port, each in TargetOptions::subsystems (or the one
  // single-subsystem NQN); empty: every subsystem of the target.
  std::vector<std::string> subsystems;
  // ANA group states of this port (nvmetcli's ana_groups[]: grpid, ana.state), applied to every
  // subsystem linked to it; groups not listed are optimized.
  std::vector<std::pair<uint32_t, AnaState>> ana_groups;
};

// How the event loop waits for work (CLI --poll).
//   kEvent: keeps polling for busy_poll_us after the last completion, then arms every CQ and
//           sleeps in epoll_wait until a completion, a CM event or stop(); no CPU while idle.
//           Mirrors nvmet-rdma (CQs driven by completion interrupts) with the socket
//           busy-poll window of net.core.busy_poll in front.
//   kBusy:  never sleeps: polls every CQ continuously and looks at the CM channel every 64
//           empty rounds; one core at 100 % even when idle. Mirrors SPDK's nvmf_tgt reactor.
enum class PollMode { kEvent, kBusy };
const char* poll_mode_name(PollMode mode);  // "event" or "busy"

// TargetOptions::cpu values besides a CPU number.
inline constexpr int32_t kCpuAuto = -1;  // pin the event loop to the CPU it starts on
inline constexpr int32_t kCpuNone = -2;  // leave the event loop thread to the scheduler

// Settings of one target: one listener, one subsystem, one namespace (nsid 1).
struct TargetOptions {
  std::string traddr;            // Local IPv4/IPv6 address to listen on (required).
  std::string trsvcid = "4420";  // Port; "0" picks an ephemeral one (see Target::port()).
  std::string subnqn = kDefaultSubnqn;

  // Namespace backing: exactly one of file_path or ram_size.
  std::string file_path;    // file or block device; a file is created and/or extended to
                            // file_size when > 0
  uint64_t file_size = 0;   // bytes; 0 = use the existing file's size
  uint64_t ram_size = 0;    // bytes of anonymous memory
  uint32_t lba_size = 512;  // 512 or 4096
  // File and block-device namespaces: true O_DIRECT (CLI --direct-io), false the page cache
  // (CLI --buffered-io); a config's buffered_io overrides it per namespace. Unset: nvmet's
  // default, O_DIRECT where the file system and LBA size allow it, else buffered with a warning
  // (FileBackingOptions::direct).
  std::optional<bool> direct_io;
  // Further file or block-device namespaces (nsid 2, 3, ... in order; CLI --file repeated),
  // each created/extended to file_size like file_path. Needs file_path.
  std::vector<std::string> more_file_paths;
  // How file and block-device I/O is executed (CLI --io-engine): io_uring, or worker threads.
  IoEngineKind io_engine = IoEngineKind::kAuto;
  // How each poll group's io_uring ring is set up (UringSetupOptions, target/io_engine.h): CLI
  // --uring-defer-taskrun (SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG, with the fallbacks on
  // older kernels), --uring-fixedbufs (each shared buffer pool registered as a fixed buffer,
  // READ_FIXED / WRITE_FIXED) and --uring-iopoll (an IOPOLL ring for polled block devices). What
  // the ring got is in Target::stats().io_engines.
  UringSetupOptions uring;

  // In-capsule data size per I/O command capsule, nvmet meaning (bytes): -1 = one page, 0 =
  // off, larger values clamped to max(16 KiB, page) and to the device's receive SGEs.
  int32_t inline_data_size = -1;
  uint32_t max_queue_size = 128;  // I/O queue entries offered (CAP.MQES + 1), 2..1024
  uint16_t max_io_queues = 4;     // I/O queues per controller, 1..64
  // Identify MDTS: max transfer 2^mdts * 4 KiB per command, 1..8. (MDTS 0 means "no limit" on
  // the wire, which a target with fixed-size data buffers cannot honestly advertise.)
  uint8_t mdts = 5;
  // Inline-send size asked for on each QP (IBV_SEND_INLINE for the 16-byte CQE), bytes; CLI
  // --max-inline-data. The QP wrapper falls back to 0 when the device refuses; 0 never posts a
  // response inline (even where the provider grants 16 for a request of 0, as rxe does).
  uint32_t requested_max_inline_data = 16;

  // Limits on what hosts can make the target hold (docs/target.md "Limits and their defaults"). A
  // CM request beyond max_pending_connections queues without a successful Connect is rejected with
  // NO_RSC
  // (--max-pending-connections, 1..65535); a queue with no successful Connect within
  // connect_timeout_ms of its CM accept is disconnected (--connect-timeout-ms, 100..3600000).
  // An admin Connect beyond max_controllers on the port or max_controllers_per_host for its
  // HOSTNQN from its peer address (NVM subsystems and discovery counted apart: discovery
  // controllers, which any host may open, never take an NVM subsystem's room, and a host NQN
  // claimed from another address takes nothing from the host that has it) gets Connect
  // Controller Busy
  // (--max-controllers, --max-controllers-per-host, 1..65519). nvmet has none of these.
  // A connecting Linux host holds one pending connection per I/O queue (nvme-rdma establishes
  // every I/O queue's CM connection before it sends their Connects): 128 lets 16 hosts with 8
  // I/O queues each connect at the same instant, at about 265 KiB a connection on rxe (33 MiB).
  uint32_t max_pending_connections = 128;
  // Of those, what one peer address may hold (--max-pending-connections-per-peer, 1..65535): a
  // CM request beyond it is rejected with NO_RSC whatever room the others leave. 32: a Linux host
  // connecting to several subsystems at once with 8 I/O queues each (its CM connections of one
  // controller are pending together) stays below it, and 96 places are left to other peers.
  uint32_t max_pending_connections_per_peer = 32;
  uint32_t connect_timeout_ms = 10000;
  uint32_t max_controllers = 128;
  uint32_t max_controllers_per_host = 32;
  // RDMA READs one queue may have outstanding (CLI --max-rdma-read-depth, 1..255): the initiator
  // depth given to rdma_accept is the lowest of this, the host's responder_resources and the
  // device's max_qp_init_rd_atom; READs beyond it wait in arrival order. 16 is what mlx5
  // devices report as max_qp_init_rd_atom; rxe reports 128, and the Linux host offers the
  // device's value, so on rxe this setting is what bounds a QD32 write burst.
  uint32_t max_rdma_read_depth = 16;
  // Local ACK timeout of each queue's QP (CLI --ack-timeout, 0..31; IBTA encoding: a work
  // request unacknowledged for 4.096 us x 2^N is retransmitted, up to retry_cnt times), set with
  // rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT) before rdma_accept; SPDK's transport_ack_timeout.
  // 0 (the default): rdma_cm's own (19, 2147 ms, on rxe). It bounds how long a response SEND or
  // RDMA READ whose packet or ACK the link lost waits before it is sent again: on soft-RoCE,
  // where packets of one QP can arrive out of order (docs/soft-roce.md), two rounds at 2147 ms
  // held shared buffers past a 5 s host timeout.
  uint32_t ack_timeout = 0;
  // Shared data buffers per RDMA device (CLI --num-shared-buffers, 0..65535, SPDK's
  // num_shared_buffers): chunks of the MDTS transfer size, registered once when the first
  // Connect is accepted, taken by commands that move data and given back at their response.
  // 256 x 128 KiB = 32 MiB. 0: every queue slot owns a buffer (queue_size x MDTS per queue).
  uint32_t num_shared_buffers = 256;
  // Shared receive queue (target/shared_receive_queue.h): one SRQ per RDMA device whose
  // receives every queue takes its command capsules from (CLI --srq on, the default; --srq off:
  // each queue posts hsqsize + 1 receives of its own, as SPDK without SRQ). On by default since
  // first-Connect times and the in-process suites measured the same with it on and off on a
  // quiet machine (docs/target.md "Resources a queue uses"). max_srq_depth
  // receives (CLI --max-srq-depth, 16..65535, SPDK's max_srq_depth and its default 4096), each 64
  // bytes + the largest in-capsule size of the ports, registered once: 4096 x (64 + 4096) = 16.3
  // MiB at one page, 64.3 MiB at 16 KiB. A device without SRQ (max_srq 0) falls back to per-queue
  // receives with one WARN.
  bool srq = true;
  uint32_t max_srq_depth = 4096;
  // A queue whose posted send work (RDMA READs, response SENDs) has had no completion for this
  // long, while it holds shared buffers that commands of any queue wait for or SRQ receives
  // (capsules parked for a free slot), is torn down (CLI
  // --send-stall-timeout-ms, 100..3600000; target/stall_watch.h). Such a queue has a host that
  // posts no receive for our responses (its CM REQUEST asked for RNR retry forever): without a
  // bound it would keep its chunks and receives, and starve every other host of data buffers
  // or receives (RNR), for as long as it stays connected. 30 s is the Linux host's default I/O
  // timeout (nvme_core io_timeout): a host that got no answer for that long has given up on those
  // commands anyway.
  uint32_t send_stall_timeout_ms = 30000;

  PollMode poll_mode = PollMode::kEvent;  // CLI --poll
  // kEvent only: microseconds to keep polling after the last completion before sleeping (CLI
  // --busy-poll-us), 0..1000000. A host at QD1 sends its next command one round trip after our
  // response; a window longer than that keeps the target awake between commands.
  uint32_t busy_poll_us = 1000;
  // Milliseconds a queue may have commands outstanding without handling any completion before
  // the target logs a WARN naming what they wait for (request states, receives posted,
  // send-queue and RDMA READ credits, backend operations, shared buffers, the QP's retry
  // settings), repeated at 2x, 4x, ... while it lasts; CLI --stall-warn-ms, 0 (off) or
  // 10..3600000. The per-queue "stalls" counter of the --json report counts them.
  uint32_t stall_warn_ms = 1000;
  // The control socket (target/rpc_server.h; CLI --rpc-socket PATH|none, default
  // default_rpc_socket_path()): a Unix socket, mode 0600, serving JSON-RPC 2.0 with SPDK's
  // method names (docs/target.md "Control socket"). Empty: none (the library's default).
  std::string rpc_socket;
  // The CPU the event loop thread runs on (CLI --cpu none|auto|N), like SPDK's reactors:
  // kCpuNone (the default) leaves the threads to the scheduler, kCpuAuto pins poll group i to
  // the ((i - 1) mod n)-th CPU of the allowed set (one group: the CPU it is on when run()
  // starts), N >= 0 pins the one group to CPU N (0..1023). Pinned, every work request of a QP is
  // posted from one CPU, and a Linux host on the same machine has each I/O queue answered from
  // the CPU that drives it (EventLoop::pin_thread): on soft-RoCE over a veth without Receive
  // Packet Steering that keeps its deep writes out of rxe's retransmit timer
  // (docs/soft-roce.md). Not the default: a pinned group cannot move away from busy threads
  // that share its CPU (a host busy-polling on the same small machine).
  int32_t cpu = kCpuNone;
  // Poll groups (CLI --poll-groups auto|N): threads that each own a set of queues, with their
  // own per-device PD, completion channel, shared buffer pool and SRQ (their shares of
  // num_shared_buffers and max_srq_depth: poll_group_shares()) and IoEngine, like SPDK's poll
  // groups. kPollGroupsAuto (0, the default) is resolved by Target::create() with
  // choose_poll_groups(): one group per CPU of the process's affinity mask (sched_getaffinity),
  // at most kMaxPollGroups, or one when `cpu` is a CPU number; 1..kMaxPollGroups runs that many.
  // Target::poll_groups() and the start-up log line say how many run and why. Group 0's thread
  // (run()'s) also listens: it gives a new admin queue to the group with the fewest queues and
  // an I/O queue to the group with the fewest I/O queues (least_loaded_group), and runs the
  // keep-alive timers.
  // poll_mode applies to each group. With more than one group, --cpu auto pins group i to the
  // i-th CPU of the allowed set, and a CPU number is refused (one group only).
  uint32_t poll_groups = 0;  // kPollGroupsAuto

  // Discovery Log entry fields of the listening port (nvmet addr_treq, portid).
  uint16_t portid = 1;
  uint8_t treq = 0;  // proto::kTreqNotSpecified
  // Subsystems from a config file. Empty: one subsystem from subnqn and the backing above.
  // Every subsystem shares the target's limits (queues, MDTS).
  std::vector<SubsystemOptions> subsystems;
  // Listening ports, each on its own rdma_cm listener, all served by the one event loop. Empty:
  // one port from traddr, trsvcid, portid, treq and inline_data_size above, linking every
  // subsystem. Given: those five fields are ignored.
  std::vector<PortOptions> ports;
  // DH-HMAC-CHAP keys by host NQN (nvmetcli hosts[].dhchap_*, or --dhchap-key for the hosts of
  // --allowed-host in the CLI mode). A host with a key must authenticate every queue of every NVM
  // subsystem it connects to (target/auth.h).
  HostKeys host_keys;
};

// The most poll groups TargetOptions::poll_groups may ask for (StatsRegistry keeps a gauge set
// per group), and the value that asks for one per allowed CPU.
inline constexpr uint32_t kMaxPollGroups = 64;
inline constexpr uint32_t kPollGroupsAuto = 0;

// How many poll groups a target runs, and why: the start-up log line and the --json report's
// "poll_groups" / "poll_groups_reason" ("2 poll groups (auto: 2 CPUs)").
struct PollGroupChoice {
  uint32_t groups = 1;  // 1..kMaxPollGroups
  std::string reason;   // "auto: 2 CPUs", "auto: 96 CPUs, at most 64", "--poll-groups 3", ...
};

// The CPUs in the calling thread's affinity mask (sched_getaffinity, CPU_COUNT); 0 when the call
// fails (then `auto` runs one group).
uint32_t allowed_cpu_count();

// Resolves options.poll_groups: N (1..kMaxPollGroups) as given; kPollGroupsAuto one group per
// CPU of `allowed_cpus` (allowed_cpu_count()), capped at kMaxPollGroups, one when allowed_cpus
// is 0 or options.cpu pins the one event loop thread to a CPU number. Call with options that
// passed validate_options().
PollGroupChoice choose_poll_groups(const TargetOptions& options, uint32_t allowed_cpus);

// What each of `groups` poll groups gets on each RDMA device.
//   shared_buffers: ceil(num_shared_buffers / groups) chunks of the MDTS transfer size, 0 when
//     num_shared_buffers is 0 (per-slot buffers). A command's data is one chunk, so one chunk is
//     what a queue needs to make progress: a group never gets fewer than 1 (with 64 groups and
//     the default 256, each group gets 4).
//   srq_depth: ceil(max_srq_depth / groups) receives, at least kMinSrqDepthPerGroup (with 64
//     groups and the default 4096, 64).
//   total_*: the sums over the groups, above the options when rounding up or the floors add
//     receives or chunks (Target::create() logs a WARN then: they are registered memory).
struct PollGroupShares {
  uint32_t shared_buffers = 0;
  uint32_t srq_depth = 0;
  uint64_t total_shared_buffers = 0;
  uint64_t total_srq_depth = 0;
};
// The fewest SRQ receives a poll group's SRQ gets (the --max-srq-depth minimum): a controller's
// admin queue holds up to AERL + 1 = 4 Asynchronous Event Requests (and their receives) for as
// long as no event comes, so a group needs more than that for its other queues' capsules.
inline constexpr uint32_t kMinSrqDepthPerGroup = 16;
PollGroupShares poll_group_shares(const TargetOptions& options, uint32_t groups);

// The ports to listen on: `options.ports`, or the one port the single-port fields describe.
std::vector<PortOptions> port_list(const TargetOptions& options);
// A subsystem's namespaces as one list: its first (when it has one), then more_namespaces;
// set_namespace_list() is the inverse (the first of `list` in the subsystem's own fields).
std::vector<NamespaceOptions> namespace_list(const SubsystemOptions& s);
void set_namespace_list(SubsystemOptions& s, std::vector<NamespaceOptions> list);

// Checks ranges and the one-backing rule. kInvalidArgument names the option ("--lba-size 1024
// is not 512 or 4096"). Every value is checked before anything missing is reported ("--traddr is
// required", no --file or --ram-size): the first mistake named is a bad value when there is one.
Status validate_options(const TargetOptions& options);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_TARGET_OPTIONS_H_
