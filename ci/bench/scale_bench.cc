// SPDX-License-Identifier: BSD-3-Clause
// The scale bench's host side: one process opens N controllers x Q I/O queues of E
// entries against a target over raw connections (host/raw/raw_queue.h, small buffers so that
// hundreds fit), then reads the target process's VmRSS and VmHWM from /proc while every queue
// is open. Each controller: admin CM request and Connect (KATO 0: no keep-alive timer), CC.EN = 1
// and CSTS.RDY, Set Features Number of Queues Q, then Q I/O queues (CM request and Connect each).
// Stops at the first queue that cannot be opened and says which. ci/bench/scale.sh runs it per
// point and adds the target's registered MR bytes and posted receives from its --json report.
//
// Each queue's connect time is measured from the start of its CM connect (address resolution,
// QP, CM REQUEST) to its Fabrics Connect CQE; the first admin queue's is the first-Connect time
// of a fresh target, also split: resolved (address, route, QP made), CM ESTABLISHED.
//
// Output: one line of text and one line of JSON on stdout (and the JSON into --json FILE):
// {"controllers", "io_queues", "queue_size", "queues_wanted", "queues_opened", "open_s",
//  "rss_idle_kib", "rss_kib", "hwm_kib", "first_resolve_ms", "first_cm_ms", "first_connect_ms",
//  "connect_ms_mean",
//  "connect_ms_max", "error"} (times in ms, -1 when not reached).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/nvme_status.h"
#include "common/sgl.h"
#include "host/commands.h"
#include "host/raw/raw_queue.h"
#include "proto/fabrics.h"

namespace {

using nvmf::host::RawQueue;

// VmRSS or VmHWM of `pid` in KiB; -1 when unreadable.
long status_kib(int pid, const char* field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return std::atol(line.c_str() + n + 1);
    }
  }
  return -1;
}

struct Options {
  std::string traddr, trsvcid = "4420", host_traddr, subnqn;
  int controllers = 1, io_queues = 1, queue_size = 128, target_pid = 0, timeout_ms = 30000;
  std::string json_path;
};

class Bench {
 public:
  explicit Bench(const Options& o) : o_(o) {}

  // Opens everything; returns "" or what failed.
  std::string open_all() {
    for (int c = 0; c < o_.controllers; ++c) {
      nvmf::host::ConnectSpec spec;
      spec.hostid = nvmf::host::random_host_id();
      spec.hostnqn = nvmf::host::default_hostnqn(spec.hostid);
      spec.subnqn = o_.subnqn;
      spec.sqsize = 31;
      std::string where = "controller " + std::to_string(c + 1) + " admin queue: ";
      auto start = Clock::now();
      auto admin = open_queue(0, 32, c == 0 ? &first_resolve_ms_ : nullptr);
      if (!admin.ok()) return where + admin.status().to_string();
      if (c == 0) first_cm_ms_ = ms_since(start);
      auto cqe = (*admin)->run_connect(spec, false, o_.timeout_ms);
      if (std::string e = check(cqe, "Connect"); !e.empty()) return where + e;
      if (c == 0) first_connect_ms_ = ms_since(start);
      record_connect(ms_since(start));
      spec.cntlid = static_cast<uint16_t>(cqe->dw0);
      // CC.EN = 1 and CSTS.RDY before any admin command but Fabrics ones (Base 2.0 §3.5.1).
      nvmf::proto::Sqe en =
          nvmf::host::property_set_sqe(nvmf::proto::kPropCc, nvmf::host::kCcEnable);
      nvmf::encode_null_sgl(en.dptr);
      auto enabled = (*admin)->run(en, {}, o_.timeout_ms);
      if (std::string e = check(enabled, "Property Set CC.EN"); !e.empty()) return where + e;
      bool ready = false;
      for (int i = 0; i < 100 && !ready; ++i) {
        nvmf::proto::Sqe pg = nvmf::host::property_get_sqe(nvmf::proto::kPropCsts, false);
        nvmf::encode_null_sgl(pg.dptr);
        auto csts = (*admin)->run(pg, {}, o_.timeout_ms);
        if (std::string e = check(csts, "Property Get CSTS"); !e.empty()) return where + e;
        ready = (csts->dw0 & nvmf::proto::kCstsRdy) != 0;
        if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!ready) return where + "CSTS.RDY still 0 after 100 Property Gets";
      nvmf::proto::Sqe nq = nvmf::host::set_num_queues_sqe(static_cast<uint16_t>(o_.io_queues));
      nvmf::encode_null_sgl(nq.dptr);
      auto granted = (*admin)->run(nq, {}, o_.timeout_ms);
      if (std::string e = check(granted, "Set Features Number of Queues"); !e.empty()) {
        return where + e;
      }
      queues_.push_back(std::move(*admin));
      for (int q = 1; q <= o_.io_queues; ++q) {
        where = "controller " + std::to_string(c + 1) + " qid " + std::to_string(q) + ": ";
        start = Clock::now();
        auto io = open_queue(static_cast<uint16_t>(q), o_.queue_size);
        if (!io.ok()) return where + io.status().to_string();
        spec.qid = static_cast<uint16_t>(q);
        spec.sqsize = static_cast<uint16_t>(o_.queue_size - 1);
        auto ic = (*io)->run_connect(spec, false, o_.timeout_ms);
        if (std::string e = check(ic, "Connect"); !e.empty()) return where + e;
        record_connect(ms_since(start));
        queues_.push_back(std::move(*io));
        ++io_opened_;
      }
    }
    return "";
  }
  int io_opened() const { return io_opened_; }
  void close_all() { queues_.clear(); }
  double first_resolve_ms() const { return first_resolve_ms_; }
  double first_cm_ms() const { return first_cm_ms_; }
  double first_connect_ms() const { return first_connect_ms_; }
  double connect_ms_mean() const { return connects_ > 0 ? connect_ms_sum_ / connects_ : -1; }
  double connect_ms_max() const { return connects_ > 0 ? connect_ms_max_ : -1; }

