// SPDX-License-Identifier: BSD-3-Clause
// stats_report(): the --json report and nvmf_get_stats.
#include "target/stats_json.h"

#include <cstdio>
#include <string>
#include <vector>

#include "common/nvme_status.h"
#include "common/wire_text.h"
#include "target/port.h"

namespace nvmf::target {

nlohmann::json request_states_json(const CounterSnapshot& c) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < kRequestStateCount; ++i) {
    auto name = request_state_name(static_cast<RequestState>(i));
    j[std::string(name)] = {{"entered", c.state_entered[i]}, {"now", c.state_now[i]}};
  }
  return j;
}

namespace {

// One queue's inline-send outcome and response counters, merged into its "per_queue" entry.
nlohmann::json inline_send_json(const QueueStats& q) {
  return {{"requested_max_inline_data", q.requested_max_inline_data},
          {"granted_max_inline_data", q.granted_max_inline_data},
          {"usable_max_inline_data", q.usable_max_inline_data},
          {"inline_fallback", q.inline_fallback},
          {"commands", q.counters.commands},
          {"responses_inline", q.counters.responses_inline},
          {"responses_by_reference", q.counters.responses_by_reference}};
}

// One entry per port: portid, "ADDR:PORT" as listened on, the configured inline_data_size.
nlohmann::json ports_json(const Target& target, const TargetOptions& options) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<PortOptions> ports = port_list(options);
  for (size_t i = 0; i < target.port_count() && i < ports.size(); ++i) {
    out.push_back({{"portid", ports[i].portid},
                   {"listen", target.listen_address(i)},
                   {"configured_inline_data_size", ports[i].inline_data_size},
                   {"subsystems", ports[i].subsystems}});
  }
  return out;
}

// A queue's RDMA READ depth and send-queue accounting.
nlohmann::json depth_json(const QueueStats& q) {
  return {{"rdma_read_depth", q.rdma_read_depth},
          {"rdma_reads_in_flight_max", q.counters.rdma_reads_in_flight_max},
          {"rdma_read_waits", q.counters.rdma_read_waits},
          {"send_queue_depth", q.send_queue_depth},
          {"ack_timeout", q.ack_timeout},
          {"send_queue_waits", q.counters.send_queue_waits},
          {"buffer_waits", q.counters.buffer_waits},
          {"stalls", q.counters.stalls},
          {"request_states", request_states_json(q.counters)}};
}

// The file and block-device I/O engine: what was asked, and per poll group what it got (the
// io_uring setup flags after the fallbacks, fixed buffers in use).
nlohmann::json io_engine_json(const TargetStats& s, const TargetOptions& options) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& e : s.io_engines) {
    groups.push_back({{"group", e.group},
                      {"engine", e.name},
                      {"describe", e.describe},
                      {"setup_flags", uring_setup_flag_names(e.setup_flags)},
                      {"fixed_buffers", e.fixed_buffers},
                      {"fixed_operations", e.fixed_operations},
                      {"iopoll", e.iopoll},
                      {"polled_operations", e.polled_operations}});
  }
  return {{"requested", io_engine_kind_name(options.io_engine)},
          {"uring_defer_taskrun", options.uring.defer_taskrun},
          {"uring_fixedbufs", options.uring.fixed_buffers},
          {"uring_iopoll", options.uring.iopoll},
          {"per_group", groups}};
}

}  // namespace

nlohmann::json stats_report(const Target& target, const TargetOptions& options) {
  return stats_report(target, options, target.stats());
}

