// SPDX-License-Identifier: BSD-3-Clause
// withhold_receives: a hostile host for the interop suite's fair-share checks. It connects
// --controllers controllers with --queues I/O queues of --queue-size entries each; every I/O
// queue posts two receives for its responses and never gives them back (the Connect's CQE takes
// one, the first command's the other), so from the third response on the target's SENDs meet
// RNR NAKs forever (rnr_retry 7), every command slot of the queue waits for its SEND, and the
// queue's further capsules are parked. Each queue then sends 2 x --queue-size Flushes. The
// program waits up to --wait-s for the target to tear every I/O queue down, and prints one JSON
// line: {"queues", "flushes_sent", "torn_down", "sent_s", "teardown_s_max"}. Exit status 0 when
// every I/O queue was torn down in time, 1 otherwise, 2 on a set-up error (one line on stderr).
// After the JSON line is printed with "phase": "sent", the victim's measurement may start.
// A bad command line (a value out of range, malformed or missing) is refused before anything
// connects: "withhold_receives: MESSAGE" and a usage line on stderr, exit status 2.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/cli_usage.h"
#include "common/sgl.h"
#include "common/verbs/address.h"
#include "host/commands.h"
#include "host/raw/raw_queue.h"
#include "proto/fabrics.h"
#include "proto/nvme.h"

namespace nvmf {
namespace {

struct Options {
  std::string traddr, trsvcid = "4420", host_traddr, subnqn, hostnqn;
  uint32_t controllers = 8;
  uint32_t queues = 4;
  uint32_t queue_size = 32;
  int wait_s = 60;
};

constexpr int kTimeoutMs = 10000;

// The limits of the options (a value outside them is a usage error, exit 2).
// Every controller has the same host NQN, and nvmf-target's default --max-controllers-per-host
// is 32: a 33rd would be refused with Controller Busy instead of adding to the load.
constexpr uint32_t kMaxControllers = 32;
// nvmf-host's --nr-io-queues limit; 32 x 64 queues are already far more than a test needs.
constexpr uint32_t kMaxQueues = 64;
// SQSIZE is 0's based and a target refuses 0, so an I/O queue has at least 2 entries.
constexpr uint32_t kMinQueueSize = 2;
// nvmf-host's --queue-size limit; it also keeps the 2 x --queue-size Flush CIDs within 16 bits.
constexpr uint32_t kMaxQueueSize = 1024;
// The teardown comes within seconds of the target's send-stall timeout (30 s by default): an
// hour is longer than any run should wait, and keeps the deadline far from overflowing.
constexpr int kMaxWaitS = 3600;

std::string range(long lo, long hi) { return std::to_string(lo) + "-" + std::to_string(hi); }

// The second line of a usage error.
std::string usage_line() {
  return "withhold_receives -a ADDR -n NQN -q HOSTNQN [-s PORT] [-w ADDR] [--controllers " +
         range(1, kMaxControllers) + "] [--queues " + range(1, kMaxQueues) + "] [--queue-size " +
         range(kMinQueueSize, kMaxQueueSize) + "] [--wait-s " + range(1, kMaxWaitS) +
         "] (try --help)";
}

// A whole decimal number from lo to hi. CLI::Range alone takes "0x10" as 16 and "010" as
// octal 8; this passes CLI11 the number in plain decimal.
CLI::Validator decimal_range(long lo, long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        long v = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || ptr != end || v < lo || v > hi) {
          return "wants a whole number " + range(lo, hi) + ", not '" + text + "'";
        }
        text = std::to_string(v);
        return {};
      },
      range(lo, hi));
}

// What CLI11 cannot check: the address and port as an RDMA connect takes them, and the NQNs.
Status check_options(const Options& o) {
  auto port = verbs::parse_port(o.trsvcid);
  if (!port.ok()) return Status::invalid_argument("--trsvcid: " + port.status().message());
  if (*port == 0) return Status::invalid_argument("--trsvcid: port 0 cannot be connected to");
  if (auto a = verbs::SocketAddress::parse(o.traddr, *port); !a.ok()) {
    return Status::invalid_argument("--traddr: " + a.status().message());
  }
  if (!o.host_traddr.empty()) {
    if (auto a = verbs::SocketAddress::parse(o.host_traddr, uint16_t{0}); !a.ok()) {
      return Status::invalid_argument("--host-traddr: " + a.status().message());
    }
  }
  for (auto [name, nqn] : {std::pair{"--nqn", &o.subnqn}, std::pair{"--hostnqn", &o.hostnqn}}) {
    if (nqn->empty()) return Status::invalid_argument(std::string(name) + " is empty");
    if (nqn->size() > proto::kNqnMaxLength) {
      return Status::invalid_argument(std::string(name) + " must be at most " +
                                      std::to_string(proto::kNqnMaxLength) + " bytes, got " +
                                      std::to_string(nqn->size()));
    }
  }
  return ok_status();
}

host::RawQueueParams params(const Options& o, uint32_t slots, bool repost) {
  host::RawQueueParams p;
  p.traddr = o.traddr;
  p.trsvcid = o.trsvcid;
  p.host_traddr = o.host_traddr;
  p.timeout_ms = kTimeoutMs;
  p.slots = slots;
  p.repost_receives = repost;
  return p;
}

host::ConnectSpec spec(const Options& o, uint16_t qid, uint16_t cntlid, const host::HostId& id) {
  host::ConnectSpec c;
  c.qid = qid;
  c.sqsize = static_cast<uint16_t>(o.queue_size - 1);
  c.cntlid = cntlid;
  c.hostid = id;
  c.subnqn = o.subnqn;
  c.hostnqn = o.hostnqn;
  return c;
}

