// SPDX-License-Identifier: BSD-3-Clause
// Tests of the bench engine's pure parts: option parsing, the I/O pattern and rw mix, the verify
// pattern, and the JSON report schema. (The engine itself runs in ci/e2e/bench_test.cc.)
#include "host/bench/bench.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "host/bench/bench_cli.h"

namespace nvmf::host {
namespace {

TEST(ParseRw, AcceptsFioNamesAndRefusesOthers) {
  EXPECT_EQ(*parse_rw("read"), RwMode::kRead);
  EXPECT_EQ(*parse_rw("write"), RwMode::kWrite);
  EXPECT_EQ(*parse_rw("randread"), RwMode::kRandRead);
  EXPECT_EQ(*parse_rw("randwrite"), RwMode::kRandWrite);
  EXPECT_EQ(*parse_rw("randrw"), RwMode::kRandRw);
  Result<RwMode> bad = parse_rw("rw");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--rw 'rw'"), std::string::npos);
  for (RwMode m :
       {RwMode::kRead, RwMode::kWrite, RwMode::kRandRead, RwMode::kRandWrite, RwMode::kRandRw}) {
    EXPECT_EQ(*parse_rw(rw_name(m)), m);
  }
  EXPECT_TRUE(rw_reads(RwMode::kRandRw));
  EXPECT_TRUE(rw_writes(RwMode::kRandRw));
  EXPECT_FALSE(rw_writes(RwMode::kRandRead));
  EXPECT_FALSE(rw_reads(RwMode::kWrite));
}

TEST(ParseBsList, SingleSizesWithSuffixes) {
  EXPECT_EQ(*parse_bs_list("4096"), std::vector<uint32_t>{4096});
  EXPECT_EQ(*parse_bs_list("4k"), std::vector<uint32_t>{4096});
  EXPECT_EQ(*parse_bs_list("4K"), std::vector<uint32_t>{4096});
  EXPECT_EQ(*parse_bs_list("1m"), std::vector<uint32_t>{1u << 20});
  EXPECT_EQ(*parse_bs_list("512"), std::vector<uint32_t>{512});
}

TEST(ParseBsList, ListKeepsOrder) {
  EXPECT_EQ(*parse_bs_list("4k,8k,16k,32k"), (std::vector<uint32_t>{4096, 8192, 16384, 32768}));
  EXPECT_EQ(*parse_bs_list("32k,4k"), (std::vector<uint32_t>{32768, 4096}));
}

TEST(ParseBsList, RefusesBadItemsNamingThem) {
  for (const char* bad : {"", "0", "100", "4k,", ",4k", "4q", "-4k", "4k,4096", "32m", "4k,,8k"}) {
    Result<std::vector<uint32_t>> r = parse_bs_list(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("--bs"), std::string::npos) << r.status().message();
  }
  EXPECT_NE(parse_bs_list("4k,4096").status().message().find("twice"), std::string::npos);
}

TEST(PercentileKey, FormatsLikeFio) {
  EXPECT_EQ(percentile_key(50), "50.000000");
  EXPECT_EQ(percentile_key(99.9), "99.900000");
  EXPECT_EQ(percentile_key(99.99), "99.990000");
}

TEST(IoPattern, SequentialWrapsInsideTheRegion) {
  IoPattern p(RwMode::kRead, 50, 1 << 20, 4 * 4096, 4096, 1);
  std::vector<uint64_t> got;
  for (int i = 0; i < 6; ++i) {
    IoPattern::Io io = p.next();
    EXPECT_FALSE(io.write);
    got.push_back(io.offset);
  }
  uint64_t b = 1 << 20;
  EXPECT_EQ(got, (std::vector<uint64_t>{b, b + 4096, b + 8192, b + 12288, b, b + 4096}));
  IoPattern w(RwMode::kWrite, 50, 0, 8192, 8192, 1);
  EXPECT_TRUE(w.next().write);
  EXPECT_EQ(w.next().offset, 0u);
}

TEST(IoPattern, RandomOffsetsAreAlignedInRangeAndSpread) {
  const uint64_t base = 64 << 20, region = 1 << 20;
  IoPattern p(RwMode::kRandRead, 50, base, region, 8192, 42);
  std::set<uint64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    IoPattern::Io io = p.next();
    ASSERT_FALSE(io.write);
    ASSERT_GE(io.offset, base);
    ASSERT_LT(io.offset, base + region);
    ASSERT_EQ(io.offset % 8192, 0u);
    seen.insert(io.offset);
  }
  EXPECT_EQ(seen.size(), region / 8192);  // 128 blocks, 10000 draws: all hit
  IoPattern w(RwMode::kRandWrite, 50, 0, region, 4096, 42);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(w.next().write);
}

TEST(IoPattern, RwMixFollowsRwmixread) {
  for (int mix : {0, 30, 50, 70, 100}) {
    IoPattern p(RwMode::kRandRw, mix, 0, 1 << 20, 4096, 9);
    int reads = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) reads += p.next().write ? 0 : 1;
    EXPECT_NEAR(reads * 100.0 / n, mix, 1.0) << mix;
  }
}

