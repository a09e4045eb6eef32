// SPDX-License-Identifier: BSD-3-Clause
// The `nvmf-host bench` engine: fio-like timed I/O over one Controller, one I/O queue per job,
// the jobs driven by one thread each or spread over --threads N threads (as SPDK's perf drives
// many qpairs per core with -P, or fio many files per job), completion latencies in a bounded
// histogram, path counters, an optional verify pattern, and the text and JSON reports.
//
// Design: one association (Controller) with numjobs I/O queues; job j drives IoQueue j (qid
// j + 1, host/io_queue.h) from thread job_thread(j, threads), which alone uses it, so the fast
// path takes no lock. A thread steps each of its jobs in turn (submit up to iodepth with a
// completion callback each, chained by delay_cmd_submit and posted with one ibv_post_send per
// job and round at its process_completions(), which also runs the callbacks of what finished)
// and waits only when none of them found work: --poll busy spins on; --poll event sleeps in one
// epoll set over every completion channel and rdma_cm channel of its queues
// (IoQueue::wait_fds / after_wait; the set is built at the first sleep and again when the fds
// change). Recovery is the Controller's: a lost association holds every job's commands and
// sends them again on the new one. Per I/O: one steady_clock read before the submit and one per
// batch of completions, a histogram increment; one more clock read per round of the thread's
// jobs; buffers and the queues' tables are set up before the clock starts; no allocation and no
// syscall besides the verbs post/poll (and, with --poll event, epoll_wait and the completion
// channels' read).
#ifndef NVMF_HOST_BENCH_BENCH_H_
#define NVMF_HOST_BENCH_BENCH_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "host/bench/histogram.h"
#include "host/controller.h"
#include "host/multipath.h"

namespace nvmf::host {

// fio's --rw values that bench supports.
enum class RwMode { kRead, kWrite, kRandRead, kRandWrite, kRandRw };
// "read"... ; kInvalidArgument "--rw 'x' is not one of read, write, randread, randwrite, randrw".
Result<RwMode> parse_rw(std::string_view text);
// fio's spelling of `mode` ("randread"), as parse_rw() takes it and the JSON report prints it.
const char* rw_name(RwMode mode);
// Whether `mode` issues Reads (read, randread, randrw) / Writes (write, randwrite, randrw).
bool rw_reads(RwMode mode);
bool rw_writes(RwMode mode);

// A block size list, "4k" or "4k,8k,16k" (parse_size suffixes). Every size must be a non-zero
// multiple of 512 bytes and at most 16 MiB; duplicates are refused. kInvalidArgument naming
// --bs and the offending item.
Result<std::vector<uint32_t>> parse_bs_list(std::string_view text);

// The percentiles reported, as fio's defaults (p50, p90, p99 and p99.9 among them).
inline constexpr double kPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                          80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
// fio's key for a percentile: "%f", e.g. "99.900000".
std::string percentile_key(double percent);

// One bench run, as `nvmf-host bench` takes it (fio's names; host/bench/bench_cli.h parses them).
struct BenchOptions {
  RwMode rw = RwMode::kRandRead;
  int rwmixread = 50;  // % of reads for randrw
  std::vector<uint32_t> bs = {4096};
  uint32_t iodepth = 1;    // commands in flight per job
  uint32_t numjobs = 1;    // jobs = I/O queues
  uint32_t threads = 0;    // threads driving the jobs, 1..numjobs; 0 = one per job
  double runtime_s = 10;   // measured seconds per block size
  double ramp_time_s = 0;  // I/O before measuring starts
  // Wall clock (seconds since the Unix epoch) before which no I/O starts: after connecting,
  // the run waits for it, so that bench processes started apart (one per host) measure the same
  // window. 0, or a time already past: at once.
  double start_at_unix_s = 0;
  uint64_t size = 0;  // bytes per job region; 0 = namespace / numjobs
  bool verify = false;
  uint64_t seed = 0x6e766d66;         // offsets and the verify pattern
  bool progress = false;              // a progress line on stderr once a second
  std::atomic<bool>* stop = nullptr;  // optional: ends the run early when set (SIGINT)
  // A share of a larger run (run_multipath_bench: one share per path): this run's numjobs jobs
  // are jobs first_job.. of all_jobs (0: numjobs), whose IDs, verify seeds and regions (the
  // namespace divided by all_jobs) they keep.
  uint32_t first_job = 0;
  uint32_t all_jobs = 0;
};

// The number of threads that drive `numjobs` jobs when --threads is `threads` (0: one per job).
uint32_t bench_threads(uint32_t numjobs, uint32_t threads);
// kInvalidArgument "--threads 3 exceeds --numjobs 2: ..." when threads > numjobs (0 is fine).
Status check_bench_threads(uint32_t numjobs, uint32_t threads);
// The run's times, as a library caller may set them (the CLI refuses the same values first):
// runtime_s finite and > 0, ramp_time_s and start_at_unix_s finite and >= 0 (seconds; an
// infinite one would reach a duration_cast). kInvalidArgument naming the option.
Status check_bench_times(const BenchOptions& o);
// The thread (0-based) that drives job `jobid` (0-based) of `threads` (>= 1): round robin,
// jobid % threads, as fio spreads files over a job and SPDK's perf qpairs over its cores.
inline uint32_t job_thread(uint32_t jobid, uint32_t threads) { return jobid % threads; }

// The sequence of (direction, offset) of one job: sequential ones wrap in the region, random
// ones are bs-aligned, uniform (xorshift64*), randrw reads with probability rwmixread %.
// `region_bytes` must be a non-zero multiple of `bs`. No allocation.
class IoPattern {
 public:
  struct Io {
    bool write;
    uint64_t offset;  // bytes from the namespace start
  };
  IoPattern(RwMode mode, int rwmixread, uint64_t region_offset, uint64_t region_bytes, uint32_t bs,
            uint64_t seed);
  // The next command's direction and byte offset (a multiple of bs inside the region).
  Io next();

