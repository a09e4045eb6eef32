// SPDX-License-Identifier: BSD-3-Clause
// The `nvmf-host bench` subcommand: its CLI11 options and its run (host/bench/bench.h does the
// work).
#ifndef NVMF_HOST_BENCH_BENCH_CLI_H_
#define NVMF_HOST_BENCH_BENCH_CLI_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "host/bench/bench.h"
#include "host/multipath.h"
#include "host/options.h"

namespace nvmf::host {

// The bench options as typed (fio's names and meanings).
struct BenchArgs {
  std::string rw = "randread";
  int rwmixread = 50;
  std::string bs = "4k";
  uint32_t iodepth = 1;
  uint32_t numjobs = 1;
  uint32_t threads = 0;  // 0: one thread per job
  double runtime = 10;   // seconds
  double ramp_time = 0;  // seconds
  double start_at = 0;   // Unix seconds; 0: at once
  std::string size;      // per job; empty = namespace / numjobs
  bool verify = false;
  std::string poll = "busy";
  std::string output_format = "normal";
  std::string output;      // --json FILE: the JSON report's file; empty = stdout
  std::string old_output;  // the refused --output (check_bench_args())
  // rw, bs and size parsed by check_bench_args().
  RwMode rw_mode = RwMode::kRandRead;
  std::vector<uint32_t> bs_list;
  uint64_t size_bytes = 0;  // 0: namespace / numjobs
  // -x multipath: every path connected, the jobs spread by ANA state and --iopolicy
  // (bench_jobs_per_path), per-path counts in the report.
  bool multipath = false;
  IoPolicy iopolicy = IoPolicy::kNuma;
};

// How far ahead --start-at may be, in seconds.
inline constexpr double kMaxStartAheadS = 3600;

// Adds the `bench` subcommand to `app`; the values land in `args`.
CLI::App* add_bench_subcommand(CLI::App& app, BenchArgs& args);

// After parsing, before anything missing (-a, -n) is reported: refuses --threads above
// --numjobs, parses --rw, --bs and --size into rw_mode, bs_list and size_bytes
// (kInvalidArgument naming the option: "--threads 3 exceeds --numjobs 2: ...", "--size is 0");
// --json [FILE] selects the JSON report (into FILE; without FILE or with "-" on stdout).
// kInvalidArgument naming --json when the removed --output was given; naming --runtime or
// --ramp_time when nan (CLI11's range checks let it through); naming --start-at when it is
// negative, nan or infinite, or more than kMaxStartAheadS ahead of the wall clock (a time
// already past starts at once; -0 becomes 0).
Status check_bench_args(const CLI::App& bench, BenchArgs& args);

// Connects (one I/O queue per job, queue size >= iodepth + 1, --poll), runs, prints, disconnects.
// Exit 0; 1 on connection/I/O errors or a verify mismatch; 2 on bad options.
int cmd_bench(HostOptions opts, const BenchArgs& args);

}  // namespace nvmf::host

#endif  // NVMF_HOST_BENCH_BENCH_CLI_H_