TEST(IoPattern, SameSeedSameSequence) {
  IoPattern a(RwMode::kRandRw, 50, 0, 1 << 20, 4096, 5),
      b(RwMode::kRandRw, 50, 0, 1 << 20, 4096, 5);
  for (int i = 0; i < 100; ++i) {
    IoPattern::Io x = a.next(), y = b.next();
    ASSERT_EQ(x.write, y.write);
    ASSERT_EQ(x.offset, y.offset);
  }
}

TEST(VerifyPattern, RoundTripsAndHasAHeaderPerUnit) {
  std::vector<uint8_t> buf(8192);
  fill_verify_pattern(buf.data(), buf.size(), 1 << 20, 512, 77);
  EXPECT_EQ(check_verify_pattern(buf.data(), buf.size(), 1 << 20, 512, 77), -1);
  uint64_t magic, offset;
  std::memcpy(&magic, buf.data() + 512, 8);
  std::memcpy(&offset, buf.data() + 512 + 8, 8);
  EXPECT_EQ(magic, kVerifyMagic);
  EXPECT_EQ(offset, (1u << 20) + 512);
  // Units are independent: the second half checks on its own at its own offset.
  EXPECT_EQ(check_verify_pattern(buf.data() + 4096, 4096, (1 << 20) + 4096, 512, 77), -1);
}

TEST(VerifyPattern, FindsTheFirstBadByte) {
  std::vector<uint8_t> buf(4096);
  fill_verify_pattern(buf.data(), buf.size(), 0, 4096, 1);
  buf[1000] ^= 0x01;
  EXPECT_EQ(check_verify_pattern(buf.data(), buf.size(), 0, 4096, 1), 1000 / 8 * 8);
  std::vector<uint8_t> zero(4096, 0);
  EXPECT_EQ(check_verify_pattern(zero.data(), zero.size(), 0, 4096, 1), 0);  // no magic
}

TEST(VerifyPattern, DataFromAnotherOffsetOrSeedFails) {
  std::vector<uint8_t> buf(4096);
  fill_verify_pattern(buf.data(), buf.size(), 4096, 4096, 1);
  EXPECT_EQ(check_verify_pattern(buf.data(), buf.size(), 8192, 4096, 1), 8);   // offset field
  EXPECT_EQ(check_verify_pattern(buf.data(), buf.size(), 4096, 4096, 2), 24);  // seed field
  // Same header, different payload: a unit copied with a forged header still fails.
  std::vector<uint8_t> other(4096);
  fill_verify_pattern(other.data(), other.size(), 8192, 4096, 1);
  std::memcpy(other.data(), buf.data(), 32);
  EXPECT_EQ(check_verify_pattern(other.data(), other.size(), 4096, 4096, 1), 32);
}

