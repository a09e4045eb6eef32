// SPDX-License-Identifier: BSD-3-Clause
#include "ublk/ublk_cli.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/status.h"
#include "host/cli/cli_util.h"
#include "host/controller.h"
#include "ublk/ublk_device.h"

namespace nvmf::ublk {

namespace {

// How often the main thread looks at the controller's state and the queues between signals.
constexpr long kWatchNs = 200L * 1000 * 1000;

int fail(const char* what, const Status& st) {
  std::fprintf(stderr, "nvmf-host ublk: %s: %s\n", what, st.to_string().c_str());
  return host::kExitRuntime;
}

nlohmann::json report(const UblkDevice& dev, const host::Controller& ctrl,
                      const std::string& ended) {
  const DeviceLayout& l = dev.layout();
  const UblkStats s = dev.stats();
  const host::RecoveryStats r = ctrl.recovery_stats();
  return {
      {"device", dev.block_device()},
      {"dev_id", dev.dev_id()},
      {"nsid", ctrl.namespace_info().nsid},
      {"lba_size", ctrl.lba_size()},
      {"blocks", ctrl.namespace_info().nsze},
      {"queues", l.nr_hw_queues},
      {"queue_depth", l.queue_depth},
      {"max_io_bytes", l.max_io_buf_bytes},
      {"volatile_cache", l.volatile_cache},
      {"discard", l.max_discard_sectors != 0},
      {"write_zeroes", l.max_write_zeroes_sectors != 0},
      {"requests",
       {{"reads", s.reads},
        {"writes", s.writes},
        {"flushes", s.flushes},
        {"discards", s.discards},
        {"write_zeroes", s.write_zeroes},
        {"errors", s.errors},
        {"bytes_read", s.bytes_read},
        {"bytes_written", s.bytes_written}}},
      {"stop_grace_expired", s.stop_grace_expired},
      {"recovery",
       {{"losses", r.losses}, {"reconnects", r.reconnects}, {"path_errors", r.path_errors}}},
      {"ended", ended},
  };
}

Status write_report(const std::string& target, const nlohmann::json& j) {
  const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (target == "-") {
    std::cout << text << std::endl;
    return ok_status();
  }
  std::ofstream out(target);
  out << text << '\n';
  out.close();
  if (!out) return Status::from_errno("write " + target, errno);
  return ok_status();
}

}  // namespace

CLI::App* add_ublk_subcommand(CLI::App& app, UblkArgs& args) {
  CLI::App* sub = app.add_subcommand(
      "ublk",
      "serve the namespace as the Linux block device /dev/ublkbN (ublk_drv) until SIGINT or "
      "SIGTERM; one ublk queue per I/O queue (--nr-io-queues), --queue-size - 1 tags each");
  sub->add_option("--dev-id", args.dev_id, "the device number N of /dev/ublkbN (default: any)")
      ->check(CLI::Range(0, (1 << 20) - 1));  // ublk's minors: UBLK_MAX_UBLKS
  sub->add_option("--max-io-size", args.max_io_size,
                  "the most one request carries, bytes (whole pages; at most what one command "
                  "moves)")
      ->capture_default_str()
      ->check(CLI::Range(4096u, 1u << 20));
  sub->add_option("--json", args.json, "the counters at the end as JSON, into FILE or stdout")
      ->expected(0, 1)
      ->type_name("[FILE]");
  return sub;
}

uint64_t ublk_buffer_bytes(uint32_t queues, uint32_t queue_size, uint32_t max_io_size) {
  const uint64_t tags = queue_size > 1 ? queue_size - 1 : 1;
  return static_cast<uint64_t>(queues) * tags * max_io_size;
}

int cmd_ublk(const host::HostOptions& opts, const UblkArgs& args) {
  // SIGINT and SIGTERM end the device in order: blocked in every thread (they inherit the mask
  // of this one) and taken by sigtimedwait() below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  if (!args.json.empty() && args.json != "-") {
    if (Status st = host::check_writable(args.json, "--json"); !st.ok()) return fail("--json", st);
  }
  // Before connecting: a host without ublk, or a device number taken, leaves no trace on the
  // target.
  if (Status st = ublk_available(); !st.ok()) return fail("ublk", st);
  if (args.dev_id >= 0) {
    const std::string taken = "/sys/class/ublk-char/ublkc" + std::to_string(args.dev_id);
    if (::access(taken.c_str(), F_OK) == 0) {
      return fail("--dev-id",
                  Status::invalid_argument("ublk device " + std::to_string(args.dev_id) +
                                           " exists already: give another --dev-id, or none"));
    }
  }
  Result<std::unique_ptr<host::Controller>> connected = host::Controller::connect(opts);
  if (!connected.ok()) return fail("connect", connected.status());
  host::Controller& ctrl = **connected;
  UblkOptions uo;
  uo.dev_id = args.dev_id;
  uo.max_io_bytes = args.max_io_size;
  Result<std::unique_ptr<UblkDevice>> made = UblkDevice::create(ctrl, uo);
  if (!made.ok()) {
    (void)ctrl.disconnect();
    return fail("add device", made.status());
  }
  UblkDevice& dev = **made;
  if (Status st = dev.start(); !st.ok()) {
    (void)dev.stop();
    (void)ctrl.disconnect();
    return fail("start device", st);
  }
  const DeviceLayout& l = dev.layout();
  std::printf(
      "nvmf-host ublk: %s ready: nsid %u, %llu blocks of %u bytes, %u %s x %u tags, "
      "requests up to %u bytes, discard %s, write zeroes %s, volatile cache %s\n",
      dev.block_device().c_str(), ctrl.namespace_info().nsid,
      static_cast<unsigned long long>(ctrl.namespace_info().nsze), ctrl.lba_size(), l.nr_hw_queues,
      l.nr_hw_queues == 1 ? "queue" : "queues", l.queue_depth, l.max_io_buf_bytes,
      l.max_discard_sectors ? "on" : "off", l.max_write_zeroes_sectors ? "on" : "off",
      l.volatile_cache ? "on" : "off");
  std::fflush(stdout);

