// SPDX-License-Identifier: BSD-3-Clause
// nvmf-host: the command line (CLI11) over the host library's programs in host/cli, host/bench,
// host/conform and ublk/: parses and checks every argument, then runs one subcommand.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/cli_alias.h"
#include "common/log.h"
#include "common/status.h"
#include "host/bench/bench_cli.h"
#include "host/cli/cli_util.h"
#include "host/cli/memlock_bound.h"
#include "host/cli/segments.h"
#include "host/cli/subcommands.h"
#include "host/conform/conform_cli.h"
#include "host/multipath.h"
#include "proto/fabrics.h"
#include "target/memlock.h"
#include "ublk/ublk_cli.h"

namespace nvmf::host {
namespace {

// The connection and logging options, shared by every subcommand and spelled as in nvme-cli
// (-a/--traddr, -s/--trsvcid, -n/--nqn, -w/--host-traddr, --hostnqn, --nr-io-queues,
// --queue-size, -k/--keep-alive-tmo, --reconnect-delay, --ctrl-loss-tmo, --fast-io-fail-tmo)
// and as in nvmf-target (--poll, --log-level, -v/--verbose, --max-inline-data).
void add_common_options(CLI::App& app, HostOptions& o, std::string& poll_mode,
                        std::string& log_level, bool& verbose, uint32_t& keep_alive_tmo_s,
                        std::string& dhchap_secret, std::string& dhchap_ctrl_secret) {
  app.add_option("-a,--traddr", o.traddr,
                 "target address (required); a comma-separated list gives failover paths");
  app.add_option("-s,--trsvcid", o.trsvcid,
                 "target port; a comma-separated list pairs with -a's addresses")
      ->capture_default_str();
  app.add_option("-n,--nqn", o.subnqn, "subsystem NQN (not for discover)");
  app.add_option("-w,--host-traddr", o.host_traddr, "local source address");
  app.add_option("--hostnqn", o.hostnqn, "host NQN (default: from a random host id)");
  app.add_option("-S,--dhchap-secret", dhchap_secret,
                 "DH-HMAC-CHAP host key, DHHC-1:hh:...: (nvme gen-dhchap-key): every queue "
                 "authenticates when the controller asks");
  app.add_option("-C,--dhchap-ctrl-secret", dhchap_ctrl_secret,
                 "DH-HMAC-CHAP controller key: the controller must prove it too (bidirectional)");
  app.add_option("--nr-io-queues", o.num_io_queues, "I/O queues to connect (I/O uses the first)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--queue-size", o.queue_size, "I/O queue entries")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  app.add_option("-k,--keep-alive-tmo", keep_alive_tmo_s,
                 "keep alive timeout (KATO) in seconds, sent in Connect; the host sends Keep "
                 "Alive every KATO/2; 0 = off (nvme-cli's name and default)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 65535u));
  app.add_option("--reconnect-delay", o.reconnect_delay_s,
                 "seconds from a lost connection to the reconnect attempt, and between attempts "
                 "(nvme-cli's name and default)")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.add_option("--ctrl-loss-tmo", o.ctrl_loss_tmo_s,
                 "seconds of reconnecting before the controller is given up (Host Pathing "
                 "Error); -1 = forever, 0 = no reconnect")
      ->capture_default_str()
      ->check(CLI::Range(-1, 86400 * 365));
  CLI::Option* fast_io_fail =
      app.add_option("--fast-io-fail-tmo", o.fast_io_fail_tmo_s,
                     "seconds after a loss after which I/O fails with Host Pathing Error while "
                     "reconnecting goes on; -1 = off")
          ->capture_default_str()
          ->check(CLI::Range(-1, 86400 * 365));
  add_hidden_alias(app, "--fast_io_fail_tmo", o.fast_io_fail_tmo_s, fast_io_fail,
                   CLI::Range(-1, 86400 * 365));
  app.add_option("--ack-timeout", o.ack_timeout,
                 "local ACK timeout of each queue's QP, 4.096 us x 2^N before a lost command "
                 "capsule is sent again (0..31; 0 = rdma_cm's, 19 on rxe; SPDK's "
                 "transport_ack_timeout)")
      ->capture_default_str()
      ->check(CLI::Range(0, 31));
  app.add_option("--timeout-ms", o.timeout_ms, "per command and CM step timeout")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  app.add_option("--max-inline-data", o.requested_max_inline_data,
                 "max_inline_data asked of each QP for inline send (IBV_SEND_INLINE) of command "
                 "capsules; 0 = never; a refused size falls back to 0")
      ->capture_default_str();
  CLI::Option* poll =
      app.add_option("--poll", poll_mode,
                     "event: sleep until a completion event; busy: poll the CQ without sleeping")
          ->capture_default_str()
          ->check(CLI::IsMember({"busy", "event"}));
  add_hidden_alias(app, "--poll-mode", poll_mode, poll, CLI::IsMember({"busy", "event"}));
  app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "debug logging (--log-level debug)");
}

// --json [FILE] and --output-format normal|json, with one meaning in every subcommand (and in
// nvmf-target): the JSON report goes to FILE, or to stdout when no FILE (or -) is given.
struct JsonOptions {
  std::string file;
  std::string format = "normal";
  CLI::Option* json = nullptr;