TEST(BenchThreads, ZeroIsOnePerJobElseTheGivenCount) {
  EXPECT_EQ(bench_threads(8, 0), 8u);
  EXPECT_EQ(bench_threads(1, 0), 1u);
  EXPECT_EQ(bench_threads(8, 2), 2u);
  EXPECT_EQ(bench_threads(8, 8), 8u);
  EXPECT_EQ(bench_threads(64, 1), 1u);
}

TEST(JobThread, RoundRobinSpreadsJobsEvenly) {
  // 8 jobs on 2 threads: 0, 2, 4, 6 on thread 0 and 1, 3, 5, 7 on thread 1.
  for (uint32_t j = 0; j < 8; ++j) EXPECT_EQ(job_thread(j, 2), j % 2) << j;
  EXPECT_EQ(job_thread(6, 2), 0u);
  EXPECT_EQ(job_thread(7, 2), 1u);
  // 64 jobs on 3 threads: 22, 21, 21; every thread gets at least one job whenever
  // threads <= numjobs, and no thread index reaches threads.
  for (uint32_t threads : {1u, 2u, 3u, 7u, 64u}) {
    std::vector<uint32_t> per(threads, 0);
    for (uint32_t j = 0; j < 64; ++j) {
      uint32_t t = job_thread(j, threads);
      ASSERT_LT(t, threads);
      ++per[t];
    }
    for (uint32_t t = 0; t < threads; ++t) {
      EXPECT_GE(per[t], 64 / threads) << threads << " threads, thread " << t;
      EXPECT_LE(per[t], 64 / threads + 1) << threads << " threads, thread " << t;
    }
  }
}

TEST(CheckBenchThreads, MoreThreadsThanJobsIsRefused) {
  EXPECT_TRUE(check_bench_threads(2, 0).ok());
  EXPECT_TRUE(check_bench_threads(2, 1).ok());
  EXPECT_TRUE(check_bench_threads(2, 2).ok());
  Status st = check_bench_threads(2, 3);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--threads 3 exceeds --numjobs 2"), std::string::npos)
      << st.message();
}

// The bench subcommand's parsing: --threads lands in BenchArgs and is checked against
// --numjobs by check_bench_args() (main prints its message in the usage shape, exit 2).
struct ParsedBench {
  bool parsed = false;    // CLI11 accepted the line
  std::string cli_error;  // CLI11's message when it did not
  Status checked;         // check_bench_args()
  BenchArgs args;
};
ParsedBench parse_bench(std::vector<std::string> argv) {
  ParsedBench p;
  CLI::App app("nvmf-host");
  CLI::App* bench = add_bench_subcommand(app, p.args);
  argv.insert(argv.begin(), "bench");
  std::reverse(argv.begin(), argv.end());  // CLI11 takes a vector in reverse order
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    p.cli_error = e.what();
    return p;
  }
  p.parsed = true;
  p.checked = check_bench_args(*bench, p.args);
  return p;
}