  int rc = host::kExitOk;
  std::string ended;
  for (;;) {
    const timespec tick{0, kWatchNs};
    const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      ended = sig == SIGINT ? "SIGINT" : "SIGTERM";
      break;
    }
    if (ctrl.state() == host::ControllerState::kDeleting) {
      ended = "the controller was deleted (ctrl-loss-tmo): " + ctrl.recovery_stats().last_loss;
      rc = host::kExitRuntime;
      break;
    }
    if (std::string why = dev.failure(); !why.empty()) {
      ended = why;
      rc = host::kExitRuntime;
      break;
    }
  }
  if (rc != host::kExitOk) std::fprintf(stderr, "nvmf-host ublk: %s\n", ended.c_str());
  Status stopped = dev.stop();
  if (!stopped.ok()) rc = fail("remove device", stopped);
  const UblkStats s = dev.stats();
  std::printf(
      "nvmf-host ublk: %s removed (%s): %llu reads, %llu writes, %llu flushes, %llu discards, "
      "%llu write zeroes, %llu errors\n",
      dev.block_device().c_str(), ended.c_str(), static_cast<unsigned long long>(s.reads),
      static_cast<unsigned long long>(s.writes), static_cast<unsigned long long>(s.flushes),
      static_cast<unsigned long long>(s.discards), static_cast<unsigned long long>(s.write_zeroes),
      static_cast<unsigned long long>(s.errors));
  if (!args.json.empty()) {
    if (Status st = write_report(args.json, report(dev, ctrl, ended)); !st.ok()) {
      rc = fail("--json", st);
    }
  }
  Status down = ctrl.disconnect();
  if (!down.ok() && rc == host::kExitOk && ctrl.state() != host::ControllerState::kDeleting) {
    rc = fail("disconnect", down);
  }
  return rc;
}

}  // namespace nvmf::ublk