nlohmann::json stats_report(const Target& target, const TargetOptions& options,
                            const TargetStats& s) {
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& e : s.errors_by_status) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%04x", e.status);
    errors.push_back({{"status", hex}, {"name", nvmf::status_name(e.status)}, {"count", e.count}});
  }
  // Per controller and per queue, live and freed (a report written at exit sees mostly freed).
  auto writes = [](const CounterSnapshot& c) {
    return nlohmann::json{{"in_capsule", c.writes_in_capsule},
                          {"rdma_read", c.writes_rdma_read},
                          {"in_capsule_bytes", c.writes_in_capsule_bytes},
                          {"rdma_read_bytes", c.writes_rdma_read_bytes}};
  };
  nlohmann::json per_controller = nlohmann::json::array(), per_queue = nlohmann::json::array();
  for (const auto* list : {&s.freed_controllers, &s.controllers}) {
    for (const auto& c : *list) {
      per_controller.push_back({{"cntlid", c.cntlid},
                                {"hostnqn", nvmf::escape_wire_text(c.hostnqn)},
                                {"live", list == &s.controllers},
                                {"writes", writes(c.counters)}});
    }
  }
  for (const auto* list : {&s.freed_queues, &s.queues}) {
    for (const auto& q : *list) {
      nlohmann::json entry = {{"cntlid", q.cntlid},
                              {"qid", q.qid},
                              {"peer", nvmf::escape_wire_text(q.peer)},
                              {"group", q.group},
                              {"live", list == &s.queues},
                              {"writes", writes(q.counters)}};
      entry.update(inline_send_json(q));
      entry.update(depth_json(q));
      per_queue.push_back(std::move(entry));
    }
  }
  const auto& n = s.negotiation;
  return {
      {"listen", target.listen_address()},
      {"ports", ports_json(target, options)},
      {"poll", poll_mode_name(options.poll_mode)},
      {"busy_poll_us", options.busy_poll_us},
      {"stall_warn_ms", options.stall_warn_ms},
      {"cpu", options.cpu},
      {"poll_groups", target.poll_groups().groups},
      {"poll_groups_reason", target.poll_groups().reason},
      {"io_engine", io_engine_json(s, options)},
      {"subnqn", options.subsystems.empty() ? options.subnqn : options.subsystems[0].nqn},
      {"configured_inline_data_size", n.configured_inline_data_size},
      {"in_capsule_data_size", n.in_capsule_data_size},
      {"negotiation_warnings", n.warnings},
      {"ioccsz", n.ioccsz},
      {"sgls", n.sgls},
      {"icdoff", n.icdoff},
      {"msdbd", n.msdbd},
      {"mdts", n.mdts},
      {"max_transfer_bytes", n.max_transfer_bytes},
      {"writes",
       {{"in_capsule", s.totals.writes_in_capsule},
        {"rdma_read", s.totals.writes_rdma_read},
        {"in_capsule_bytes", s.totals.writes_in_capsule_bytes},
        {"rdma_read_bytes", s.totals.writes_rdma_read_bytes}}},
      {"reads", s.totals.reads},
      {"read_bytes", s.totals.read_bytes},
      {"flushes", s.totals.flushes},
      {"commands", s.totals.commands},
      {"errors", s.totals.errors},
      {"errors_by_status", errors},
      {"connections",
       {{"accepted", s.connections_accepted},
        {"rejected", s.connections_rejected},
        {"disconnections", s.disconnections}}},
      {"controllers", {{"created", s.controllers_created}, {"freed", s.controllers_freed}}},
      {"inline_send_fallbacks", s.inline_send_fallbacks},
      {"resources",
       {{"mr_bytes", s.resources.mr_bytes},
        {"mr_bytes_peak", s.resources.mr_bytes_peak},
        {"mrs", s.resources.mrs},
        {"posted_receives", s.resources.posted_receives},
        {"posted_receives_peak", s.resources.posted_receives_peak},
        {"srqs", s.resources.srqs},
        {"srq_receives", s.resources.srq_receives},
        {"srq_posted_now", s.resources.srq_posted_now},
        {"srq_posted_low", s.resources.srq_posted_low},
        {"srq_limit_events", s.resources.srq_limit_events},
        {"cqs", s.resources.cqs},
        {"cq_entries", s.resources.cq_entries},
        {"shared_buffers", s.resources.shared_buffers},
        {"shared_buffers_in_use", s.resources.shared_buffers_in_use},
        {"shared_buffers_in_use_peak", s.resources.shared_buffers_in_use_peak}}},
      {"requested_max_inline_data", options.requested_max_inline_data},
      {"responses",
       {{"inline", s.totals.responses_inline}, {"by_reference", s.totals.responses_by_reference}}},
      {"max_rdma_read_depth", options.max_rdma_read_depth},
      {"ack_timeout", options.ack_timeout},
      {"rdma_reads_in_flight_max", s.totals.rdma_reads_in_flight_max},
      {"rdma_read_waits", s.totals.rdma_read_waits},
      {"send_queue_waits", s.totals.send_queue_waits},
      {"num_shared_buffers", options.num_shared_buffers},
      {"srq", options.srq},
      {"max_srq_depth", options.max_srq_depth},
      {"buffer_waits", s.totals.buffer_waits},
      {"stalls", s.totals.stalls},
      {"request_states", request_states_json(s.totals)},
      {"per_controller", per_controller},
      {"per_queue", per_queue},
  };
}

}  // namespace nvmf::target