TEST(BenchArgs, ThreadsParsesAndIsCheckedAgainstNumjobs) {
  ParsedBench d = parse_bench({"--numjobs", "8"});
  ASSERT_TRUE(d.parsed) << d.cli_error;
  EXPECT_TRUE(d.checked.ok()) << d.checked.to_string();
  EXPECT_EQ(d.args.threads, 0u);  // the default: one thread per job
  ParsedBench two = parse_bench({"--numjobs", "8", "--threads", "2"});
  ASSERT_TRUE(two.parsed) << two.cli_error;
  EXPECT_TRUE(two.checked.ok()) << two.checked.to_string();
  EXPECT_EQ(two.args.threads, 2u);
  EXPECT_EQ(two.args.numjobs, 8u);
  ParsedBench over = parse_bench({"--numjobs", "2", "--threads", "3"});
  ASSERT_TRUE(over.parsed) << over.cli_error;
  EXPECT_EQ(over.checked.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(over.checked.message().find("--threads 3 exceeds --numjobs 2"), std::string::npos)
      << over.checked.message();
  // Without --numjobs (1), any --threads above 1 is refused.
  EXPECT_FALSE(parse_bench({"--threads", "2"}).checked.ok());
  ParsedBench range = parse_bench({"--numjobs", "64", "--threads", "65"});
  EXPECT_FALSE(range.parsed);
  EXPECT_NE(range.cli_error.find("--threads"), std::string::npos) << range.cli_error;
  EXPECT_FALSE(parse_bench({"--threads", "x"}).parsed);
  EXPECT_FALSE(parse_bench({"--threads", "-1"}).parsed);
}

BenchReport sample_report() {
  BenchReport r;
  r.options.rw = RwMode::kRandRw;
  r.options.bs = {4096, 8192};
  r.options.iodepth = 4;
  r.options.numjobs = 2;
  r.options.runtime_s = 2;
  r.options.verify = true;
  r.lba_size = 512;
  r.region_bytes = 1 << 20;
  r.poll = "busy";
  BsResult b;
  b.bs = 4096;
  for (uint32_t j = 0; j < 2; ++j) {
    JobResult jr;
    jr.jobid = j;
    jr.qid = static_cast<uint16_t>(j + 1);
    jr.runtime_s = 2.0;
    for (int i = 0; i < 1000; ++i) jr.read.clat.record(500000 + i * 100);
    jr.read.ios = 1000;
    jr.read.bytes = 1000 * 4096;
    jr.write.ios = 500;
    jr.write.bytes = 500 * 4096;
    for (int i = 0; i < 500; ++i) jr.write.clat.record(800000);
    jr.path.writes_in_capsule = 500;
    jr.path.reads = 1000;
    jr.path.capsules_inline = 1000;
    jr.path.capsules_by_reference = 500;
    jr.verify_checked = 1000;
    b.jobs.push_back(jr);
  }
  b.all = b.jobs[0];
  b.all.read.clat.merge(b.jobs[1].read.clat);
  b.all.read.ios = 2000;
  b.all.read.bytes = 2000 * 4096;
  r.results.push_back(b);
  r.verify_checked = 2000;
  return r;
}

TEST(BenchJson, SchemaUsesFioNames) {
  nlohmann::json j = bench_json(sample_report());
  EXPECT_EQ(j["nvmf_bench_version"], 1);
  const nlohmann::json& g = j["global options"];
  EXPECT_EQ(g["rw"], "randrw");
  EXPECT_EQ(g["bs"], (std::vector<uint32_t>{4096, 8192}));
  EXPECT_EQ(g["iodepth"], 4);
  EXPECT_EQ(g["numjobs"], 2);
  EXPECT_EQ(g["threads"], 2);  // --threads 0: one per job
  EXPECT_EQ(g["poll"], "busy");
  ASSERT_EQ(j["results"].size(), 1u);
  const nlohmann::json& res = j["results"][0];
  EXPECT_EQ(res["bs"], 4096);
  ASSERT_EQ(res["jobs"].size(), 2u);
  const nlohmann::json& job = res["jobs"][1];
  EXPECT_EQ(job["jobname"], "job1");
  EXPECT_EQ(job["qid"], 2);
  EXPECT_EQ(job["runtime"], 2000);  // ms
  const nlohmann::json& rd = job["read"];
  EXPECT_EQ(rd["total_ios"], 1000);
  EXPECT_EQ(rd["io_bytes"], 1000 * 4096);
  EXPECT_DOUBLE_EQ(rd["iops"].get<double>(), 500.0);
  EXPECT_EQ(rd["bw_bytes"], 1000 * 4096 / 2);
  EXPECT_EQ(rd["bw"], 1000 * 4096 / 2 / 1024);  // KiB/s as fio
  const nlohmann::json& clat = rd["clat_ns"];
  EXPECT_EQ(clat["min"], 500000);
  EXPECT_EQ(clat["max"], 599900);
  EXPECT_NEAR(clat["mean"].get<double>(), 549950.0, 1e-6);
  EXPECT_GT(clat["stddev"].get<double>(), 28000);
  EXPECT_EQ(clat["N"], 1000);
  for (const char* k :
       {"1.000000", "50.000000", "90.000000", "99.000000", "99.900000", "99.990000"}) {
    ASSERT_TRUE(clat["percentile"].contains(k)) << k;
  }
  EXPECT_NEAR(clat["percentile"]["50.000000"].get<double>(), 549900, 549900 / 128.0);
  EXPECT_EQ(job["write"]["clat_ns"]["percentile"]["99.000000"], 800000);
  const nlohmann::json& path = job["path"];
  EXPECT_EQ(path["writes_in_capsule"], 500);
  EXPECT_EQ(path["writes_keyed"], 0);
  EXPECT_EQ(path["rdma_reads"], 0);
  EXPECT_EQ(path["reads"], 1000);
  EXPECT_EQ(path["capsules_inline"], 1000);
  EXPECT_EQ(path["capsules_by_reference"], 500);
  EXPECT_EQ(res["all"]["jobname"], "all");
  EXPECT_EQ(res["all"]["read"]["total_ios"], 2000);
  EXPECT_FALSE(res["all"].contains("qid"));
  EXPECT_EQ(j["verify"]["enabled"], true);
  EXPECT_EQ(j["verify"]["passed"], true);
  EXPECT_EQ(j["verify"]["checked"], 2000);
  EXPECT_EQ(j["error"], "");
}

TEST(BenchJson, WindowsAreOnTheWallClockAndAllSpansEveryJob) {
  BenchReport r = sample_report();
  r.options.start_at_unix_s = 1764680000.5;
  r.results[0].jobs[0].window_start_unix_ns = 1764680001000000000;
  r.results[0].jobs[0].window_end_unix_ns = 1764680003000000000;
  r.results[0].jobs[1].window_start_unix_ns = 1764680001200000000;
  r.results[0].jobs[1].window_end_unix_ns = 1764680003100000000;
  JobResult all;
  for (const JobResult& j : r.results[0].jobs) merge_into(all, j);
  EXPECT_EQ(all.window_start_unix_ns, 1764680001000000000);  // the earliest start
  EXPECT_EQ(all.window_end_unix_ns, 1764680003100000000);    // the latest end
  r.results[0].all = all;
  nlohmann::json j = bench_json(r);
  EXPECT_DOUBLE_EQ(j["global options"]["start_at"].get<double>(), 1764680000.5);
  const nlohmann::json& res = j["results"][0];
  EXPECT_EQ(res["jobs"][1]["window_start_unix_ns"], 1764680001200000000);
  EXPECT_EQ(res["jobs"][1]["window_end_unix_ns"], 1764680003100000000);
  EXPECT_EQ(res["all"]["window_start_unix_ns"], 1764680001000000000);
  EXPECT_EQ(res["all"]["window_end_unix_ns"], 1764680003100000000);
  // A job that never measured (0) does not pull the start of "all" to the epoch.
  JobResult none;
  merge_into(none, JobResult{});
  merge_into(none, r.results[0].jobs[1]);
  EXPECT_EQ(none.window_start_unix_ns, 1764680001200000000);
}

// A library caller bypasses the CLI's checks: bench_region_bytes() refuses every time that is
// not a finite number of seconds in range (an infinite one would reach a duration_cast).
TEST(BenchTimes, OnlyFiniteSecondsInRangePass) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BenchOptions good;
  good.runtime_s = 0.5;
  good.ramp_time_s = 0;
  good.start_at_unix_s = 1764680000.5;
  EXPECT_TRUE(check_bench_times(good).ok());
  struct Case {
    double runtime, ramp, start_at;
    const char* option;
  };
  for (const Case& c :
       {Case{inf, 0, 0, "--runtime"}, Case{nan, 0, 0, "--runtime"}, Case{0, 0, 0, "--runtime"},
        Case{-inf, 0, 0, "--runtime"}, Case{1, inf, 0, "--ramp_time"},
        Case{1, nan, 0, "--ramp_time"}, Case{1, -0.5, 0, "--ramp_time"},
        Case{1, 0, inf, "--start-at"}, Case{1, 0, nan, "--start-at"}, Case{1, 0, -1, "--start-at"},
        Case{1, 0, -inf, "--start-at"}}) {
    BenchOptions o = good;
    o.runtime_s = c.runtime;
    o.ramp_time_s = c.ramp;
    o.start_at_unix_s = c.start_at;
    Status st = check_bench_times(o);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.option << " " << st.to_string();
    EXPECT_NE(st.to_string().find(c.option), std::string::npos) << st.to_string();
  }
}

