// SPDX-License-Identifier: BSD-3-Clause
// Target: the NVMe over Fabrics RDMA target library's entry point (see ARCHITECTURE.md).
#ifndef NVMF_TARGET_TARGET_H_
#define NVMF_TARGET_TARGET_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "target/stats.h"
#include "target/target_options.h"  // IWYU pragma: export

namespace nvmf::target {

class EventLoop;
class IoEngine;
class RpcDispatcher;
class RpcServer;
class Namespace;
class Port;
class StatsRegistry;
class StatusCounters;
class Subsystem;
struct SubsystemConfig;

// One or more listeners (Ports, each on its own rdma_cm id) serving the discovery subsystem and
// one or more NVM subsystems, served by poll_groups().groups poll-group threads: group 0
// is the thread calling run() (it also listens), run() starts and joins the others.
//
//   NVMF_ASSIGN_OR_RETURN(auto target, Target::create(options));
//   std::thread loop([&] { status = target->run(); });
//   ... target->port(), target->stats() ...
//   target->stop(); loop.join();
class Target {
 public:
  // Validates `options`, opens the namespace backing, creates the rdma_cm listener, binds and
  // listens: port() is valid on return. Errors: kInvalidArgument (options), the backing's
  // system call errors, and rdma_cm errors (kUnavailable when no RDMA device is present or the
  // address is not on one).
  static Result<std::unique_ptr<Target>> create(const TargetOptions& options);
  // Stops (if running) and releases everything. Call after run() returned.
  ~Target();
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;

  // Serves connections until stop(); then disconnects every queue, frees every controller and
  // returns ok. An error return means a poll group failed (epoll, device removal); the others
  // are then stopped too.
  // Call once, from one thread.
  Status run();
  // Makes run() return soon. Thread-safe and async-signal-safe (an atomic store and a write to
  // an eventfd); may be called before run(), then run() returns at once.
  void stop();

  // How many poll groups run (TargetOptions::poll_groups resolved by choose_poll_groups()) and
  // why ("auto: 2 CPUs").
  const PollGroupChoice& poll_groups() const;
  // A consistent-enough snapshot of the counters; thread-safe, cheap (one mutex, no I/O).
  TargetStats stats() const;
  // The first port's service listened on (useful with trsvcid "0").
  uint16_t port() const;
  // "ADDR:PORT" of the first port as listened on.
  std::string listen_address() const;
  // Ports in TargetOptions::ports order (port_list).
  size_t port_count() const;
  uint16_t port(size_t index) const;
  std::string listen_address(size_t index) const;
  // Stops listening on port `index`: its rdma_cm listener is destroyed, so new connections to
  // it are refused by the host's rdma_cm (REJECTED, like a removed nvmet port); queues already
  // connected through it stay. Thread-safe (runs on the event loop at its next round); returns
  // once done. kInvalidArgument for an unknown index, kFailedPrecondition when run() is not
  // running.
  Status close_port(size_t index);
  // The options the target runs with (TargetOptions::poll_groups resolved).
  const TargetOptions& options() const { return options_; }
  // The control socket's path; empty when there is none (TargetOptions::rpc_socket).
  std::string rpc_socket_path() const;

