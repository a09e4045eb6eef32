// SPDX-License-Identifier: BSD-3-Clause
// nvmf-target: command-line front end of the target library (thin: parse, run, report).
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/cli_alias.h"
#include "common/cli_usage.h"
#include "common/log.h"
#include "common/nvme_status.h"
#include "common/wire_text.h"
#include "target/cli_parse.h"
#include "target/config.h"
#include "target/memlock.h"
#include "target/rpc_server.h"
#include "target/startup_checks.h"
#include "target/stats_json.h"
#include "target/target.h"

namespace {

using nvmf::target::Target;
using nvmf::target::TargetOptions;
using nvmf::target::TargetStats;

// The second line of every usage error (common/cli_usage.h).
constexpr char kUsage[] =
    "nvmf-target -a ADDR (--file PATH [--size SIZE] | --ram-size SIZE) [OPTIONS], or "
    "nvmf-target --config FILE [OPTIONS] (try nvmf-target --help)";

// A bad command line: "nvmf-target: MESSAGE", the usage line, exit 2.
int usage(std::string_view message) { return nvmf::usage_error("nvmf-target", message, kUsage); }

std::atomic<Target*> g_target{nullptr};
std::atomic<bool> g_stop{false};  // a signal came, maybe before the target existed

void on_signal(int) {
  g_stop.store(true);
  if (Target* t = g_target.load()) t->stop();
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Parses the size options into `o`; kInvalidArgument naming the option on a bad value.
nvmf::Status apply_sizes(const std::string& size, const std::string& ram_size, TargetOptions& o) {
  for (auto [text, name, out] : {std::tuple{&size, "--size", &o.file_size},
                                 std::tuple{&ram_size, "--ram-size", &o.ram_size}}) {
    if (text->empty()) continue;
    auto v = nvmf::target::parse_size(*text, name);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  return nvmf::ok_status();
}

// `nvmf-target rpc [-s PATH] [-t SECONDS] METHOD [PARAMS]`: one JSON-RPC request to a running
// target's control socket, like SPDK's scripts/rpc.py. Prints the result (pretty JSON) on
// stdout and exits 0; a JSON-RPC error goes to stderr as "nvmf-target rpc: METHOD: MESSAGE
// (code N)" with exit 1; a bad command line exits 2.
int rpc_main(int argc, char** argv) {
  constexpr char kRpcUsage[] =
      "nvmf-target rpc [-s PATH] [-t SECONDS] METHOD ['{\"key\": value, ...}'] (try "
      "nvmf-target rpc --help)";
  std::string path = nvmf::target::default_rpc_socket_path(), method, params_text;
  unsigned timeout_s = 60;
  CLI::App app{
      "nvmf-target rpc: one JSON-RPC 2.0 request to a running nvmf-target's control "
      "socket (--rpc-socket); the result is printed as JSON",
      "nvmf-target rpc"};
  app.add_option("-s,--server", path, "the control socket")->capture_default_str();
  app.add_option("-t,--timeout", timeout_s, "seconds to wait for the answer (1..3600)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 3600u));
  app.add_option("method", method, "the method (rpc_get_methods lists them)")->required();
  app.add_option("params", params_text, "its parameters: one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return nvmf::usage_error("nvmf-target rpc", e.what(), kRpcUsage);
  }
  nlohmann::json request = {{"jsonrpc", "2.0"}, {"method", method}, {"id", 1}};
  if (!params_text.empty()) {
    nlohmann::json params = nlohmann::json::parse(params_text, nullptr, false);
    if (params.is_discarded() || !params.is_object()) {
      return nvmf::usage_error("nvmf-target rpc",
                               "PARAMS must be one JSON object, not '" + params_text + "'",
                               kRpcUsage);
    }
    request["params"] = std::move(params);
  }
  auto answer = nvmf::target::rpc_call(path, request.dump(), std::chrono::seconds(timeout_s));
  if (!answer.ok()) {
    std::cerr << "nvmf-target rpc: " << answer.status().message() << "\n";
    return 1;
  }
  nlohmann::json reply = nlohmann::json::parse(*answer, nullptr, false);
  if (reply.is_discarded() || !reply.is_object()) {
    std::cerr << "nvmf-target rpc: unreadable answer: " << *answer << "\n";
    return 1;
  }
  if (reply.contains("error")) {
    const nlohmann::json& e = reply["error"];
    std::cerr << "nvmf-target rpc: " << method << ": " << e.value("message", std::string("?"))
              << " (code " << e.value("code", 0) << ")\n";
    return 1;
  }
  std::cout << reply["result"].dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
            << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "rpc") return rpc_main(argc - 1, argv + 1);
  TargetOptions o;
  std::string size, ram_size, json_path, config_path, log_level = "info";
  bool verbose = false;
  CLI::App app{
      "nvmf-target: NVMe over Fabrics RDMA target (a subsystem and its namespaces from the "
      "options, or the ports and subsystems of an nvmetcli --config)",
      "nvmf-target"};
  app.allow_extras();  // the first argument CLI11 does not know is named below
  CLI::Option* config = app.add_option(
      "--config", config_path,
      "the JSON nvmetcli saves (/etc/nvmet/config.json): its ports, their subsystems (one "
      "namespace each) and allowed hosts; excludes -a, -s, -n, --file, --size, --ram-size and "
      "--inline-data-size");
  CLI::Option* traddr = app.add_option("-a,--traddr", o.traddr, "local address to listen on");
  CLI::Option* trsvcid = app.add_option("-s,--trsvcid", o.trsvcid, "port")->capture_default_str();
  CLI::Option* nqn = app.add_option("-n,--nqn", o.subnqn, "subsystem NQN")->capture_default_str();
  std::vector<std::string> files;
  CLI::Option* file = app.add_option("--file", files,
                                     "namespace backing: a file or a block device; repeat for "
                                     "namespaces 2, 3, ... (each sized by --size)");
  CLI::Option* size_opt =
      app.add_option("--size", size, "create/extend --file to this size (k/m/g suffixes)");
  CLI::Option* ram =
      app.add_option("--ram-size", ram_size, "RAM namespace of this size (k/m/g suffixes)");
  app.add_option("--lba-size", o.lba_size, "LBA size: 512 or 4096")->capture_default_str();
  CLI::Option* inline_size = app.add_option("--inline-data-size", o.inline_data_size,
                                            "in-capsule data bytes (-1 = one page, 0 = off)")
                                 ->capture_default_str();
  // The config file says these (addr, subsystems, namespaces, param.inline_data_size).
  for (CLI::Option* opt : {traddr, trsvcid, nqn, file, size_opt, ram, inline_size}) {
    config->excludes(opt);
  }
  // Neither flag: nvmet's default (buffered_io 0), O_DIRECT where the file system allows it.
  bool direct_io = false, buffered_io = false;
  CLI::Option* direct_opt = app.add_flag(
      "--direct-io", direct_io,
      "file and block-device namespaces bypass the page cache (O_DIRECT), and refuse to start "
      "where the file system cannot; without this flag or --buffered-io, O_DIRECT where it "
      "works (nvmet's default), else buffered with a warning; a config's buffered_io overrides "
      "both");
  app.add_flag("--buffered-io", buffered_io,
               "file and block-device namespaces go through the page cache (nvmetcli's "
               "buffered_io 1)")
      ->excludes(direct_opt);
  std::string io_engine = "auto";
  app.add_option("--io-engine", io_engine,
                 "file and block-device I/O: uring (io_uring), threads (worker threads), or auto "
                 "(io_uring, else threads with a warning)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "uring", "threads"}));
  std::string defer_taskrun = "off", fixedbufs = "off", iopoll = "off";
  app.add_option("--uring-defer-taskrun", defer_taskrun,
                 "on: each io_uring ring asks for SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG "
                 "(Linux 6.1; falls back to SINGLE_ISSUER, then none, on older kernels): "
                 "completions are run when the poll group asks, not as task work that interrupts "
                 "it; --json says what the ring got")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--uring-fixedbufs", fixedbufs,
                 "on: each shared data buffer pool is registered with io_uring as a fixed buffer "
                 "and reads and writes into it use READ_FIXED / WRITE_FIXED (fio's fixedbufs; "
                 "Linux 5.19, else plain reads and writes with a log line)")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--uring-iopoll", iopoll,
                 "on: each poll group gets a second io_uring ring with IORING_SETUP_IOPOLL, and "
                 "reads and writes (not FUA writes) of O_DIRECT block devices whose queue polls "
                 "(queue/io_poll 1: nvme poll_queues, null_blk poll_queues) complete by polling "
                 "the device from the poll group (fio's hipri), not by interrupt; the poll group "
                 "never sleeps while one is outstanding")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--queue-size", o.max_queue_size, "I/O queue entries offered")
      ->capture_default_str();
  app.add_option("--max-io-queues", o.max_io_queues, "I/O queues per controller")
      ->capture_default_str();
  CLI::Option* max_inline =
      app.add_option("--max-inline-data", o.requested_max_inline_data,
                     "max_inline_data asked of each QP for inline send (IBV_SEND_INLINE) of the "
                     "16-byte responses; 0 = never; a refused size falls back to 0")
          ->capture_default_str();
  // The older name, kept working but not shown (CLI11 hides group "").
  nvmf::add_hidden_alias(app, "--requested-max-inline-data", o.requested_max_inline_data,
                         max_inline);
  app.add_option("--max-rdma-read-depth", o.max_rdma_read_depth,
                 "RDMA READs outstanding per queue, at most (also capped by the host's "
                 "responder_resources and the device); more wait in arrival order")
      ->capture_default_str();
  app.add_option("--ack-timeout", o.ack_timeout,
                 "local ACK timeout of each queue's QP, 4.096 us x 2^N before a lost SEND or "
                 "RDMA READ is sent again (0..31; 0 = rdma_cm's, 19 on rxe)")
      ->capture_default_str();
  app.add_option("--num-shared-buffers", o.num_shared_buffers,
                 "data buffers (MDTS bytes each) shared by every queue of a device; commands "
                 "wait for one when all are in use; 0 = one per queue slot")
      ->capture_default_str();
  app.add_option("--max-srq-depth", o.max_srq_depth,
                 "receives in each device's shared receive queue (SRQ), shared by every queue "
                 "(16..65535; per poll group at most the device's max_cqe - 4096, 28671 on rxe)")
      ->capture_default_str();
  std::string srq = "on";
  app.add_option("--srq", srq,
                 "on: one shared receive queue (SRQ) per device for every queue's command "
                 "capsules (a device without SRQ: per-queue receives, with a warning); off: each "
                 "queue posts hsqsize + 1 receives of its own")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--max-pending-connections", o.max_pending_connections,
                 "connections waiting for their Connect; more are rejected at the CM (NO_RSC)")
      ->capture_default_str();
  app.add_option("--max-pending-connections-per-peer", o.max_pending_connections_per_peer,
                 "of those, connections one peer address may hold; more are rejected at the CM "
                 "(NO_RSC)")
      ->capture_default_str();
  app.add_option("--connect-timeout-ms", o.connect_timeout_ms,
                 "a connection with no successful Connect this long after its CM accept is "
                 "disconnected")
      ->capture_default_str();
  app.add_option("--send-stall-timeout-ms", o.send_stall_timeout_ms,
                 "a queue whose posted RDMA READs and response SENDs get no completion this long "
                 "(a host that posts no receives), while commands wait for the shared buffers it "
                 "holds or it holds shared receive queue receives, is disconnected")
      ->capture_default_str();
  app.add_option("--max-controllers", o.max_controllers,
                 "controllers on the port, NVM subsystems' and discovery's each; more get Connect "
                 "Controller Busy")
      ->capture_default_str();
  app.add_option("--max-controllers-per-host", o.max_controllers_per_host,
                 "controllers per host NQN from one peer address, NVM subsystems' and "
                 "discovery's each; more get Connect Controller Busy")
      ->capture_default_str();
  std::string cpu = "none";
  app.add_option("--cpu", cpu,
                 "CPU of each poll group thread: none (the scheduler's choice), auto (group i "
                 "on the (i-1 mod n)-th allowed CPU) or a CPU number (one poll group only)")
      ->capture_default_str();
  std::string poll_groups = "auto";
  app.add_option("--poll-groups", poll_groups,
                 "poll group threads, each owning a set of queues (new queues go to the "
                 "least-loaded group): auto (one per CPU the process may run on, at most 64; "
                 "one with --cpu N) or 1..64")
      ->capture_default_str();
  std::string poll = "event";
  CLI::Option* poll_opt =
      app.add_option(
             "--poll", poll,
             "event: sleep in epoll when idle, like nvmet-rdma; busy: poll the CQs and never "
             "sleep, one core at 100%, like SPDK")
          ->capture_default_str()
          ->check(CLI::IsMember({"busy", "event"}));
  // nvmf-host's older name for the same option, kept working but not shown.
  nvmf::add_hidden_alias(app, "--poll-mode", poll, poll_opt, CLI::IsMember({"busy", "event"}));
  CLI::Option* busy_poll_us =
      app.add_option("--busy-poll-us", o.busy_poll_us,
                     "--poll event: microseconds to keep polling after the last completion "
                     "before sleeping (0..1000000)")
          ->capture_default_str()
          ->check(CLI::Range(0u, 1000000u));
  app.add_option("--stall-warn-ms", o.stall_warn_ms,
                 "log a WARN when a queue has commands outstanding and no completion for this "
                 "many milliseconds (0 = off, 10..3600000)")
      ->capture_default_str();
  // Same meaning as nvmf-host's --json: the JSON report into FILE, on stdout without one.
  CLI::Option* json = app.add_option("--json", json_path,
                                     "write a JSON report on exit into FILE; no FILE or - : stdout")
                          ->expected(0, 1)
                          ->type_name("[FILE]");
  std::string rpc_socket = nvmf::target::default_rpc_socket_path();
  app.add_option("--rpc-socket", rpc_socket,
                 "the control socket (JSON-RPC 2.0, SPDK's method names; `nvmf-target rpc` is "
                 "its client), created mode 0600; none: no control socket")
      ->capture_default_str();
  std::vector<std::string> dhchap_keys, dhchap_ctrl_keys;
  std::string dhchap_hash, dhchap_dhgroup;
  app.add_option("--dhchap-key", dhchap_keys,
                 "HOSTNQN=DHHC-1:hh:...: that host must authenticate every queue with DH-HMAC-CHAP "
                 "(repeatable; nvme gen-dhchap-key makes keys; a --config file keeps them out of "
                 "ps)")
      ->type_name("HOSTNQN=KEY");
  app.add_option("--dhchap-ctrl-key", dhchap_ctrl_keys,
                 "HOSTNQN=DHHC-1:hh:...: the controller's key for that host (bidirectional)")
      ->type_name("HOSTNQN=KEY");
  app.add_option("--dhchap-hash", dhchap_hash,
                 "hash of every --dhchap-key host: hmac(sha256) (default), hmac(sha384), "
                 "hmac(sha512)");
  app.add_option("--dhchap-dhgroup", dhchap_dhgroup,
                 "DH group of every --dhchap-key host: null (default), ffdhe2048 ... ffdhe8192");
  app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "debug logging (--log-level debug)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage(e.what());
  }
  if (!app.remaining().empty()) {
    const std::string first = app.remaining().front();  // remaining() returns a copy
    return usage((first.rfind('-', 0) == 0 ? "unknown option '" : "unexpected argument '") + first +
                 "' (nvmf-target takes options only)");
  }
  if (json->count() > 0 && json_path.empty()) json_path = "-";
  // Every value is checked before anything missing is named (validate_options() last).
  auto level = nvmf::parse_log_level(log_level);  // checked with -v too
  if (!level.ok()) return usage("--log-level: " + level.status().message());
  nvmf::set_log_level(verbose ? nvmf::LogLevel::kDebug : *level);
  if (nvmf::Status st = apply_sizes(size, ram_size, o); !st.ok()) return usage(st.message());
  if (!files.empty()) {
    o.file_path = files.front();
    o.more_file_paths.assign(files.begin() + 1, files.end());
  }
  if (cpu == "auto") {
    o.cpu = nvmf::target::kCpuAuto;
  } else if (cpu == "none") {
    o.cpu = nvmf::target::kCpuNone;
  } else {
    unsigned n = 0;
    auto [end, ec] = std::from_chars(cpu.data(), cpu.data() + cpu.size(), n);
    if (ec != std::errc() || end != cpu.data() + cpu.size() || n > 1023) {
      return usage("--cpu " + cpu + " is not auto, none or 0..1023");
    }
    o.cpu = static_cast<int32_t>(n);
  }
  if (poll_groups == "auto") {
    o.poll_groups = nvmf::target::kPollGroupsAuto;
  } else {
    unsigned n = 0;
    auto [end, ec] =
        std::from_chars(poll_groups.data(), poll_groups.data() + poll_groups.size(), n);
    if (ec != std::errc() || end != poll_groups.data() + poll_groups.size() || n < 1 ||
        n > nvmf::target::kMaxPollGroups) {
      return usage("--poll-groups " + poll_groups + " is not auto or 1.." +
                   std::to_string(nvmf::target::kMaxPollGroups));
    }
    o.poll_groups = n;
  }
  o.srq = srq == "on";
  o.poll_mode = poll == "busy" ? nvmf::target::PollMode::kBusy : nvmf::target::PollMode::kEvent;
  o.io_engine = io_engine == "uring"     ? nvmf::target::IoEngineKind::kUring
                : io_engine == "threads" ? nvmf::target::IoEngineKind::kThreads
                                         : nvmf::target::IoEngineKind::kAuto;
  o.uring.defer_taskrun = defer_taskrun == "on";
  o.uring.fixed_buffers = fixedbufs == "on";
  o.uring.iopoll = iopoll == "on";
  if (o.poll_mode == nvmf::target::PollMode::kBusy && busy_poll_us->count() > 0) {
    std::cerr << "nvmf-target: warning: --busy-poll-us is for --poll event; --poll busy never "
                 "sleeps\n";
  }
  if (direct_io || buffered_io) o.direct_io = direct_io;
  if (!config_path.empty()) {
    auto loaded = nvmf::target::load_nvmet_config(config_path, o);
    if (!loaded.ok()) return usage("--config " + loaded.status().message());
    for (const auto& w : loaded->warnings) std::cerr << "nvmf-target: warning: " << w << "\n";
    o = std::move(loaded->options);
  }
  if (auto st = nvmf::target::apply_dhchap_options(dhchap_keys, dhchap_ctrl_keys, dhchap_hash,
                                                   dhchap_dhgroup, o.host_keys);
      !st.ok()) {
    return usage(st.message());
  }
  for (auto& v : dhchap_keys) nvmf::dhchap::cleanse(v.data(), v.size());
  for (auto& v : dhchap_ctrl_keys) nvmf::dhchap::cleanse(v.data(), v.size());
  o.rpc_socket = rpc_socket == "none" ? std::string() : rpc_socket;
  if (auto st = nvmf::target::validate_options(o); !st.ok()) return usage(st.message());
  // Before any device is opened: what the first Connect registers must fit RLIMIT_MEMLOCK.
  const uint32_t poll_group_count =
      nvmf::target::choose_poll_groups(o, nvmf::target::allowed_cpu_count()).groups;
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::string refusal =
      nvmf::memlock_refusal("nvmf-target",
                            nvmf::target::target_memlock_bytes(
                                o, poll_group_count, page > 0 ? static_cast<uint32_t>(page) : 4096),
                            nvmf::current_memlock_limit());
  if (!refusal.empty()) {
    std::cerr << refusal << "\n";
    return 1;
  }
  if (config_path.empty()) {
    const std::string notice = nvmf::target::any_host_notice(o);
    if (!notice.empty()) std::cerr << "nvmf-target: warning: " << notice << "\n";
  }
  // The report is written at exit: find out now, not after serving, that it cannot be.
  if (!json_path.empty() && json_path != "-" && !std::ofstream(json_path, std::ios::app)) {
    std::cerr << "nvmf-target: --json " << json_path
              << ": cannot open for writing: " << std::strerror(errno) << "\n";
    return 1;
  }
  install_signal_handlers();  // early: a SIGTERM during setup still means a clean exit 0
  auto target = Target::create(o);
  if (!target.ok()) {
    // A namespace backing refused as given (neither a file nor a block device, ...) is the
    // command line's fault; anything else failed at run time.
    if (target.status().code() == nvmf::StatusCode::kInvalidArgument) {
      return usage(target.status().message());
    }
    std::cerr << "nvmf-target: " << target.status().to_string() << "\n";
    return 1;
  }
  g_target.store(target->get());
  if (g_stop.load()) (*target)->stop();
  std::printf(
      "nvmf-target: limits: %u pending connections (%u per peer), Connect within %u ms, %u "
      "controllers, %u per host, %u I/O queues per controller\n",
      o.max_pending_connections, o.max_pending_connections_per_peer, o.connect_timeout_ms,
      o.max_controllers, o.max_controllers_per_host, unsigned{o.max_io_queues});
  // Before "listening on ADDR:PORT", whose last ':' the harnesses read the port after.
  const nvmf::target::PollGroupChoice& groups = (*target)->poll_groups();
  std::printf("nvmf-target: %u poll group%s (%s)\n", groups.groups, groups.groups == 1 ? "" : "s",
              groups.reason.c_str());
  std::printf("nvmf-target: listening on %s (poll %s)\n", (*target)->listen_address().c_str(),
              nvmf::target::poll_mode_name(o.poll_mode));
  const std::vector<nvmf::target::PortOptions> ports = nvmf::target::port_list(o);
  for (size_t i = 1; i < (*target)->port_count(); ++i) {
    std::printf("nvmf-target: also listening on %s (portid %u)\n",
                (*target)->listen_address(i).c_str(), unsigned{ports[i].portid});
  }
  std::fflush(stdout);
  nvmf::Status st = (*target)->run();
  if (json_path == "-") {
    std::cout << nvmf::target::stats_report(**target, o).dump(2) << std::endl;
  } else if (!json_path.empty()) {
    std::ofstream out(json_path);
    // Strings from hosts are escaped where they enter the report (common/wire_text.h); any
    // other invalid UTF-8 becomes U+FFFD instead of an exception at exit.
    out << nvmf::target::stats_report(**target, o)
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    out.close();
    if (!out) {
      std::cerr << "nvmf-target: --json " << json_path << ": cannot write the report\n";
      if (st.ok()) st = nvmf::Status::io("writing the --json report failed");
    }
  }
  g_target.store(nullptr);
  if (!st.ok()) {
    std::cerr << "nvmf-target: " << st.to_string() << "\n";
    return 1;
  }
  return 0;
}