TEST(BenchArgs, StartAtTakesUnixSecondsAtMostAnHourAhead) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  ParsedBench none = parse_bench({});
  ASSERT_TRUE(none.parsed) << none.cli_error;
  EXPECT_EQ(none.args.start_at, 0.0);
  const std::string soon = std::to_string(static_cast<int64_t>(now) + 30);
  ParsedBench ok = parse_bench({"--start-at", soon});
  ASSERT_TRUE(ok.parsed) << ok.cli_error;
  EXPECT_TRUE(ok.checked.ok()) << ok.checked.to_string();
  EXPECT_EQ(ok.args.start_at, std::stod(soon));
  // Already past: accepted, the run starts at once.
  EXPECT_TRUE(parse_bench({"--start-at", "1000"}).checked.ok());
  // Milliseconds by mistake: refused, naming the option and the unit.
  const std::string ms = std::to_string(static_cast<int64_t>(now) * 1000);
  ParsedBench far = parse_bench({"--start-at", ms});
  EXPECT_EQ(far.checked.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(far.checked.message().find("--start-at"), std::string::npos) << far.checked.message();
  EXPECT_NE(far.checked.message().find("Unix seconds"), std::string::npos) << far.checked.message();
  // Every odd value gets one message naming the option and the unit.
  for (const char* odd : {"-1", "nan", "inf", "-inf", "1e400"}) {
    ParsedBench p = parse_bench({"--start-at", odd});
    ASSERT_TRUE(p.parsed) << odd << ": " << p.cli_error;
    EXPECT_EQ(p.checked.code(), StatusCode::kInvalidArgument) << odd;
    EXPECT_NE(p.checked.message().find("--start-at takes Unix seconds"), std::string::npos)
        << odd << ": " << p.checked.message();
  }
  EXPECT_FALSE(parse_bench({"--start-at", "5abc"}).parsed);
  ParsedBench minus_zero = parse_bench({"--start-at", "-0"});
  ASSERT_TRUE(minus_zero.checked.ok()) << minus_zero.checked.to_string();
  EXPECT_FALSE(std::signbit(minus_zero.args.start_at));
  // The kind: every seconds option refuses nan (CLI11's range checks let it through).
  for (const char* opt : {"--runtime", "--ramp_time"}) {
    ParsedBench p = parse_bench({opt, "nan"});
    EXPECT_FALSE(p.parsed && p.checked.ok()) << opt;
    if (p.parsed) {
      EXPECT_NE(p.checked.message().find(opt), std::string::npos) << p.checked.message();
    }
  }
  EXPECT_FALSE(parse_bench({"--start-at", "soon"}).parsed);
}