  void add(CLI::App* sub) {
    json = sub->add_option("--json", file, "JSON report into FILE; no FILE or - : on stdout")
               ->expected(0, 1)
               ->type_name("[FILE]");
    sub->add_option("--output-format", format, "normal|json (json: --json on stdout)")
        ->check(CLI::IsMember({"normal", "json"}));
  }
  // "" for text, "-" for JSON on stdout, else the file.
  std::string target() const {
    if (json != nullptr && json->count() > 0) return file.empty() ? "-" : file;
    return format == "json" ? "-" : "";
  }
};

// CLI11 keeps arguments it does not know (allow_extras) so the error can name the first one,
// whether it looks like an option or like a subcommand. `sub`: the subcommand given, or "".
int unknown_argument(std::string_view sub, const std::vector<std::string>& extras) {
  const std::string& first = extras.front();
  if (!first.empty() && first[0] == '-') {
    return host_usage_error(sub, "unknown option '" + first + "'");
  }
  return host_usage_error(sub, "unknown subcommand or unexpected argument '" + first + "'");
}

int run(int argc, char** argv) {
  CLI::App app{
      "nvmf-host: NVMe over Fabrics RDMA host (identify, write, read, bench, discover, conform, "
      "ublk)",
      "nvmf-host"};
  app.require_subcommand(0, 1);
  app.fallthrough();
  app.allow_extras();  // before the subcommands, which inherit it: unknown_argument() names them
  HostOptions opts;
  std::string poll_mode = "event";
  std::string log_level = "warn";
  bool verbose = false;
  uint32_t keep_alive_tmo_s = 5;  // nvme-cli / Linux NVME_DEFAULT_KATO
  std::string dhchap_secret, dhchap_ctrl_secret;
  add_common_options(app, opts, poll_mode, log_level, verbose, keep_alive_tmo_s, dhchap_secret,
                     dhchap_ctrl_secret);
  // SPDK bdev_nvme_attach_controller's -x (multipath mode) and Linux's iopolicy.
  std::string multipath = "failover", iopolicy = "numa";
  app.add_option("-x,--multipath", multipath,
                 "failover: one path at a time, the next on a loss; multipath: every -a/-s path "
                 "connected at once, I/O by ANA state (identify, write, read, bench)")
      ->capture_default_str()
      ->check(CLI::IsMember({"failover", "multipath"}));
  app.add_option("--iopolicy", iopolicy,
                 "with -x multipath: numa (the first optimized path) or round-robin (optimized "
                 "paths in turn)")
      ->capture_default_str()
      ->check(CLI::IsMember({"numa", "round-robin"}));
  GenKeyArgs gen_args;
  CLI::App* gen_key = add_gen_dhchap_key_subcommand(app, gen_args);
  JsonOptions id_json, disc_json, w_json, r_json;
  CLI::App* identify = app.add_subcommand("identify", "Identify controller and namespace");
  id_json.add(identify);
  IoArgs w, r;
  CLI::App* write = app.add_subcommand("write", "write a file at a byte offset");
  // -d/--data as in nvme-cli's write and read (the data file); -i/--input kept, hidden.
  CLI::Option* w_data = write->add_option(
      "-d,--data", w.file, "the file to write (required); a partial last LBA is padded with zeros");
  add_hidden_alias(*write, "-i,--input", w.file, w_data);
  write->add_option("-o,--offset", w.offset, "byte offset (multiple of the LBA size)");
  w_json.add(write);
  write
      ->add_option("--segments", w.segments,
                   "split the data into N separately registered uneven pieces (scattered write)")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxCliSegments));
  CLI::App* read = app.add_subcommand("read", "read bytes at an offset into a file");
  CLI::Option* r_data =
      read->add_option("-d,--data", r.file, "the file the bytes are written to (required)");
  add_hidden_alias(*read, "-f,--output", r.file, r_data);
  read->add_option("-o,--offset", r.offset, "byte offset (multiple of the LBA size)");
  // Required, checked after every bad value (not CLI11's required(), which comes first).
  read->add_option("-l,--length", r.length, "bytes to read (required)");
  r_json.add(read);
  BenchArgs bench_args;
  CLI::App* bench = add_bench_subcommand(app, bench_args);
  CLI::App* disc = app.add_subcommand("discover", "read the Discovery Log Page (nvme discover)");
  disc_json.add(disc);
  ConformArgs conform_args;
  CLI::App* conform = add_conform_subcommand(app, conform_args);
  // conform's --json FILE takes the same optional FILE as every other subcommand's.
  CLI::Option* conform_json = conform->get_option("--json");
  conform_json->expected(0, 1)->type_name("[FILE]");
  ublk::UblkArgs ublk_args;
  CLI::App* ublk = ublk::add_ublk_subcommand(app, ublk_args);
  CLI::Option* ublk_json = ublk->get_option("--json");
  // The connection options belong to the top level but may come after the subcommand too;
  // CLI11 lists them only in the top-level help, so each subcommand's help points there.
  const std::vector<CLI::App*> subs = {identify, write, read, bench, disc, conform, ublk, gen_key};
  for (CLI::App* sub : subs) {
    if (sub == gen_key) continue;
    sub->footer(
        "Connection options (also accepted here): -a,--traddr ADDR (required), -s,--trsvcid "
        "PORT, -n,--nqn NQN (required but for discover), -w,--host-traddr ADDR, --hostnqn, "
        "-S,--dhchap-secret, -C,--dhchap-ctrl-secret, "
        "-k,--keep-alive-tmo, --reconnect-delay, --ctrl-loss-tmo, --fast-io-fail-tmo, "
        "--nr-io-queues, --queue-size, --timeout-ms, --max-inline-data, --poll, --log-level, "
        "-v, -x,--multipath, --iopolicy. See nvmf-host --help.");
  }
  // The subcommand given ("" for none): its synopsis is the usage line of an error.
  auto given = [&subs]() -> std::string {
    for (CLI::App* s : subs) {
      if (s->parsed()) return s->get_name();
    }
    return "";
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return host_usage_error(given(), e.what());
  }
  const std::string sub = given();
  if (!app.remaining().empty()) return unknown_argument(sub, app.remaining());
  // Every bad value is named before anything missing is (-a, -n, the subcommand, -d, -l): the
  // first mistake reported is the first one the user made. CLI11 checked the ranges and sets.
  Result<LogLevel> level = parse_log_level(log_level);  // checked with -v too
  if (!level.ok()) return host_usage_error(sub, "--log-level: " + level.status().message());
  if (bench->parsed()) {
    if (Status st = check_bench_args(*bench, bench_args); !st.ok()) {
      return host_usage_error(sub, st.message());
    }
    // bench polls busy unless told: a --poll given before the subcommand counts too.
    if (bench->get_option("--poll")->count() == 0 &&
        (app.get_option("--poll")->count() > 0 || app.get_option("--poll-mode")->count() > 0)) {
      bench_args.poll = poll_mode;
    }
  }
  CLI::Option* r_length = read->get_option("--length");
  for (auto [cmd, args] : {std::pair{write, &w}, std::pair{read, &r}}) {
    if (!cmd->parsed()) continue;
    if (Status st = check_io_args(*args, cmd == read && r_length->count() > 0); !st.ok()) {
      return host_usage_error(sub, st.message());
    }
  }
  if (conform->parsed()) {
    if (auto ids = conform_case_ids(conform_args.cases); !ids.ok()) {
      return host_usage_error(sub, ids.status().message());
    }
  }
  if (Status st = parse_dhchap_secrets(dhchap_secret, dhchap_ctrl_secret, opts.dhchap); !st.ok()) {
    return host_usage_error(sub, st.message());
  }
  if (gen_key->parsed()) return cmd_gen_dhchap_key(gen_args);
  if (Status st = split_path_lists(opts); !st.ok()) return host_usage_error(sub, st.message());
  if (Status st = check_connection_options(opts); !st.ok()) {
    return host_usage_error(sub, st.message());
  }
  if (opts.subnqn == proto::kDiscoveryNqn && !disc->parsed()) {
    // No namespace, no I/O queues: Identify fails.
    return host_usage_error(sub, "-n " + std::string(proto::kDiscoveryNqn) +
                                     " is the discovery controller: use 'nvmf-host discover' "
                                     "(no -n needed)");
  }
  // Then what is missing.
  if (sub.empty()) {
    return host_usage_error(sub,
                            "a subcommand is required: identify, write, read, bench, discover, "
                            "conform, ublk or gen-dhchap-key");
  }
  // The data file of write and read: -d/--data (or its hidden older spelling); read's -l.
  for (auto [cmd, file] : {std::pair{write, &w.file}, std::pair{read, &r.file}}) {
    if (cmd->parsed() && file->empty()) return host_usage_error(sub, "-d,--data FILE is required");
  }
  if (read->parsed() && r_length->count() == 0) {
    return host_usage_error(sub, "-l,--length is required");
  }
  const IoPolicy policy = *parse_iopolicy(iopolicy);  // CLI11 checked the set
  const bool multi = multipath == "multipath";
  if (multi && (conform->parsed() || disc->parsed() || ublk->parsed())) {
    return host_usage_error(sub, "-x multipath is for identify, write, read and bench; " + sub +
                                     " uses one path at a time");
  }
  bench_args.multipath = multi;
  bench_args.iopolicy = policy;
  if (conform_json->count() > 0 && conform_args.json.empty()) conform_args.json = "-";
  if (ublk_json->count() > 0 && ublk_args.json.empty()) ublk_args.json = "-";
  if (conform->parsed() && conform_args.list) return cmd_conform(opts, 0, conform_args);
  if (opts.traddr.empty()) return host_usage_error(sub, "-a,--traddr is required");
  opts.poll_mode = poll_mode == "busy" ? PollMode::kBusy : PollMode::kEvent;
  opts.kato_ms = keep_alive_tmo_s * 1000;
  set_log_level(verbose ? LogLevel::kDebug : *level);
  if (disc->parsed()) return cmd_discover(opts, disc_json.target());
  if (opts.subnqn.empty()) return host_usage_error(sub, "-n,--nqn is required");
  // Before any device is opened: what the connection and bench's buffers register must fit
  // RLIMIT_MEMLOCK (bench sizes its queues for --iodepth, as cmd_bench does).
  const uint32_t queue_size = bench->parsed()
                                  ? std::max<uint32_t>(opts.queue_size, bench_args.iodepth + 1)
                                  : opts.queue_size;
  uint64_t memlock = host_memlock_bytes(queue_size, bench->parsed() ? bench_args.numjobs : 0,
                                        bench_args.iodepth, bench_args.bs_list);
  if (ublk->parsed()) {
    memlock += ublk::ublk_buffer_bytes(opts.num_io_queues, opts.queue_size, ublk_args.max_io_size);
  }
  const std::string refusal = memlock_refusal("nvmf-host", memlock, current_memlock_limit());
  if (!refusal.empty()) {
    std::cerr << refusal << "\n";
    return kExitRuntime;
  }
  if (conform->parsed()) {
    // conform's own default: short per-command timeouts keep a whole run to minutes.
    int timeout = app.get_option("--timeout-ms")->count() > 0 ? opts.timeout_ms : 1500;
    return cmd_conform(opts, timeout, conform_args);
  }
  if (identify->parsed()) return cmd_identify(opts, id_json.target(), policy, multi);
  w.json = w_json.target();
  r.json = r_json.target();
  if (write->parsed()) return cmd_write(opts, w, policy, multi);
  if (bench->parsed()) return cmd_bench(opts, bench_args);
  if (ublk->parsed()) return ublk::cmd_ublk(opts, ublk_args);
  return cmd_read(opts, r, policy, multi);
}

}  // namespace
}  // namespace nvmf::host

int main(int argc, char** argv) { return nvmf::host::run(argc, argv); }