 private:
  uint64_t random();
  RwMode mode_;
  int rwmixread_;
  uint64_t region_offset_;
  uint64_t blocks_;
  uint32_t bs_;
  uint64_t cursor_ = 0;  // next sequential block
  uint64_t state_;
};

// The verify pattern: every `unit` bytes (the LBA size) start with a 32-byte header
// {magic "NVMFBV01", namespace byte offset of the unit, unit size, seed} followed by bytes
// from a generator seeded by (seed, offset). The same offset always gets the same bytes, so a
// read may race a write of the same block and still verify. `offset`, `bytes` multiples of
// `unit`; `unit` a multiple of 8 and >= 64.
inline constexpr uint64_t kVerifyMagic = 0x313056424d46564eull;  // "NVMFBV01" little-endian
void fill_verify_pattern(uint8_t* buf, size_t bytes, uint64_t offset, uint32_t unit, uint64_t seed);
// Checks a buffer read from namespace byte `offset`. Returns -1 when it verifies, else the byte
// index in `buf` of the first mismatch (header fields first). No allocation.
int64_t check_verify_pattern(const uint8_t* buf, size_t bytes, uint64_t offset, uint32_t unit,
                             uint64_t seed);

// Which way the commands of the measured window went. writes_in_capsule, writes_keyed and
// reads count completed commands, exactly the ios of the window (RDMA READs by the target =
// writes_keyed; RDMA WRITEs by the target = reads); capsules_inline and capsules_by_reference
// count the queue's posts during the window (submissions, so they may differ from the
// completions by up to iodepth; after a reconnect the commands sent again count too).
struct PathCounters {
  uint64_t writes_in_capsule = 0;
  uint64_t writes_keyed = 0;
  uint64_t reads = 0;
  uint64_t capsules_inline = 0;        // posted with IBV_SEND_INLINE
  uint64_t capsules_by_reference = 0;  // posted from the registered SQE buffer
  // Adds every counter of `o` (sums over jobs).
  void add(const PathCounters& o);
};

// One direction of one job (or of all jobs) in the measured window.
struct DirectionStats {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  LatencyHistogram clat;  // ns from just before ibv_post_send to the completed slot
};

// One job (one I/O queue) at one block size, over the measured window; fio's
// "jobs" entry.
struct JobResult {
  uint32_t jobid = 0;
  uint16_t qid = 0;
  std::string target_path;  // "traddr:trsvcid" in a multipath bench; empty otherwise
  double runtime_s = 0;     // measured window
  // The measured window on the wall clock, ns since the Unix epoch (for all jobs: the earliest
  // start and the latest end): what lets a script check that separate processes overlapped.
  int64_t window_start_unix_ns = 0;
  int64_t window_end_unix_ns = 0;
  DirectionStats read, write;
  PathCounters path;
  uint64_t verify_checked = 0;     // reads whose data was checked
  uint64_t verify_errors = 0;      // reads whose data did not verify
  std::string verify_first_error;  // formatted after the run
  // Commands in flight when the association was lost, sent again after the reconnect (their
  // latency runs from the first post: the gap shows in clat max).
  uint64_t retried_ios = 0;
  // Wall-clock time (ns since the Unix epoch) of the job's first completion after each
  // reconnect, the first kMaxResumes of them: when I/O resumed.
  static constexpr size_t kMaxResumes = 16;
  std::array<int64_t, kMaxResumes> resumed_unix_ns{};
  uint32_t resumes = 0;
  Status status;  // transport/NVMe error that ended the job early
};

// Adds job `j` into `all`: sums of ios and bytes, merged histograms, the longest runtime, the
// earliest window start (jobs that never measured, 0, aside) and the latest window end.
void merge_into(JobResult& all, const JobResult& j);

// Every job at one block size of the --bs list.
struct BsResult {
  uint32_t bs = 0;  // bytes
  std::vector<JobResult> jobs;
  JobResult all;  // sums and merged histograms; runtime = the longest job's
};

// What run_bench() measured: bench_text() and bench_json() print it.
struct BenchReport {
  BenchOptions options;
  uint32_t lba_size = 0;
  uint64_t region_bytes = 0;  // per job
  std::string poll;           // "busy" / "event"
  std::vector<BsResult> results;
  // Verify totals over every phase (prefill, timed reads, final read-back).
  uint64_t verify_checked = 0;
  uint64_t verify_errors = 0;
  std::string verify_first_error;
  // Recovery over every phase: commands sent again, the longest completion latency (ns) of the
  // run, and the Controller's RecoveryStats at the end (filled by the caller).
  uint64_t retried_ios = 0;
  uint64_t longest_clat_ns = 0;
  // Per reconnect, in order: the first completion of any job afterwards (Unix ns).
  std::vector<int64_t> resumed_unix_ns;
  RecoveryStats recovery;
  Status status;  // first job error, if any
};

// Checks the options against the connected controller: numjobs I/O queues, threads within
// 0..numjobs, iodepth within the queue's slots, every bs a multiple of the LBA size and within
// max_command_bytes, regions within the namespace, times as check_bench_times(). kInvalidArgument
// naming the option (the CLI exits 2).
Result<uint64_t> bench_region_bytes(const Controller& c, const BenchOptions& o);

// Runs every bs of the list in turn (with --verify: prefill before, read-back after). Returns
// the report even when a job failed (report.status); errors only for setup (options, memory
// registration). Recovery is the Controller's (io_queue(): its recovery thread): commands in
// flight when the association is lost are held and sent again on the new one
// (JobResult::retried_ios). When recovery gives up (Host Pathing Error after fast-io-fail-tmo or
// ctrl-loss-tmo) every job ends with that error once its commands completed.
Result<BenchReport> run_bench(Controller& c, const BenchOptions& o);

// How many of `numjobs` jobs each path runs in a multipath bench, by the namespace's ANA state
// on each path at start (`ana_states`, proto::kAna*): numa puts every job on the first
// optimized path (non-optimized when none is); round-robin spreads them evenly over the
// optimized (else non-optimized) paths, the first paths taking one more. kUnavailable when no
// path is optimized or non-optimized.
Result<std::vector<uint32_t>> bench_jobs_per_path(const std::vector<uint8_t>& ana_states,
                                                  IoPolicy policy, uint32_t numjobs);

// One path of a multipath bench: its connected Controller and "traddr:trsvcid".
struct BenchPath {
  Controller* c = nullptr;
  std::string name;
};
// nvmf-host bench -x multipath: path p runs jobs_per_path[p] jobs (consecutive job IDs) with
// run_bench() on its own Controller, every path at once (each recovers on its own: a path lost
// for good ends its jobs with Host Pathing Error); the reports merged: jobs in ID order, each
// with its target_path, totals over all. Jobs stay on their path for the run. Errors: a path's
// setup error.
Result<BenchReport> run_multipath_bench(const std::vector<BenchPath>& paths,
                                        const std::vector<uint32_t>& jobs_per_path,
                                        const BenchOptions& o);

// Stable JSON schema (version 1), fio's field names where the meaning is the same:
// {"nvmf_bench_version":1, "global options":{... "threads" (the threads run: numjobs when
// --threads is 0) ...}, "lba_size", "size", "results":[{"bs",
// "jobs":[{"jobname","jobid","qid","runtime"(ms),"window_start_unix_ns","window_end_unix_ns",
// "read":{...},"write":{...},"path":{...},"verify":{...}}], "all":{...}}],
// "verify":{"enabled","checked","errors","passed",...}} ("global options" also has "start_at",
// Unix seconds, 0 = none)
// with per direction {"io_bytes","io_kbytes","bw_bytes","bw"(KiB/s),"iops","runtime"(ms),
// "total_ios","clat_ns":{"min","max","mean","stddev","N","percentile":{"50.000000":...}}},
// and "recovery":{"retried_ios","longest_clat_ns","losses","reconnects","longest_outage_ms",
// "resumed_unix_ns" (per reconnect: the first completion afterwards, ns since the Unix epoch),
// "last_loss",...}. A multipath bench adds each job's "target_path" and
// "multipath":{"paths":[{"path","jobs","read_ios","write_ios","read_bytes","write_bytes"}]}
// (every block size of the run summed).
nlohmann::json bench_json(const BenchReport& r);
// fio-like human text.
std::string bench_text(const BenchReport& r);

}  // namespace nvmf::host

#endif  // NVMF_HOST_BENCH_BENCH_H_