TEST(BenchJson, ThreadsIsTheCountRun) {
  BenchReport r = sample_report();
  r.options.threads = 1;
  EXPECT_EQ(bench_json(r)["global options"]["threads"], 1);
  r.options.numjobs = 64;
  r.options.threads = 2;
  EXPECT_EQ(bench_json(r)["global options"]["threads"], 2);
}

TEST(BenchJson, EmptyDirectionHasNoPercentilesAndVerifyFailureShows) {
  BenchReport r = sample_report();
  r.results[0].jobs[0].write = DirectionStats{};
  r.verify_errors = 1;
  r.verify_first_error = "job 0: data mismatch at byte 4096 of the namespace";
  nlohmann::json j = bench_json(r);
  const nlohmann::json& w = j["results"][0]["jobs"][0]["write"];
  EXPECT_EQ(w["total_ios"], 0);
  EXPECT_EQ(w["iops"], 0.0);
  EXPECT_TRUE(w["clat_ns"]["percentile"].empty());
  EXPECT_EQ(j["verify"]["passed"], false);
  EXPECT_EQ(j["verify"]["first_error"], r.verify_first_error);
}

TEST(BenchText, ShowsIopsLatencyAndPathCounters) {
  std::string t = bench_text(sample_report());
  EXPECT_NE(t.find("bs=4096 rw=randrw rwmixread=50 iodepth=4 numjobs=2 threads=2 poll=busy"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("job1 (qid 2):"), std::string::npos) << t;
  EXPECT_NE(t.find("read: IOPS=500.0"), std::string::npos) << t;
  EXPECT_NE(t.find("clat (usec): min=500.0, max=599.9"), std::string::npos) << t;
  EXPECT_NE(t.find("p99.9="), std::string::npos) << t;
  EXPECT_NE(t.find("in-capsule writes 500"), std::string::npos) << t;
  EXPECT_NE(t.find("verify: 2000 reads checked, 0 errors"), std::string::npos) << t;
}

// A multipath bench's jobs by ANA state: numa takes the first optimized path, round-robin the
// optimized paths in turn; non-optimized ones only when no path is optimized.
TEST(BenchJobsPerPath, FollowAnaStatesAndThePolicy) {
  const std::vector<uint8_t> states = {proto::kAnaNonOptimized, proto::kAnaOptimized,
                                       proto::kAnaInaccessible, proto::kAnaOptimized};
  EXPECT_EQ(bench_jobs_per_path(states, IoPolicy::kNuma, 4).value(),
            (std::vector<uint32_t>{0, 4, 0, 0}));
  EXPECT_EQ(bench_jobs_per_path(states, IoPolicy::kRoundRobin, 5).value(),
            (std::vector<uint32_t>{0, 3, 0, 2}));
  EXPECT_EQ(
      bench_jobs_per_path({proto::kAnaChange, proto::kAnaNonOptimized}, IoPolicy::kRoundRobin, 2)
          .value(),
      (std::vector<uint32_t>{0, 2}));
  auto none =
      bench_jobs_per_path({proto::kAnaInaccessible, proto::kAnaPersistentLoss}, IoPolicy::kNuma, 1);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnavailable);
}