// One capsule, waiting up to 10 s for a free send slot (the target's receives take them).
Status send_when_free(host::RawQueue& q, const proto::Sqe& sqe) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  Status sent;
  while (!(sent = q.send(sqe)).ok() && sent.code() == StatusCode::kResourceExhausted &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return sent;
}

Status check_cqe(const Result<proto::Cqe>& c, const char* what) {
  if (!c.ok()) return Status(c.status().code(), std::string(what) + ": " + c.status().to_string());
  if (c->status != 0) {
    return Status(StatusCode::kIo, std::string(what) + ": status " + std::to_string(c->status));
  }
  return ok_status();
}

int run(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<host::RawQueue>> admins, ios;
  uint64_t flushes = 0;
  for (uint32_t c = 0; c < o.controllers; ++c) {
    auto admin = host::RawQueue::create(params(o, 0, true));
    if (!admin.ok()) return std::fprintf(stderr, "%s\n", admin.status().to_string().c_str()), 2;
    const host::HostId id = host::random_host_id();
    Status st = (*admin)->open(0, 31);
    auto connected =
        st.ok() ? (*admin)->run_connect(spec(o, 0, proto::kAdminQueueCntlid, id), true, kTimeoutMs)
                : Result<proto::Cqe>(st);
    if (st = check_cqe(connected, "admin Connect"); !st.ok()) {
      return std::fprintf(stderr, "controller %u: %s\n", c, st.to_string().c_str()), 2;
    }
    const auto cntlid = static_cast<uint16_t>(connected->dw0);
    proto::Sqe en = host::property_set_sqe(proto::kPropCc, host::kCcEnable);
    encode_null_sgl(en.dptr);
    if (st = check_cqe((*admin)->run(en, {}, kTimeoutMs), "CC.EN"); !st.ok()) {
      return std::fprintf(stderr, "controller %u: %s\n", c, st.to_string().c_str()), 2;
    }
    for (uint32_t qid = 1; qid <= o.queues; ++qid) {
      auto io = host::RawQueue::create(params(o, 2, false));
      if (!io.ok()) return std::fprintf(stderr, "%s\n", io.status().to_string().c_str()), 2;
      st = (*io)->open(static_cast<uint16_t>(qid), static_cast<uint16_t>(o.queue_size - 1));
      auto ioc = st.ok() ? (*io)->run_connect(spec(o, static_cast<uint16_t>(qid), cntlid, id), true,
                                              kTimeoutMs)
                         : Result<proto::Cqe>(st);
      if (st = check_cqe(ioc, "I/O Connect"); !st.ok()) {
        return std::fprintf(stderr, "controller %u qid %u: %s\n", c, qid, st.to_string().c_str()),
               2;
      }
      ios.push_back(std::move(*io));
    }
    admins.push_back(std::move(*admin));
  }
  for (size_t i = 0; i < ios.size(); ++i) {
    for (uint32_t n = 0; n < 2 * o.queue_size; ++n) {
      proto::Sqe f = host::flush_sqe(1);
      f.cid = static_cast<uint16_t>(n);
      if (!send_when_free(*ios[i], f).ok()) break;  // torn down already, or never took them
      ++flushes;
    }
  }
  const double sent_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"phase\": \"sent\", \"queues\": %zu, \"flushes_sent\": %llu, \"sent_s\": %.2f}\n",
              ios.size(), static_cast<unsigned long long>(flushes), sent_s);
  std::fflush(stdout);
  const auto t_sent = std::chrono::steady_clock::now();
  const auto deadline = t_sent + std::chrono::seconds(o.wait_s);
  size_t torn_down = 0;
  double last_s = 0;
  for (auto& q : ios) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (q->wait_disconnected(static_cast<int>(std::max<int64_t>(left.count(), 0)))) {
      ++torn_down;
      last_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_sent).count();
    }
  }
  std::printf(
      "{\"phase\": \"done\", \"queues\": %zu, \"flushes_sent\": %llu, \"torn_down\": %zu, "
      "\"sent_s\": %.2f, \"teardown_s_max\": %.2f}\n",
      ios.size(), static_cast<unsigned long long>(flushes), torn_down, sent_s, last_s);
  return torn_down == ios.size() ? 0 : 1;
}

}  // namespace
}  // namespace nvmf

int main(int argc, char** argv) {
  nvmf::Options o;
  CLI::App app{"A hostile host: I/O queues that take no responses and keep sending Flushes"};
  app.add_option("-a,--traddr", o.traddr, "target address")->required();
  app.add_option("-s,--trsvcid", o.trsvcid, "target port");
  app.add_option("-w,--host-traddr", o.host_traddr, "local address");
  app.add_option("-n,--nqn", o.subnqn, "subsystem NQN")->required();
  app.add_option("-q,--hostnqn", o.hostnqn, "host NQN")->required();
  app.add_option("--controllers", o.controllers, "controllers")
      ->check(nvmf::decimal_range(1, nvmf::kMaxControllers));
  app.add_option("--queues", o.queues, "I/O queues per controller")
      ->check(nvmf::decimal_range(1, nvmf::kMaxQueues));
  app.add_option("--queue-size", o.queue_size, "entries per I/O queue")
      ->check(nvmf::decimal_range(nvmf::kMinQueueSize, nvmf::kMaxQueueSize));
  app.add_option("--wait-s", o.wait_s, "seconds to wait for the teardown")
      ->check(nvmf::decimal_range(1, nvmf::kMaxWaitS));
  auto usage = [](std::string_view message) {
    return nvmf::usage_error("withhold_receives", message, nvmf::usage_line());
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage(e.what());
  }
  if (nvmf::Status st = nvmf::check_options(o); !st.ok()) return usage(st.message());
  return nvmf::run(o);
}
