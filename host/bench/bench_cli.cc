// SPDX-License-Identifier: BSD-3-Clause
// The `nvmf-host bench` subcommand; see bench_cli.h.
#include "host/bench/bench_cli.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "common/cli_alias.h"
#include "host/bench/bench.h"
#include "host/cli/cli_util.h"
#include "host/controller.h"

namespace nvmf::host {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }

int runtime_error(const char* what, const Status& st) {
  std::fprintf(stderr, "nvmf-host: bench: %s: %s\n", what, st.to_string().c_str());
  return kExitRuntime;
}

}  // namespace

CLI::App* add_bench_subcommand(CLI::App& app, BenchArgs& a) {
  CLI::App* b = app.add_subcommand(
      "bench", "fio-like benchmark: IOPS, bandwidth, completion latency percentiles");
  b->add_option("--rw", a.rw, "read|write|randread|randwrite|randrw")->capture_default_str();
  b->add_option("--rwmixread", a.rwmixread, "% reads for randrw")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  b->add_option("--bs", a.bs, "block size, or a list to sweep: 4k,8k,16k")->capture_default_str();
  b->add_option("--iodepth", a.iodepth, "commands in flight per job")
      ->capture_default_str()
      ->check(CLI::Range(1, 1023));
  CLI::Option* numjobs = b->add_option("--numjobs", a.numjobs, "jobs: one I/O queue each")
                             ->capture_default_str()
                             ->check(CLI::Range(1, 64));
  // An older spelling, kept working but not shown in --help.
  add_hidden_alias(*b, "--queues", a.numjobs, numjobs, CLI::Range(1, 64));
  b->add_option("--threads", a.threads,
                "threads driving the jobs round robin (job j on thread j % N); 0: one per job")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  b->add_option("--runtime", a.runtime, "measured seconds per block size")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  b->add_option("--ramp_time", a.ramp_time, "seconds of I/O before measuring")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  b->add_option("--start-at", a.start_at,
                "Unix time (s) before which no I/O starts, after connecting: bench processes "
                "started apart measure the same window; 0: at once")
      ->capture_default_str();  // checked by check_bench_args(): one message for every odd value
  b->add_option("--size", a.size, "bytes per job (default: namespace / numjobs)");
  b->add_flag("--verify", a.verify, "write a pattern with a header per LBA, check it on read");
  b->add_option("--poll", a.poll, "busy|event completion polling")
      ->capture_default_str()
      ->check(CLI::IsMember({"busy", "event"}));
  b->add_option("--output-format", a.output_format, "normal|json (json: --json on stdout)")
      ->capture_default_str()
      ->check(CLI::IsMember({"normal", "json"}));
  b->add_option("--json", a.output, "JSON report into FILE; no FILE or - : on stdout")
      ->expected(0, 1)
      ->type_name("[FILE]");
  // fio's --output (the report file) was taken here once, but read's --output is the data file:
  // refused with a message naming --json (bench_usage_error()), not shown in --help.
  b->add_option("--output", a.old_output)->group("");
  return b;
}

Status check_bench_args(const CLI::App& bench, BenchArgs& a) {
  if (bench.get_option("--output")->count() > 0) {
    return Status::invalid_argument(
        "--output is not a bench option any more: the report file is --json FILE (JSON); "
        "the text report is on stdout");
  }
  NVMF_RETURN_IF_ERROR(check_bench_threads(a.numjobs, a.threads));
  // CLI11's Range and NonNegativeNumber let "nan" through (every comparison with it is false).
  if (std::isnan(a.runtime)) return Status::invalid_argument("--runtime takes seconds, not nan");
  if (std::isnan(a.ramp_time)) {
    return Status::invalid_argument("--ramp_time takes seconds, not nan");
  }
  if (!std::isfinite(a.start_at) || a.start_at < 0) {
    return Status::invalid_argument("--start-at takes Unix seconds (date +%s), not " +
                                    std::to_string(a.start_at));
  }
  if (a.start_at == 0) a.start_at = 0;  // -0 as 0 (the JSON would show -0.0)
  // A typo (milliseconds, a year off) would otherwise leave the run connected and silent.
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (a.start_at > now_s + kMaxStartAheadS) {
    return Status::invalid_argument(
        "--start-at " + std::to_string(static_cast<int64_t>(a.start_at)) + " is " +
        std::to_string(static_cast<int64_t>(a.start_at - now_s)) +
        " s ahead, more than an hour: it takes Unix seconds (date +%s)");
  }
  NVMF_ASSIGN_OR_RETURN(a.rw_mode, parse_rw(a.rw));
  NVMF_ASSIGN_OR_RETURN(a.bs_list, parse_bs_list(a.bs));
  a.size_bytes = 0;
  if (!a.size.empty()) {
    NVMF_ASSIGN_OR_RETURN(a.size_bytes, parse_size(a.size, "--size"));
    if (a.size_bytes == 0) return Status::invalid_argument("--size is 0");
  }
  if (bench.get_option("--json")->count() > 0) {
    a.output_format = "json";
    if (a.output == "-") a.output.clear();  // stdout
  } else {
    a.output.clear();
  }
  return ok_status();
}