// Each job of a multipath bench names its path; the report sums the I/O per path.
TEST(BenchJson, MultipathJobsNameTheirPathAndThePathsAreSummed) {
  BenchReport r = sample_report();
  r.results[0].jobs[0].target_path = "10.0.0.1:4420";
  r.results[0].jobs[1].target_path = "10.0.0.1:4421";
  nlohmann::json j = bench_json(r);
  EXPECT_EQ(j["results"][0]["jobs"][1]["target_path"], "10.0.0.1:4421");
  EXPECT_EQ(j["multipath"]["paths"], nlohmann::json::parse(R"([
      {"path": "10.0.0.1:4420", "jobs": 1, "read_ios": 1000, "write_ios": 500,
       "read_bytes": 4096000, "write_bytes": 2048000},
      {"path": "10.0.0.1:4421", "jobs": 1, "read_ios": 1000, "write_ios": 500,
       "read_bytes": 4096000, "write_bytes": 2048000}])"));
  const std::string t = bench_text(r);
  EXPECT_NE(t.find("job1 (qid 2 on 10.0.0.1:4421):"), std::string::npos) << t;
  EXPECT_NE(t.find("path 10.0.0.1:4420: 1 jobs, 1000 reads, 500 writes"), std::string::npos) << t;
  EXPECT_FALSE(bench_json(sample_report()).contains("multipath")) << "one path: no such key";
}

}  // namespace
}  // namespace nvmf::host