 private:
  Target();
  // The control socket's methods (target/target_rpc.cc), registered on `d`.
  void add_rpc_methods(RpcDispatcher& d);
  // Waits until every poll group has passed the top of a round since the call
  // (EventLoop::at_next_round): what a change published before it replaced is no longer read.
  // False after `timeout` (a group stuck in a step). Not under the control lock (a group may be
  // waiting for it inside a step).
  bool quiesce_poll_groups(std::chrono::milliseconds timeout);
  // Live changes (target/target_live.cc), control socket thread. subsystem_named: null when
  // there is none. add_namespace opens `n` (a file, or RAM when file_path is empty) and
  // publishes it; remove_namespace unpublishes it and closes it once no group can reach it.
  // create_subsystem: no namespace, no port. delete_subsystem: unlinked, controllers freed,
  // freed itself once no queue is bound to it. Errors name what is wrong (kInvalidArgument,
  // kNotFound, the backing's system call errors).
  Subsystem* subsystem_named(std::string_view nqn) const;
  Result<uint32_t> add_namespace(Subsystem& sub, const NamespaceOptions& n);
  Status remove_namespace(Subsystem& sub, uint32_t nsid);
  Status create_subsystem(const SubsystemConfig& cfg);
  void delete_subsystem(Subsystem& s);
  // A port listening on a new address, on a running target (nvmf_subsystem_add_listener to an
  // address no port has): it shares the others' limits and discovery subsystem and links no
  // subsystem yet. Errors: kInvalidArgument (the address), those of EventLoop::add_listener
  // (the port is dropped; after kTimeout it stays, disabled, in case the loop takes it later).
  Result<Port*> add_port(const PortOptions& spec);
  // GENCTR of every port linking `s` moves on; discovery controllers that asked are told.
  void discovery_log_changed(const Subsystem& s);
  // The ANA log of `s` changed on every port linking it (a namespace joined, left or changed
  // its group): Port::ana_membership_changed on each. Under the control lock.
  void ana_membership_changed(Subsystem& s);
  // What every subsystem of this target has in common (queue limits, MDTS, controller limits).
  static SubsystemConfig subsystem_defaults(const TargetOptions& o);
  // A configured subsystem's settings: the defaults with what `spec` gives.
  static SubsystemConfig subsystem_config(const SubsystemOptions& spec, const TargetOptions& o);
  // A port for `spec` (TREQ with SQ flow control disable allowed, as nvmet), not yet grouped.
  std::unique_ptr<Port> make_port(const PortOptions& spec) const;
  // Every port's group: all of ports_ (under the control lock once the target runs).
  void regroup_ports();
  // Frees a subsystem taken out of subsystems_ (unlinked, its controllers freed) once no queue
  // is bound to it, then closes its namespaces (at most a few seconds; otherwise it is kept,
  // with a WARN, until the target is destroyed). Control socket thread.
  void free_subsystem(std::unique_ptr<Subsystem> subsystem);
  // Closes a namespace no poll group can find any more once its backend operations are done
  // (at most a few seconds; otherwise it is kept, with a WARN, and closed by a later call or
  // when the target is destroyed). Control socket thread.
  void close_namespace(const Namespace* ns);

  PollGroupChoice poll_groups_;
  TargetOptions options_;
  std::unique_ptr<IoEngine> io_engine_;  // first: destroyed after the namespaces and the loop
  std::unique_ptr<StatsRegistry> registry_;
  std::unique_ptr<StatusCounters> statuses_;
  std::vector<std::unique_ptr<Namespace>> namespaces_;
  std::vector<std::unique_ptr<Namespace>> retired_namespaces_;  // removed, I/O still in flight
  std::vector<std::unique_ptr<Subsystem>> subsystems_;
  std::vector<std::unique_ptr<Subsystem>> retired_subsystems_;  // deleted, queues still bound
  std::unique_ptr<Subsystem> discovery_;
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<const Port*> added_ports_;  // by add_port: closed when their last link goes
  // Poll groups 1..N-1 (group 0 is loop_): their IoEngines, status counters and loops.
  std::vector<std::unique_ptr<IoEngine>> group_engines_;
  std::vector<std::unique_ptr<StatusCounters>> group_statuses_;
  std::unique_ptr<EventLoop> loop_;                 // group 0, the listener
  std::vector<std::unique_ptr<EventLoop>> groups_;  // destroyed after the control socket
  std::unique_ptr<RpcDispatcher> rpc_methods_;
  std::unique_ptr<RpcServer> rpc_server_;  // last: destroyed first (its thread calls the rest)
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_TARGET_H_