int cmd_bench(HostOptions opts, const BenchArgs& a) {
  BenchOptions o;
  // The report is written after the run: find out now, not after it, that it cannot be.
  if (!a.output.empty()) {
    if (Status st = check_writable(a.output, "--json"); !st.ok())
      return runtime_error("report", st);
  }
  o.rw = a.rw_mode;  // parsed by check_bench_args()
  o.bs = a.bs_list;
  o.size = a.size_bytes;
  o.rwmixread = a.rwmixread;
  o.iodepth = a.iodepth;
  o.numjobs = a.numjobs;
  o.threads = a.threads;
  o.runtime_s = a.runtime;
  o.ramp_time_s = a.ramp_time;
  o.start_at_unix_s = a.start_at;
  o.verify = a.verify;
  o.progress = isatty(STDERR_FILENO) == 1;
  o.stop = &g_stop;
  opts.poll_mode = a.poll == "event" ? PollMode::kEvent : PollMode::kBusy;
  opts.num_io_queues = static_cast<uint16_t>(a.numjobs);
  opts.queue_size = static_cast<uint16_t>(std::max<uint32_t>(opts.queue_size, a.iodepth + 1));

  // One path, or with -x multipath every path with its share of the jobs.
  std::unique_ptr<MultipathController> multi;
  std::unique_ptr<Controller> single;
  std::vector<BenchPath> paths;
  std::vector<uint32_t> jobs_per_path;
  if (a.multipath) {
    auto m = MultipathController::connect(opts, a.iopolicy);
    if (!m.ok()) return runtime_error("connect", m.status());
    multi = *std::move(m);
    std::vector<uint8_t> states;
    for (const PathStats& p : multi->path_stats()) paths.push_back({nullptr, p.path});
    for (size_t i = 0; i < paths.size(); ++i) {
      paths[i].c = multi->controllers()[i];
      states.push_back(paths[i].c->ana_state());
    }
    Result<std::vector<uint32_t>> spread = bench_jobs_per_path(states, a.iopolicy, o.numjobs);
    if (!spread.ok()) {
      (void)multi->disconnect();
      return runtime_error("bench", spread.status());
    }
    jobs_per_path = *spread;
  } else {
    auto c = Controller::connect(opts);
    if (!c.ok()) return runtime_error("connect", c.status());
    single = *std::move(c);
    paths.push_back({single.get(), opts.traddr + ":" + opts.trsvcid});
    jobs_per_path.push_back(o.numjobs);
  }
  Controller& ctrl = *paths.front().c;
  auto disconnect_all = [&] { return multi ? multi->disconnect() : ctrl.disconnect(); };
  for (size_t p = 0; p < paths.size(); ++p) {
    if (jobs_per_path[p] == 0) continue;
    Result<uint64_t> region = bench_region_bytes(*paths[p].c, o);
    if (!region.ok()) {
      (void)disconnect_all();
      return host_usage_error("bench", region.status().message());
    }
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  Result<BenchReport> report =
      multi ? run_multipath_bench(paths, jobs_per_path, o) : run_bench(ctrl, o);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  Negotiation negotiation = ctrl.negotiation();
  if (report.ok()) report->recovery = ctrl.recovery_stats();
  const ControllerState state_at_end = ctrl.state();  // disconnect() makes it "deleting"
  Status shutdown = disconnect_all();
  const HostStats host_stats = ctrl.stats();  // the keep-alive thread has stopped
  if (!report.ok()) return runtime_error("setup", report.status());
  report->poll = a.poll;
  std::string text;
  if (a.output_format == "json") {
    nlohmann::json j = bench_json(*report);
    // The controller's state and paths as well, named as in identify/read/write --json: when
    // every path is gone the report says so ("state" "deleting", each path, "failovers").
    const nlohmann::json recovery = recovery_json(state_at_end, report->recovery, opts);
    for (const auto& item : recovery.items()) {
      if (!j["recovery"].contains(item.key())) j["recovery"][item.key()] = item.value();
    }
    j["negotiation"] = negotiation_json(negotiation);
    j["target"] = {{"traddr", opts.traddr}, {"trsvcid", opts.trsvcid}, {"subnqn", opts.subnqn}};
    j["keep_alive"] = {{"kato_ms", opts.kato_ms},
                       {"sent", host_stats.keep_alives},
                       {"failed", host_stats.keep_alive_failures}};
    text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    text = bench_text(*report);
    if (report->recovery.losses > 0) {
      text += "recovery: " + std::to_string(report->recovery.losses) + " lost, " +
              std::to_string(report->recovery.reconnects) + " reconnected, " +
              std::to_string(report->retried_ios) + " I/Os sent again, longest completion " +
              std::to_string(report->longest_clat_ns / 1000000) + " ms\n";
    }
    text += "keep alive: KATO " + std::to_string(opts.kato_ms) + " ms, " +
            std::to_string(host_stats.keep_alives) + " sent, " +
            std::to_string(host_stats.keep_alive_failures) + " failed\n";
  }
  if (a.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    std::ofstream out(a.output);
    out << text;
    out.close();
    if (!out) return runtime_error("report", Status::from_errno("write " + a.output, errno));
  }
  if (!report->status.ok()) return runtime_error("run", report->status);
  if (report->verify_errors != 0) {
    return runtime_error("verify",
                         Status::io(std::to_string(report->verify_errors) +
                                    " reads did not verify: " + report->verify_first_error));
  }
  if (!shutdown.ok()) return runtime_error("disconnect", shutdown);
  return kExitOk;
}

}  // namespace nvmf::host
