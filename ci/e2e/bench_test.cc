// SPDX-License-Identifier: BSD-3-Clause
// `nvmf-host bench` end to end over soft-RoCE, the binaries as separate processes: short runs
// whose JSON report must have the documented schema, real I/O, verified data and path counters
// that match the negotiated in-capsule size. No time is asserted (see ci/bench-compare.sh for
// the measurements).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ci/e2e/cli_harness.h"

namespace nvmf::e2e {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:bench-e2e";

class BenchTest : public CliFixture {
 protected:
  BenchTest() : CliFixture(kNqn) {}

  // Starts nvmf-target on a 16 MiB RAM namespace; returns its port (0 on failure).
  int start_target(std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--ram-size", "16m"});
    return CliFixture::start_target(extra);
  }

  // A shell fragment that waits (up to 60 s) for `line` in file `err`: the INFO line nvmf-host
  // bench prints as a phase begins (--log-level info), its signal handlers already installed.
  static std::string wait_for_line(const std::string& err, const std::string& line) {
    return "i=0; until grep -q '" + line + "' '" + err +
           "' || [ \\$i -ge 600 ]; do sleep 0.1; i=\\$((i+1)); done; ";
  }
  // Waits up to 60 s for `line` in file `path` (the bench's stderr); false when it never came.
  static bool await_line(const std::string& path, const std::string& line) {
    for (int i = 0; i < 600; ++i) {
      if (slurp(path).find(line) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  // Runs `nvmf-host bench ARGS --json FILE`; returns the exit status and
  // fills `report` when the file parses.
  int bench(int port, const std::string& args, nlohmann::json& report,
            const std::string& name = "bench") {
    std::string out = tmpdir() + "/" + name + ".json";
    std::string err = tmpdir() + "/" + name + ".err";
    unlink(out.c_str());
    int rc = run(host("bench", port, args) + " --json '" + out + "' 2>'" + err + "'");
    std::string text = slurp(out);
    report = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (rc != 0) ADD_FAILURE() << "bench exited " << rc << ":\n" << slurp(err);
    return rc;
  }

  // A target on a fresh 16 MiB file `name` in the temp dir, restarted on the same file by
  // restart_target(), and `nvmf-host bench ARGS` against it on a thread of its own.
  struct BackgroundBench {
    std::vector<std::string> target_args;
    int port = 0;  // 0: the target did not start (no bench then)
    int rc = -1;
    nlohmann::json report;
    std::thread thread;  // join before reading rc and report
  };
  void start_bench_on_file(const std::string& name, const std::string& args, BackgroundBench& b) {
    std::string file = tmpdir() + "/" + name;
    unlink(file.c_str());
    b.target_args = {"--file", file, "--size", "16m"};
    b.port = CliFixture::start_target(b.target_args);
    if (b.port == 0) return;
    b.thread = std::thread([this, &b, args] { b.rc = bench(b.port, args, b.report); });
  }
  // Kills the target with SIGKILL and starts it again on its file and port; false when it did
  // not come back.
  bool restart_target(const BackgroundBench& b) {
    kill(target_pid_, SIGKILL);
    waitpid(target_pid_, nullptr, 0);
    target_pid_ = -1;
    return CliFixture::start_target(b.target_args, std::to_string(b.port)) == b.port;
  }
};

// The fio-named fields of one direction; returns total_ios.
uint64_t expect_direction(const nlohmann::json& d, const std::string& where) {
  for (const char* k :
       {"io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios", "clat_ns"}) {
    EXPECT_TRUE(d.contains(k)) << where << " lacks " << k;
  }
  uint64_t ios = d.value("total_ios", uint64_t{0});
  const nlohmann::json& c = d["clat_ns"];
  EXPECT_EQ(c.value("N", uint64_t{0}), ios) << where;
  if (ios > 0) {
    EXPECT_GT(c["min"].get<uint64_t>(), 0u) << where;
    EXPECT_LE(c["min"].get<uint64_t>(), c["max"].get<uint64_t>()) << where;
    EXPECT_GE(c["mean"].get<double>(), c["min"].get<double>()) << where;
    EXPECT_LE(c["mean"].get<double>(), c["max"].get<double>()) << where;
    uint64_t p50 = c["percentile"]["50.000000"], p99 = c["percentile"]["99.000000"],
             p999 = c["percentile"]["99.900000"], p90 = c["percentile"]["90.000000"];
    EXPECT_LE(p50, p90) << where;
    EXPECT_LE(p90, p99) << where;
    EXPECT_LE(p99, p999) << where;
    EXPECT_GT(d["iops"].get<double>(), 0) << where;
    EXPECT_EQ(d["io_bytes"].get<uint64_t>() % 512, 0u) << where;
  }
  return ios;
}

TEST_F(BenchTest, RandRwSweepVerifiesAndCountsPaths) {
  // In-capsule 4096: the 4 KiB writes go in the capsule, the 8 KiB ones by RDMA READ.
  int port = start_target({"--inline-data-size", "4096"});
  ASSERT_NE(port, 0);
  nlohmann::json r;
  ASSERT_EQ(bench(port,
                  "--rw randrw --rwmixread 60 --bs 4k,8k --iodepth 4 --numjobs 2 --runtime 1 "
                  "--ramp_time 0.2 --size 1m --verify",
                  r),
            0);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["nvmf_bench_version"], 1);
  EXPECT_EQ(r["global options"]["rw"], "randrw");
  EXPECT_EQ(r["global options"]["numjobs"], 2);
  EXPECT_EQ(r["global options"]["poll"], "busy");
  EXPECT_EQ(r["verify"]["enabled"], true);
  EXPECT_EQ(r["verify"]["passed"], true) << r["verify"].dump();
  EXPECT_GT(r["verify"]["checked"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["verify"]["errors"], 0);
  EXPECT_EQ(r["negotiation"]["in_capsule_data_size"], 4096);
  ASSERT_EQ(r["results"].size(), 2u);
  for (const nlohmann::json& res : r["results"]) {
    uint32_t bs = res["bs"];
    std::string where = "bs " + std::to_string(bs);
    ASSERT_EQ(res["jobs"].size(), 2u) << where;
    EXPECT_EQ(res["jobs"][0]["qid"], 1);
    EXPECT_EQ(res["jobs"][1]["qid"], 2);
    uint64_t reads = 0, writes = 0;
    for (const nlohmann::json& job : res["jobs"]) {
      uint64_t rd = expect_direction(job["read"], where + " read");
      uint64_t wr = expect_direction(job["write"], where + " write");
      EXPECT_GT(rd, 0u) << where;
      EXPECT_GT(wr, 0u) << where;
      EXPECT_EQ(job["error"], "");
      reads += rd;
      writes += wr;
    }
    const nlohmann::json& all = res["all"];
    EXPECT_EQ(expect_direction(all["read"], where + " all read"), reads);
    EXPECT_EQ(expect_direction(all["write"], where + " all write"), writes);
    const nlohmann::json& path = all["path"];
    // The command paths count the window's completed commands: exactly its ios.
    EXPECT_EQ(path["reads"].get<uint64_t>(), reads) << where;
    uint64_t written =
        path["writes_in_capsule"].get<uint64_t>() + path["writes_keyed"].get<uint64_t>();
    EXPECT_EQ(written, writes) << where;
    if (bs == 4096) {
      EXPECT_EQ(path["writes_keyed"], 0) << where;
      EXPECT_GT(path["writes_in_capsule"].get<uint64_t>(), 0u) << where;
    } else {
      EXPECT_EQ(path["writes_in_capsule"], 0) << where;
      EXPECT_EQ(path["rdma_reads"], path["writes_keyed"]) << where;
      EXPECT_GT(path["writes_keyed"].get<uint64_t>(), 0u) << where;
    }
    // Reads (no in-capsule data) go inline (max_inline_data 64 by default), writes by reference
    // when in-capsule, keyed writes inline too.
    EXPECT_GT(path["capsules_inline"].get<uint64_t>(), 0u) << where;
  }
}

// Event polling, and the capsule counters against what the QP granted. With --max-inline-data 0
// the host asks for no inline send; rxe may still grant some (a request of 0 is answered with
// 16 or more), and whether the host then posts inline is the host's inline-send policy. Here:
// whatever was granted, every posted capsule is counted once, and none goes inline when the
// grant is below a 64-byte SQE. --ack-timeout 15 reaches every QP of the host (the report's
// per-queue ack_timeout is what ibv_query_qp says after connect).
TEST_F(BenchTest, EventPollingAndCapsuleCountersFollowTheGrant) {
  int port = start_target({});
  ASSERT_NE(port, 0);
  nlohmann::json r;
  ASSERT_EQ(bench(port,
                  "--rw randread --bs 4k --iodepth 8 --runtime 1 --size 1m --poll event "
                  "--max-inline-data 0 --ack-timeout 15",
                  r),
            0);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["global options"]["poll"], "event");
  const nlohmann::json& all = r["results"][0]["all"];
  uint64_t ios = expect_direction(all["read"], "read");
  EXPECT_GT(ios, 0u);
  EXPECT_EQ(all["write"]["total_ios"], 0);
  EXPECT_EQ(all["path"]["reads"].get<uint64_t>(), ios);
  uint64_t inl = all["path"]["capsules_inline"], ref = all["path"]["capsules_by_reference"];
  EXPECT_GE(inl + ref, ios);
  EXPECT_LE(inl + ref, ios + 8);  // posted in the window; at most iodepth still in flight
  const nlohmann::json& queues = r["negotiation"]["queues"];
  ASSERT_GE(queues.size(), 2u) << r["negotiation"].dump();
  EXPECT_EQ(queues[1]["requested_max_inline_data"], 0);
  if (queues[1]["granted_max_inline_data"].get<uint32_t>() < 64) {
    EXPECT_EQ(inl, 0u) << r["negotiation"].dump();
  }
  for (const nlohmann::json& q : queues) EXPECT_EQ(q["ack_timeout"], 15) << q.dump();
}

// --threads: 8 jobs (8 I/O queues, QD4) driven by 2 threads, round robin, with busy and event
// polling: every job completes verified reads and writes on its own queue, the report lists the
// 8 jobs and says 2 threads, the prefill and the timed window verify with no error.
TEST_F(BenchTest, TwoThreadsDriveEightJobsBusyAndEvent) {
  int port = start_target({"--max-io-queues", "8"});
  ASSERT_NE(port, 0);
  for (const char* poll : {"busy", "event"}) {
    SCOPED_TRACE(poll);
    nlohmann::json r;
    ASSERT_EQ(bench(port,
                    std::string("--rw randrw --bs 4k --numjobs 8 --iodepth 4 --threads 2 "
                                "--runtime 1 --size 1m --verify --poll ") +
                        poll,
                    r),
              0);
    ASSERT_TRUE(r.is_object());
    EXPECT_EQ(r["global options"]["numjobs"], 8);
    EXPECT_EQ(r["global options"]["threads"], 2);
    EXPECT_EQ(r["global options"]["poll"], poll);
    EXPECT_EQ(r["error"], "");
    EXPECT_EQ(r["verify"]["passed"], true) << r["verify"].dump();
    EXPECT_EQ(r["verify"]["errors"], 0);
    // The timed window's reads and the final read-back are checked.
    EXPECT_GT(r["verify"]["checked"].get<uint64_t>(), 0u);
    ASSERT_EQ(r["results"].size(), 1u);
    const nlohmann::json& jobs = r["results"][0]["jobs"];
    ASSERT_EQ(jobs.size(), 8u);
    uint64_t reads = 0, writes = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const nlohmann::json& job = jobs[i];
      std::string where = std::string(poll) + " job " + std::to_string(i);
      EXPECT_EQ(job["jobid"], i) << where;
      EXPECT_EQ(job["qid"], i + 1) << where;
      EXPECT_EQ(job["error"], "") << where;
      uint64_t rd = expect_direction(job["read"], where + " read");
      uint64_t wr = expect_direction(job["write"], where + " write");
      EXPECT_GT(rd, 0u) << where;
      EXPECT_GT(wr, 0u) << where;
      EXPECT_GT(job["verify"]["checked"].get<uint64_t>(), 0u) << where;
      EXPECT_EQ(job["verify"]["errors"], 0) << where;
      reads += rd;
      writes += wr;
    }
    const nlohmann::json& all = r["results"][0]["all"];
    EXPECT_EQ(expect_direction(all["read"], "all read"), reads);
    EXPECT_EQ(expect_direction(all["write"], "all write"), writes);
    EXPECT_EQ(all["path"]["reads"].get<uint64_t>(), reads);
  }
}

// Two bench processes launched 1.5 s apart (two host NQNs, as two hosts) with one --start-at
// 5 s after the first launch (the second has 3.5 s to connect, more than a loaded emulated
// machine took): neither starts I/O before that time, so their measured windows
// (window_start/end_unix_ns, the wall clock) overlap for most of their length, and the keep-alive
// thread holds both controllers while they wait (-k 1: a KATO the wait would otherwise outlast).
TEST_F(BenchTest, StartAtAlignsTheWindowsOfProcessesLaunchedApart) {
  int port = start_target({});
  ASSERT_NE(port, 0);
  const double start_at =
      std::ceil(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                    .count()) +
      5;
  char at[32];
  std::snprintf(at, sizeof(at), "%.0f", start_at);
  const std::string args = std::string("-k 1 --rw randread --bs 4k --iodepth 4 --runtime 1 ") +
                           "--size 1m --start-at " + at + " --hostnqn " +
                           "nqn.2014-08.org.nvmexpress:uuid:start-at-";
  nlohmann::json r1, r2;
  int rc1 = -1, rc2 = -1;
  std::thread first([&] { rc1 = bench(port, args + "1", r1, "first"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::thread second([&] { rc2 = bench(port, args + "2", r2, "second"); });
  first.join();
  second.join();
  ASSERT_EQ(rc1, 0);
  ASSERT_EQ(rc2, 0);
  ASSERT_TRUE(r1.is_object() && r2.is_object());
  EXPECT_DOUBLE_EQ(r1["global options"]["start_at"].get<double>(), start_at);
  int64_t starts[2], ends[2];
  const nlohmann::json* reports[2] = {&r1, &r2};
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& r = *reports[i];
    SCOPED_TRACE(i == 0 ? "first" : "second");
    EXPECT_EQ(r["error"], "");
    EXPECT_EQ(r["keep_alive"]["failed"], 0) << r["keep_alive"].dump();
    const nlohmann::json& all = r["results"][0]["all"];
    EXPECT_GT(expect_direction(all["read"], "all read"), 0u);
    starts[i] = all["window_start_unix_ns"].get<int64_t>();
    ends[i] = all["window_end_unix_ns"].get<int64_t>();
    // No I/O before --start-at (ramp 0: the window opens with the first command).
    EXPECT_GE(starts[i], static_cast<int64_t>(start_at * 1e9));
    EXPECT_LT(starts[i], static_cast<int64_t>((start_at + 1) * 1e9));
    // The window is the measured runtime (1 s, the last completions after it aside).
    EXPECT_NEAR(static_cast<double>(ends[i] - starts[i]) / 1e9, 1.0, 0.25);
    const nlohmann::json& job = r["results"][0]["jobs"][0];
    EXPECT_EQ(job["window_start_unix_ns"], all["window_start_unix_ns"]);
  }
  // Launched 1.5 s apart with 1 s runs, the windows would not overlap at all without --start-at.
  // With it they overlap for most of the shorter one: at least half, whatever a loaded emulated
  // machine does to when each process's first command goes out (101 ms apart was seen).
  const int64_t both = std::min(ends[0], ends[1]) - std::max(starts[0], starts[1]);
  const int64_t shorter = std::min(ends[0] - starts[0], ends[1] - starts[1]);
  EXPECT_GE(static_cast<double>(both), 0.5 * static_cast<double>(shorter))
      << "windows [" << starts[0] << ", " << ends[0] << "] and [" << starts[1] << ", " << ends[1]
      << "]";
}

// SIGTERM (handled as SIGINT; a background job of a non-interactive shell ignores SIGINT) while
// waiting for --start-at (60 s ahead) ends the run at once with no I/O: no results, and
// --verify neither fills nor reads back (a read-back of a region never written would report
// every LBA as a mismatch).
TEST_F(BenchTest, SignalWhileWaitingForStartAtEndsWithoutIo) {
  int port = start_target({});
  ASSERT_NE(port, 0);
  const int64_t at = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count() +
                     60;
  std::string out = tmpdir() + "/sigint.json";
  std::string err = tmpdir() + "/sigint.err";
  auto t0 = std::chrono::steady_clock::now();
  int rc =
      run("sh -c \"" +
          host("bench", port,
               "--log-level info --rw randrw --bs 4k --iodepth 4 --runtime 5 --size 1m "
               "--verify --start-at " +
                   std::to_string(at)) +
          " --json '" + out + "' 2>'" + err + "' & p=\\$!; " +
          wait_for_line(err, "bench: waiting for --start-at") + "kill -TERM \\$p; wait \\$p\"");
  double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(rc, 0) << slurp(err);
  EXPECT_LT(took_s, 20.0);  // not the 60 s to --start-at, nor its 5 s run
  nlohmann::json r = nlohmann::json::parse(slurp(out), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(r.is_object()) << slurp(err);
  EXPECT_EQ(r["results"].size(), 0u) << r["results"].dump();
  EXPECT_EQ(r["verify"]["checked"], 0) << r["verify"].dump();
  EXPECT_EQ(r["verify"]["errors"], 0) << r["verify"].dump();
  EXPECT_EQ(r["error"], "");
}

// SIGTERM during the --verify fill of the whole 16 MiB namespace (32768 writes of 512 bytes at QD1,
// many seconds in the guest) stops it: the run ends within a few seconds of the signal with no
// timed results and no read-back of the LBAs the fill never reached (it used to finish the fill and
// the read-back).
TEST_F(BenchTest, SignalDuringTheVerifyFillEndsTheRunSoon) {
  int port = start_target({});
  ASSERT_NE(port, 0);
  std::string out = tmpdir() + "/fill-signal.json";
  std::string err = tmpdir() + "/fill-signal.err";
  std::string when = tmpdir() + "/fill-signal.when";
  // The shell notes when it sent the signal, so the time after it is measured, not the connect.
  int rc = run(
      "sh -c \"" +
      host("bench", port, "--log-level info --rw write --bs 512 --iodepth 1 --runtime 5 --verify") +
      " --json '" + out + "' 2>'" + err + "' & p=\\$!; " +
      wait_for_line(err, "bench: --verify fill of") + "sleep 1; kill -TERM \\$p; date +%s.%N > '" +
      when + "'; wait \\$p; r=\\$?; date +%s.%N >> '" + when + "'; exit \\$r\"");
  EXPECT_EQ(rc, 0) << slurp(err);
  std::istringstream times(slurp(when));
  double signalled = 0, ended = 0;
  times >> signalled >> ended;
  EXPECT_GT(signalled, 0);
  EXPECT_LT(ended - signalled, 5.0) << slurp(err);
  nlohmann::json r = nlohmann::json::parse(slurp(out), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(r.is_object()) << slurp(err);
  EXPECT_EQ(r["results"].size(), 0u) << r["results"].dump();
  EXPECT_EQ(r["verify"]["errors"], 0) << r["verify"].dump();
  EXPECT_EQ(r["error"], "");
}

// Keep Alive goes out at KATO/2 while every job keeps its queue busy: -k 1 (1 s), 3 s of
// QD8 I/O, so about 6 Keep Alives on the admin queue, none failed; the default is nvme-cli's 5 s.
TEST_F(BenchTest, KeepAliveSentDuringTheBench) {
  int port = start_target({});
  ASSERT_NE(port, 0);
  nlohmann::json r;
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(bench(port, "-k 1 --rw randrw --bs 4k --iodepth 8 --runtime 3 --size 1m", r), 0);
  double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.is_object());
  const nlohmann::json& ka = r["keep_alive"];
  EXPECT_EQ(ka["kato_ms"], 1000) << ka.dump();
  EXPECT_GE(ka["sent"].get<uint64_t>(), 4u) << ka.dump();
  // One every 500 ms while connected: never more than the process lived allows.
  EXPECT_LE(ka["sent"].get<double>(), took_s * 2 + 1) << ka.dump() << " in " << took_s << " s";
  EXPECT_EQ(ka["failed"], 0) << ka.dump();
  nlohmann::json d;
  ASSERT_EQ(bench(port, "--rw randread --bs 4k --iodepth 1 --runtime 0.2 --size 1m", d), 0);
  EXPECT_EQ(d["keep_alive"]["kato_ms"], 5000) << d["keep_alive"].dump();
}

// The target killed with SIGKILL and restarted on its file five times under a QD8 randrw
// --verify run: the bench keeps going, every reconnect within --reconnect-delay (1 s) + 2 s,
// no data mismatch, and the JSON reports the gap (longest completion latency, I/Os sent again).
TEST_F(BenchTest, SurvivesFiveTargetRestartsWithVerify) {
  BackgroundBench b;
  start_bench_on_file("bench-restart.img",
                      "--log-level info --reconnect-delay 1 --ctrl-loss-tmo 30 -k 2 --rw randrw "
                      "--bs 4k --iodepth 8 --runtime 35 --size 2m --verify --poll event",
                      b);
  ASSERT_NE(b.port, 0);
  // The first kill once the bench's timed run has begun (a failed first connect is not
  // recovered, like nvme connect's), then one every 3 s of the run.
  EXPECT_TRUE(await_line(tmpdir() + "/bench.err", "bench: timed run"));
  std::vector<int64_t> listening_ns;  // when each restarted target was seen listening
  for (int i = 0; i < 5; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    if (!restart_target(b)) {
      ADD_FAILURE() << "restart " << i << " failed";
      break;  // the bench then ends on ctrl-loss-tmo; joined below
    }
    listening_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count());
  }
  b.thread.join();
  EXPECT_EQ(b.rc, 0);
  const nlohmann::json& r = b.report;
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["error"], "") << r["recovery"].dump();
  EXPECT_EQ(r["verify"]["errors"], 0);
  EXPECT_EQ(r["verify"]["passed"], true);
  EXPECT_GT(r["verify"]["checked"].get<uint64_t>(), 0u);
  const nlohmann::json& rec = r["recovery"];
  EXPECT_EQ(rec["reconnects"], 5) << rec.dump();
  EXPECT_EQ(rec["losses"], 5) << rec.dump();
  EXPECT_EQ(rec["path_errors"], 0) << rec.dump();
  EXPECT_GE(rec["longest_clat_ns"].get<uint64_t>(), 1000000000u) << rec.dump();
  ASSERT_EQ(rec["resumed_unix_ns"].size(), 5u) << rec.dump();
  // I/O resumes within reconnect-delay + 2 s of each restart (the loss itself is longer: it
  // includes the target's restart, seconds on a loaded emulated machine). `listening_ns` is
  // up to 100 ms late (the harness polls the target's log).
  for (size_t i = 0; i < listening_ns.size(); ++i) {
    int64_t resumed = rec["resumed_unix_ns"][i].get<int64_t>();
    EXPECT_LE(resumed - listening_ns[i], 3000000000) << "restart " << i << ": " << rec.dump();
    std::printf("restart %zu: I/O resumed %.0f ms after the target listened\n", i,
                static_cast<double>(resumed - listening_ns[i]) / 1e6);
  }
  std::printf("bench across 5 restarts: %s\nhost log:\n%s\n", rec.dump().c_str(),
              slurp(tmpdir() + "/bench.err").c_str());
}

// --threads with a reconnect: 4 jobs on 2 threads (event polling) while the target is killed
// and restarted once. The recovery gate counts threads, each parking once for both its jobs: the
// run goes on with one reconnect, every job completes I/O, and the data verifies.
TEST_F(BenchTest, ThreadedJobsSurviveATargetRestart) {
  BackgroundBench b;
  start_bench_on_file("bench-threads-restart.img",
                      "--log-level info --reconnect-delay 1 --ctrl-loss-tmo 30 -k 2 --rw randrw "
                      "--bs 4k --iodepth 4 --numjobs 4 --threads 2 --runtime 20 --size 2m "
                      "--verify --poll event",
                      b);
  ASSERT_NE(b.port, 0);
  // Once the bench's timed run has begun and gone on for 3 s.
  EXPECT_TRUE(await_line(tmpdir() + "/bench.err", "bench: timed run"));
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_TRUE(restart_target(b));
  b.thread.join();
  EXPECT_EQ(b.rc, 0);
  const nlohmann::json& r = b.report;
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["error"], "") << r["recovery"].dump();
  EXPECT_EQ(r["global options"]["threads"], 2);
  EXPECT_EQ(r["verify"]["passed"], true) << r["verify"].dump();
  EXPECT_EQ(r["verify"]["errors"], 0);
  const nlohmann::json& rec = r["recovery"];
  EXPECT_EQ(rec["losses"], 1) << rec.dump();
  EXPECT_EQ(rec["reconnects"], 1) << rec.dump();
  EXPECT_EQ(rec["resumed_unix_ns"].size(), 1u) << rec.dump();
  ASSERT_EQ(r["results"].size(), 1u);
  const nlohmann::json& jobs = r["results"][0]["jobs"];
  ASSERT_EQ(jobs.size(), 4u);
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_GT(jobs[i]["read"]["total_ios"].get<uint64_t>(), 0u) << "job " << i;
    EXPECT_GT(jobs[i]["write"]["total_ios"].get<uint64_t>(), 0u) << "job " << i;
    EXPECT_EQ(jobs[i]["error"], "") << "job " << i;
  }
  std::printf("threaded bench across a restart: %s\n", rec.dump().c_str());
}

// Host recovery: the target stopped for longer than ctrl-loss-tmo (3 s): the bench ends with
// a clear error naming Host Pathing Error and ctrl-loss-tmo, well before its runtime (60 s):
// no hang. Once with one job on its own thread, once with 2 jobs on one thread (--threads 1:
// the thread parks once for both, and both end with the recovery's error).
TEST_F(BenchTest, TargetGoneLongerThanCtrlLossTmoEndsTheBenchWithAnError) {
  // The last case: the recovery gives up while threads of several jobs wait on it; the jobs
  // then close their windows without reading the torn-down queues (otherwise a use after
  // free: ASan reports it, and it shows in the JSON as path counters twice the commands posted).
  struct Case {
    const char* jobs;
    size_t count;
  };
  for (const Case& c :
       {Case{" --rw randread", 1}, Case{" --rw randread --numjobs 2 --threads 1", 2},
        Case{" --rw randwrite --size 512k --numjobs 4 --threads 2", 4}}) {
    const char* jobs = c.jobs;
    SCOPED_TRACE(std::string("jobs:") + jobs);
    int port = start_target({});
    ASSERT_NE(port, 0);
    std::string out = tmpdir() + "/bench-loss.json";
    std::string err = tmpdir() + "/bench-loss.err";
    unlink(out.c_str());
    int rc = -1;
    Clock::time_point killed{};
    std::thread bench_thread([&] {
      rc = run(host("bench", port,
                    std::string("--reconnect-delay 1 --ctrl-loss-tmo 3 -k 2 --bs 4k "
                                "--iodepth 4 --runtime 60 --poll event") +
                        jobs) +
               " --json '" + out + "' 2>'" + err + "'");
    });
    // Kill once the bench is connected (its admin and I/O queues accepted: starting took over
    // 8 s on a loaded emulated machine) and has read for 2 s.
    for (int i = 0; i < 600; ++i) {
      const std::string log = slurp(target_log_);
      size_t accepted = 0;
      for (size_t at = log.find(": accepted"); at != std::string::npos;
           at = log.find(": accepted", at + 1)) {
        ++accepted;
      }
      if (accepted >= 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    kill(target_pid_, SIGKILL);
    waitpid(target_pid_, nullptr, 0);
    target_pid_ = -1;
    killed = Clock::now();
    bench_thread.join();
    const auto after_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed).count();
    const std::string stderr_text = slurp(err);
    EXPECT_NE(rc, 0) << stderr_text;
    EXPECT_LT(after_ms, 30000) << "the bench must end soon after ctrl-loss-tmo, not at its runtime";
    EXPECT_NE(stderr_text.find("Host Pathing Error"), std::string::npos) << stderr_text;
    EXPECT_NE(stderr_text.find("ctrl-loss-tmo 3 s passed"), std::string::npos) << stderr_text;
    // The JSON report is written although every path is gone, and says so (the check used to
    // be skipped when there was no report).
    nlohmann::json r = nlohmann::json::parse(slurp(out), nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(r.is_object()) << "no JSON report: " << slurp(out);
    EXPECT_EQ(r["recovery"]["reconnects"], 0) << r["recovery"].dump();
    EXPECT_GE(r["recovery"]["path_errors"].get<uint64_t>(), 1u) << r["recovery"].dump();
    EXPECT_EQ(r["recovery"]["state"], "deleting") << r["recovery"].dump();
    EXPECT_EQ(r["recovery"]["failovers"], 0) << r["recovery"].dump();
    EXPECT_EQ(r["recovery"]["paths"].size(), 1u) << r["recovery"].dump();
    EXPECT_NE(r["error"].get<std::string>().find("ctrl-loss-tmo"), std::string::npos) << r.dump();
    // Every job ended with the recovery's error.
    ASSERT_EQ(r["results"].size(), 1u) << r.dump();
    EXPECT_EQ(r["results"][0]["jobs"].size(), c.count);
    for (const nlohmann::json& job : r["results"][0]["jobs"]) {
      EXPECT_NE(job["error"].get<std::string>().find("ctrl-loss-tmo"), std::string::npos)
          << job.dump();
      // Every command completed in the window was posted in it (no ramp), and at most
      // --iodepth more were posted and lost with the queue.
      const uint64_t ios =
          job["read"]["total_ios"].get<uint64_t>() + job["write"]["total_ios"].get<uint64_t>();
      const uint64_t posted = job["path"]["capsules_inline"].get<uint64_t>() +
                              job["path"]["capsules_by_reference"].get<uint64_t>();
      EXPECT_GE(posted, ios) << job.dump();
      EXPECT_LE(posted, ios + 4) << job.dump();
    }
    std::printf("bench%s ended %lld ms after the kill (exit %d):\n%s\n", jobs,
                static_cast<long long>(after_ms), rc, stderr_text.c_str());
  }
}

TEST_F(BenchTest, BadOptionsExitTwoNamingTheOption) {
  int port = start_target({});
  ASSERT_NE(port, 0);
  std::string err = tmpdir() + "/bad.err";
  auto bad = [&](const std::string& args) {
    return run(host("bench", port, args) + " >/dev/null 2>'" + err + "'");
  };
  EXPECT_EQ(bad("--bs 100"), 2);
  EXPECT_NE(slurp(err).find("--bs"), std::string::npos) << slurp(err);
  EXPECT_EQ(bad("--rw sideways"), 2);
  EXPECT_NE(slurp(err).find("--rw"), std::string::npos) << slurp(err);
  EXPECT_EQ(bad("--iodepth 0"), 2);
  EXPECT_EQ(bad("--poll sometimes"), 2);
  // Checked against the connected controller: 16 MiB namespace.
  EXPECT_EQ(bad("--size 64m --runtime 1"), 2);
  EXPECT_NE(slurp(err).find("--size"), std::string::npos) << slurp(err);
  EXPECT_EQ(bad("--numjobs 8 --runtime 1"), 2);  // the target grants 4 I/O queues
  EXPECT_NE(slurp(err).find("--numjobs"), std::string::npos) << slurp(err);
  EXPECT_EQ(bad("--numjobs 2 --threads 3 --runtime 1"), 2);
  EXPECT_NE(slurp(err).find("--threads 3 exceeds --numjobs 2"), std::string::npos) << slurp(err);
}

}  // namespace
}  // namespace nvmf::e2e