 private:
  using Clock = std::chrono::steady_clock;
  static double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  }
  void record_connect(double ms) {
    ++connects_;
    connect_ms_sum_ += ms;
    connect_ms_max_ = std::max(connect_ms_max_, ms);
  }

  // `resolved_ms`, when given: the time to the end of address and route resolution and the
  // QP's creation, before the CM REQUEST.
  nvmf::Result<std::unique_ptr<RawQueue>> open_queue(uint16_t qid, int entries,
                                                     double* resolved_ms = nullptr) {
    const auto start = Clock::now();
    nvmf::host::RawQueueParams p;
    p.traddr = o_.traddr;
    p.trsvcid = o_.trsvcid;
    p.host_traddr = o_.host_traddr;
    p.timeout_ms = o_.timeout_ms;
    p.slots = 4;                  // one command at a time: Connect, then nothing
    p.send_slot_bytes = 64 + 64;  // SQEs only (Connect data goes keyed)
    p.data_bytes = 8192;          // the keyed Connect data
    NVMF_ASSIGN_OR_RETURN(auto q, RawQueue::create(p));
    if (resolved_ms != nullptr) *resolved_ms = ms_since(start);
    NVMF_RETURN_IF_ERROR(q->open(qid, static_cast<uint16_t>(entries - 1)));
    return q;
  }
  static std::string check(const nvmf::Result<nvmf::proto::Cqe>& c, const char* what) {
    if (!c.ok()) return std::string(what) + ": " + c.status().to_string();
    uint16_t st = nvmf::status_without_phase(c->status);
    if (st != nvmf::kStatusSuccess) return std::string(what) + ": " + nvmf::status_name(st);
    return "";
  }

  const Options& o_;
  std::vector<std::unique_ptr<RawQueue>> queues_;
  int io_opened_ = 0;
  double first_resolve_ms_ = -1, first_cm_ms_ = -1, first_connect_ms_ = -1;
  double connect_ms_sum_ = 0, connect_ms_max_ = 0;
  int connects_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"scale bench: N controllers x Q I/O queues against one target, its RSS"};
  app.add_option("-a,--traddr", o.traddr, "target address")->required();
  app.add_option("-s,--trsvcid", o.trsvcid, "target port");
  app.add_option("-w,--host-traddr", o.host_traddr, "local address");
  app.add_option("-n,--nqn", o.subnqn, "subsystem NQN")->required();
  app.add_option("--controllers", o.controllers, "controllers (one host NQN each)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--io-queues", o.io_queues, "I/O queues per controller")->check(CLI::Range(1, 64));
  app.add_option("--queue-size", o.queue_size, "I/O queue entries")->check(CLI::Range(2, 1024));
  app.add_option("--target-pid", o.target_pid, "the target process, for /proc/PID/status")
      ->required();
  app.add_option("--timeout-ms", o.timeout_ms, "per CM answer and per command");
  app.add_option("--json", o.json_path, "write the JSON line here too");
  CLI11_PARSE(app, argc, argv);

  const long idle = status_kib(o.target_pid, "VmRSS");
  Bench bench(o);
  const auto t0 = std::chrono::steady_clock::now();
  std::string error = bench.open_all();
  const double open_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long rss = status_kib(o.target_pid, "VmRSS");
  const long hwm = status_kib(o.target_pid, "VmHWM");
  const int wanted = o.controllers * o.io_queues;
  std::printf(
      "scale: %d controllers x %d I/O queues x %d entries: %d of %d I/O queues open in "
      "%.1f s; target VmRSS %.1f MiB (idle %.1f MiB), VmHWM %.1f MiB; first queue resolved %.1f "
      "ms, "
      "CM ESTABLISHED %.1f ms, "
      "first Connect CQE %.1f ms, Connect CQE mean %.1f ms, max %.1f ms%s%s\n",
      o.controllers, o.io_queues, o.queue_size, bench.io_opened(), wanted, open_s, rss / 1024.0,
      idle / 1024.0, hwm / 1024.0, bench.first_resolve_ms(), bench.first_cm_ms(),
      bench.first_connect_ms(), bench.connect_ms_mean(), bench.connect_ms_max(),
      error.empty() ? "" : "; stopped: ", error.c_str());
  nlohmann::json j = {{"controllers", o.controllers},
                      {"io_queues", o.io_queues},
                      {"queue_size", o.queue_size},
                      {"queues_wanted", wanted},
                      {"queues_opened", bench.io_opened()},
                      {"open_s", open_s},
                      {"rss_idle_kib", idle},
                      {"rss_kib", rss},
                      {"hwm_kib", hwm},
                      {"first_resolve_ms", bench.first_resolve_ms()},
                      {"first_cm_ms", bench.first_cm_ms()},
                      {"first_connect_ms", bench.first_connect_ms()},
                      {"connect_ms_mean", bench.connect_ms_mean()},
                      {"connect_ms_max", bench.connect_ms_max()},
                      {"error", error}};
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::printf("%s\n", line.c_str());
  if (!o.json_path.empty()) std::ofstream(o.json_path) << line << "\n";
  bench.close_all();
  return error.empty() ? 0 : 1;
}
