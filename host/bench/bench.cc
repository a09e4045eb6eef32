// SPDX-License-Identifier: BSD-3-Clause
// The `nvmf-host bench` engine and reports; see bench.h.
#include "host/bench/bench.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <thread>

#include "common/in_capsule.h"
#include "common/log.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "host/cli/cli_util.h"

namespace nvmf::host {
namespace {

constexpr uint32_t kMaxBs = 16u << 20;
constexpr size_t kVerifyHeaderBytes = 32;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The 64-bit word `i` of the verify payload of the unit at `offset`.
uint64_t pattern_word(uint64_t seed, uint64_t offset, size_t i) {
  return splitmix64(seed ^ (offset * 0x100000001b3ull) ^ (static_cast<uint64_t>(i) << 48));
}

void put64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint64_t get64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Progress of one job for the monitor thread: single writer, relaxed.
struct Progress {
  std::atomic<uint64_t> ios{0};
  std::atomic<uint64_t> lat_ns{0};
  void add(uint64_t lat) {
    ios.store(ios.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    lat_ns.store(lat_ns.load(std::memory_order_relaxed) + lat, std::memory_order_relaxed);
  }
};

enum class Phase { kTimed, kFill, kReadBack };

// The capsules an IoQueue posted since start() (IBV_SEND_INLINE or by reference), over every
// connection a reconnect gives it (IoQueueStats::capsules).
class CapsuleWindow {
 public:
  void start(const IoQueue& q) { base_ = q.stats().capsules; }
  QueueCounters total(const IoQueue& q) const { return q.stats().capsules - base_; }

 private:
  QueueCounters base_;
};

// One job: its IoQueue (io_queue(index): qid index + 1), its buffers (iodepth x max bs,
// registered once), one command slot per buffer, and the state of the phase it runs, which its
// thread advances with step() in turn with its other jobs (start, then step / wait until
// kDone). Recovery is the Controller's: a lost association holds the job's commands and sends
// them again (JobResult::retried_ios); Host Pathing Error (fast-io-fail-tmo, ctrl-loss-tmo)
// ends the job.
class Job {
 public:
  // What a step (or a wait) of the job did.
  enum class Step {
    kWorked,  // completions ran, or the job is ending: step again before any wait
    kIdle,    // found nothing: its thread may wait
    kDone,    // the phase ended for this job (its JobResult is complete)
  };

  Job(uint32_t jobid, uint32_t index, IoQueue* q, const Controller& c, const BenchOptions& o,
      uint64_t region_offset, uint64_t region_bytes, uint32_t buf_bytes)
      : c_(c),
        jobid_(jobid),
        index_(index),
        qid_(static_cast<uint16_t>(index + 1)),
        q_(q),
        lba_size_(c.lba_size()),
        limits_(c.transfer_limits()),
        o_(o),
        region_offset_(region_offset),
        region_bytes_(region_bytes),
        buf_bytes_(buf_bytes),
        commands_(o.iodepth),
        free_bufs_(o.iodepth) {}

  Status setup(Controller& c) {
    size_t bytes = static_cast<size_t>(buf_bytes_) * o_.iodepth;
    NVMF_ASSIGN_OR_RETURN(verbs::RegisteredBuffer buf, c.allocate_buffer(bytes));
    buf_.emplace(std::move(buf));
    // Without --verify, writes carry a fixed pseudo-random fill (not zeros, which some
    // backends could treat specially).
    for (size_t i = 0; i + 8 <= bytes; i += 8) put64(buf_->data() + i, splitmix64(i));
    for (uint32_t b = 0; b < o_.iodepth; ++b) commands_[b].job = this;
    // Each round's capsules go out with one ibv_post_send at its poll.
    q_->set_delay_cmd_submit(true);
    return ok_status();
  }

  Progress& progress() { return progress_; }
  uint32_t index() const { return index_; }  // in this run's job list
  IoQueue* queue() const { return q_; }
  bool running() const { return running_; }
  // The last step() found nothing.
  bool idle() const { return idle_; }

  // Starts phase `phase` with block size `bs` into `out` (kTimed: ramp then runtime, per
  // options; kFill / kReadBack: one sequential pass over the region, writes / verified reads).
  void start(Phase phase, uint32_t bs, JobResult& out);
  // One round: the phase clock (read by the caller once per round of all its jobs: `now`,
  // now_ns()), submissions up to iodepth, one process_completions() (which posts them and runs
  // the callbacks of what finished). Where the clock source has no vDSO (hpet, as in the
  // soft-RoCE QEMU guest), each clock read is a system call: a thread that read it once per job
  // and round made about 600k of them in 2 s at 32 jobs, twenty times its verbs calls.
  Step step(int64_t now);
  // After a step() that found nothing: waits on this job's queue alone (IoQueue::wait: busy
  // returns at once, event sleeps on its channels, or on the controller while reconnecting).
  void wait() { q_->wait(Deadline::max()); }
  // Around the thread's sleep on every job's channels at once (IoQueue::wait_fds, after_wait).
  void wait_fds(pollfd fds[2]) {
    q_->wait_fds(fds);  // posts what delay_cmd_submit held back: a failure drops the connection
  }
  void after_wait(const pollfd fds[2]) { q_->after_wait(fds); }

 private:
  // One command in flight: its buffer is commands_'s index.
  struct Command {
    Job* job = nullptr;
    bool write = false;
    bool in_capsule = false;
    uint64_t offset = 0;
    int64_t start_ns = 0;
  };
  static void done(void* arg, const IoCompletion& c) {
    auto* cmd = static_cast<Command*>(arg);
    cmd->job->complete(*cmd, c);
  }
  Status submit(const IoPattern::Io& io, uint32_t bs);
  void complete(Command& cmd, const IoCompletion& c);
  // The measured window ends at `t`: the capsule counters of the window into out_.
  void close_window(int64_t t);
  // Ends the phase for this job: its runtime, error and first mismatch into out_.
  Step finish();

  const Controller& c_;
  uint32_t jobid_;
  uint32_t index_;
  uint16_t qid_;
  IoQueue* q_;
  uint32_t lba_size_;
  TransferLimits limits_;
  const BenchOptions& o_;
  uint64_t region_offset_;
  uint64_t region_bytes_;
  uint32_t buf_bytes_;
  std::optional<verbs::RegisteredBuffer> buf_;
  std::vector<Command> commands_;
  std::vector<uint32_t> free_bufs_;
  size_t n_free_ = 0;
  Progress progress_;
  uint64_t connections_seen_ = 0;  // IoQueueStats::connections at the last completion
  // First verify mismatch, formatted after the run.
  bool have_mismatch_ = false;
  uint64_t mismatch_offset_ = 0;

  // The phase being run (start() to finish()).
  JobResult* out_ = nullptr;
  uint32_t bs_ = 0;
  bool running_ = false;
  bool idle_ = false;
  bool timed_ = false;
  std::optional<IoPattern> pattern_;
  uint64_t to_submit_ = 0;
  int64_t ramp_end_ = 0;
  int64_t end_ = 0;
  bool measuring_ = false;
  bool ended_ = false;
  int64_t measure_start_ = 0;
  int64_t measure_end_ = 0;
  int64_t batch_ns_ = 0;  // the clock of this process_completions()'s callbacks (0: not read)
  CapsuleWindow window_;
  Status st_;  // the error that ends the job
};

Status Job::submit(const IoPattern::Io& io, uint32_t bs) {
  const uint32_t b = free_bufs_[--n_free_];
  uint8_t* data = buf_->data() + static_cast<size_t>(b) * buf_bytes_;
  const uint64_t slba = io.offset / lba_size_;
  if (io.write && o_.verify) fill_verify_pattern(data, bs, io.offset, lba_size_, o_.seed);
  const DataSegment seg{data, bs, buf_->lkey(), buf_->rkey()};
  Command& cmd = commands_[b];
  cmd.write = io.write;
  cmd.offset = io.offset;
  // The path the queue's planner takes for one piece (host/io_plan.h), for the counters.
  cmd.in_capsule =
      io.write && choose_write_path(limits_.in_capsule, bs, 1) == WritePath::kInCapsule;
  cmd.start_ns = now_ns();
  Status st = io.write ? q_->submit_write(slba, std::span<const DataSegment>(&seg, 1), done, &cmd)
                       : q_->submit_read(slba, seg, done, &cmd);
  if (!st.ok()) [[unlikely]] {
    free_bufs_[n_free_++] = b;
    const std::string what =
        std::string(io.write ? "Write" : "Read") + " at byte offset " + std::to_string(io.offset);
    // Host Pathing Error (the association gave up): named with its reason.
    return st.nvme_status() ? c_.command_status(*st.nvme_status(), what) : st.annotate(what);
  }
  return ok_status();
}

void Job::complete(Command& cmd, const IoCompletion& c) {
  free_bufs_[n_free_++] = static_cast<uint32_t>(&cmd - commands_.data());
  JobResult& out = *out_;
  if (batch_ns_ == 0) batch_ns_ = now_ns();  // one clock read per batch of completions
  out.retried_ios += c.resubmissions;
  if (q_->connections() != connections_seen_) [[unlikely]] {
    // The first completion on a new association: when I/O resumed.
    connections_seen_ = q_->connections();
    if (out.resumes < JobResult::kMaxResumes) out.resumed_unix_ns[out.resumes++] = unix_now_ns();
  }
  if (c.status != 0) [[unlikely]] {
    if (st_.ok()) {
      st_ = c_.command_status(c.status, std::string(cmd.write ? "Write" : "Read") +
                                            " at byte offset " + std::to_string(cmd.offset));
    }
    return;
  }
  if (!cmd.write && o_.verify) {
    const uint8_t* data = buf_->data() + (&cmd - commands_.data()) * size_t{buf_bytes_};
    ++out.verify_checked;
    int64_t bad = check_verify_pattern(data, bs_, cmd.offset, lba_size_, o_.seed);
    if (bad >= 0) {
      ++out.verify_errors;
      if (!have_mismatch_) {
        have_mismatch_ = true;
        mismatch_offset_ = cmd.offset + static_cast<uint64_t>(bad);
      }
    }
  }
  if (!measuring_) return;
  const uint64_t lat = static_cast<uint64_t>(std::max<int64_t>(0, batch_ns_ - cmd.start_ns));
  DirectionStats& d = cmd.write ? out.write : out.read;
  ++d.ios;
  d.bytes += bs_;
  d.clat.record(lat);
  ++(!cmd.write       ? out.path.reads
     : cmd.in_capsule ? out.path.writes_in_capsule
                      : out.path.writes_keyed);
  progress_.add(lat);
}

void Job::start(Phase phase, uint32_t bs, JobResult& out) {
  out_ = &out;
  bs_ = bs;
  st_ = ok_status();
  idle_ = false;
  out.jobid = jobid_;
  out.qid = qid_;
  running_ = true;
  RwMode mode = phase == Phase::kTimed  ? o_.rw
                : phase == Phase::kFill ? RwMode::kWrite
                                        : RwMode::kRead;
  pattern_.emplace(mode, o_.rwmixread, region_offset_, region_bytes_, bs,
                   o_.seed ^ (static_cast<uint64_t>(jobid_) << 32) ^ bs);
  n_free_ = o_.iodepth;
  for (uint32_t i = 0; i < o_.iodepth; ++i) free_bufs_[i] = i;
  timed_ = phase == Phase::kTimed;
  to_submit_ = timed_ ? UINT64_MAX : region_bytes_ / bs;
  int64_t start = now_ns();
  ramp_end_ = start + static_cast<int64_t>(o_.ramp_time_s * 1e9);
  end_ = ramp_end_ + static_cast<int64_t>(o_.runtime_s * 1e9);
  measuring_ = timed_ && o_.ramp_time_s <= 0;
  ended_ = false;
  measure_start_ = measure_end_ = start;
  // A connection other queues took in the last phase is taken now (nothing is outstanding), so
  // that its first completion in this phase is not counted as a resume.
  (void)q_->process_completions();
  connections_seen_ = q_->connections();
  window_.start(*q_);
}

void Job::close_window(int64_t t) {
  ended_ = true;
  measure_end_ = t;
  const QueueCounters c = window_.total(*q_);
  out_->path.capsules_inline = c.capsules_inline;
  out_->path.capsules_by_reference = c.capsules_by_reference;
}

Job::Step Job::step(int64_t now) {
  idle_ = false;
  const uint32_t bs = bs_;
  bool submitting = to_submit_ > 0 && st_.ok();
  if (timed_) {
    if (!measuring_ && !ended_ && now >= ramp_end_) {
      measuring_ = true;
      measure_start_ = now;
      window_.start(*q_);
    }
    bool stop = o_.stop != nullptr && o_.stop->load(std::memory_order_relaxed);
    if (now >= end_ || stop) {
      submitting = false;
      if (!ended_) close_window(std::min(now, end_));
      measuring_ = false;
    }
  } else if (o_.stop != nullptr && o_.stop->load(std::memory_order_relaxed)) {
    submitting = false;  // the --verify fill or read-back, stopped: what is in flight completes
  }
  while (submitting && n_free_ > 0) {
    Status st = submit(pattern_->next(), bs);
    if (!st.ok()) {
      st_ = std::move(st);  // Host Pathing Error (the association gave up): the job ends
      break;
    }
    if (!timed_ && --to_submit_ == 0) submitting = false;
  }
  batch_ns_ = 0;
  Result<int> found = q_->process_completions();  // posts the round's capsules, then polls
  if (!found.ok() && st_.ok()) st_ = found.status();
  // Ending (the phase is over, or an error): what is in flight completes first, so that no
  // callback of this phase runs in the next.
  if (n_free_ == o_.iodepth && (!st_.ok() || (!timed_ && to_submit_ == 0) || ended_ ||
                                (o_.stop != nullptr && o_.stop->load()))) {
    return finish();
  }
  if (found.ok() && *found == 0) {
    idle_ = true;
    return Step::kIdle;
  }
  return Step::kWorked;
}

Job::Step Job::finish() {
  running_ = false;
  idle_ = false;
  if (timed_ && !ended_) close_window(now_ns());
  if (!timed_) measure_end_ = now_ns();
  JobResult& out = *out_;
  out.runtime_s = static_cast<double>(measure_end_ - measure_start_) / 1e9;
  // now_ns() is the steady clock: the window goes onto the wall clock through one reading of both.
  const int64_t unix_minus_steady = unix_now_ns() - now_ns();
  out.window_start_unix_ns = measure_start_ + unix_minus_steady;
  out.window_end_unix_ns = measure_end_ + unix_minus_steady;
  if (!st_.ok() && out.status.ok()) {
    out.status = std::move(st_).annotate("job " + std::to_string(jobid_) + " (qid " +
                                         std::to_string(qid_) + ")");
  }
  if (have_mismatch_ && out.verify_first_error.empty()) {
    out.verify_first_error = "job " + std::to_string(jobid_) + ": data mismatch at byte " +
                             std::to_string(mismatch_offset_) + " of the namespace";
  }
  return Step::kDone;
}

// The channels a thread of event-polled jobs sleeps on: every running job's completion channel
// and rdma_cm channel (IoQueue::wait_fds) in one epoll set, built at the first sleep and again
// whenever the fds changed (a job ended, a reconnect gave a queue new channels), so that a sleep
// costs the channels that fired rather than all of them: poll() over 64 fds per sleep at 32
// jobs per thread was a system call that walked every fd, thousands of times a second.
class WaitSet {
 public:
  WaitSet() = default;
  WaitSet(const WaitSet&) = delete;
  WaitSet& operator=(const WaitSet&) = delete;
  ~WaitSet() { close_set(); }

  // Sleeps until a channel of `fds` (two per running job, in order; fd -1 skipped) is readable
  // or `timeout_ms` passed; sets their revents (POLLIN) as poll() would. EINTR is a wake-up.
  // `connections`: moves whenever a queue dropped or took a connection (a new connection may
  // reuse the old one's fd numbers, which epoll forgot when they closed).
  Status wait(std::span<pollfd> fds, int timeout_ms, uint64_t connections) {
    if (!same_fds(fds) || connections != connections_) {
      NVMF_RETURN_IF_ERROR(build(fds));
      connections_ = connections;
    }
    int n = ::epoll_wait(ep_, events_.data(), static_cast<int>(events_.size()), timeout_ms);
    if (n < 0) {
      return errno == EINTR ? ok_status()
                            : Status::from_errno("epoll_wait(completion, rdma_cm)", errno);
    }
    for (pollfd& f : fds) f.revents = 0;
    for (int i = 0; i < n; ++i) fds[events_[i].data.u64].revents = POLLIN;
    return ok_status();
  }

 private:
  bool same_fds(std::span<const pollfd> fds) const {
    if (ep_ < 0 || fds.size() != registered_.size()) return false;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd != registered_[i]) return false;
    }
    return true;
  }
  Status build(std::span<const pollfd> fds) {
    close_set();
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return Status::from_errno("epoll_create1", errno);
    events_.assign(std::max<size_t>(fds.size(), 1), epoll_event{});
    registered_.assign(fds.size(), -1);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0) continue;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = i;
      if (::epoll_ctl(ep_, EPOLL_CTL_ADD, fds[i].fd, &ev) != 0) {
        return Status::from_errno("epoll_ctl(ADD)", errno);
      }
      registered_[i] = fds[i].fd;
    }
    return ok_status();
  }
  void close_set() {
    if (ep_ >= 0) ::close(ep_);
    ep_ = -1;
    registered_.clear();
  }

  int ep_ = -1;
  uint64_t connections_ = 0;
  std::vector<int> registered_;  // the fds of the set, in order (-1: none)
  std::vector<epoll_event> events_;
};

// One thread's loop over its `jobs` (started) until every one is done, with no lock: each round
// steps every running job; only when none found work does it wait: with one job, or --poll
// busy, on each job's own queue (IoQueue::wait); with several jobs and --poll event, in one
// epoll set (WaitSet) over all their completion and rdma_cm channels (`fds`: 2 per job,
// allocated by the caller), at most IoQueue::kLinkRecheck while a queue has no connection.
void drive_jobs(std::span<Job* const> jobs, bool event_poll, std::vector<pollfd>& fds) {
  size_t running = 0;
  for (Job* j : jobs) running += j->running() ? 1 : 0;
  WaitSet wait_set;
  while (running > 0) {
    bool again = false;                 // work found or a job ended: no wait
    const int64_t round_ns = now_ns();  // one clock read per round (Job::step)
    for (Job* j : jobs) {
      if (!j->running()) continue;
      const Job::Step s = j->step(round_ns);
      if (s == Job::Step::kDone) --running;
      if (s != Job::Step::kIdle) again = true;
    }
    if (again || running == 0) continue;
    if (!event_poll || running == 1) {
      for (Job* j : jobs) {
        if (j->running()) j->wait();
      }
      continue;
    }
    size_t n = 0;
    bool unconnected = false;
    uint64_t connections = 0;
    Deadline earliest = Deadline::max();
    for (Job* j : jobs) {
      if (!j->running()) continue;
      j->wait_fds(&fds[n]);
      const IoQueueStats qs = j->queue()->stats();
      connections += qs.connections + qs.losses;
      unconnected |= fds[n].fd < 0 && fds[n + 1].fd < 0;
      earliest = std::min(earliest, j->queue()->progress_deadline());
      n += 2;
    }
    if (unconnected) {
      earliest = std::min(earliest, std::chrono::steady_clock::now() + IoQueue::kLinkRecheck);
    }
    const int left = remaining_ms(earliest);
    Status waited =
        left > 0 ? wait_set.wait(std::span<pollfd>(fds.data(), n), left, connections) : ok_status();
    if (!waited.ok()) {
      // The sleep failed: look at each queue again without sleeping (a busy round).
      NVMF_LOG(WARN, "host") << "bench: " << waited.to_string();
      continue;
    }
    n = 0;
    for (Job* j : jobs) {
      if (!j->running()) continue;
      if (left <= 0) fds[n].revents = fds[n + 1].revents = 0;
      j->after_wait(&fds[n]);
      n += 2;
    }
  }
}

// Runs `phase` on every job, spread over bench_threads() threads (job j on thread
// job_thread(j, threads)); prints progress on stderr when asked.
std::vector<JobResult> run_phase(Controller& c, std::vector<std::unique_ptr<Job>>& jobs,
                                 Phase phase, uint32_t bs, const BenchOptions& o) {
  std::vector<JobResult> results(jobs.size());
  const uint32_t nthreads = bench_threads(static_cast<uint32_t>(jobs.size()), o.threads);
  const bool event_poll = c.options().poll_mode == PollMode::kEvent;
  std::atomic<size_t> finished{0};
  std::vector<std::thread> threads;
  for (auto& j : jobs) {
    j->progress().ios.store(0);
    j->progress().lat_ns.store(0);
  }
  for (uint32_t t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Job*> mine;
      for (size_t j = 0; j < jobs.size(); ++j) {
        if (job_thread(static_cast<uint32_t>(j), nthreads) == t) mine.push_back(jobs[j].get());
      }
      std::vector<pollfd> fds(2 * mine.size());
      for (Job* j : mine) j->start(phase, bs, results[j->index()]);
      drive_jobs(mine, event_poll, fds);
      finished.fetch_add(1);
    });
  }
  bool show = o.progress && phase == Phase::kTimed;
  auto t0 = std::chrono::steady_clock::now();
  auto next = t0 + std::chrono::seconds(1);
  uint64_t last_ios = 0, last_lat = 0;
  bool printed = false;
  bool stopping = false;
  while (finished.load() < nthreads) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!stopping && o.stop != nullptr && o.stop->load()) {
      // SIGINT/SIGTERM: commands held while the association is lost fail at once, so that the
      // jobs end within a round instead of at ctrl-loss-tmo.
      stopping = true;
      c.fail_held_io();
    }
    if (!show || std::chrono::steady_clock::now() < next) continue;
    uint64_t ios = 0, lat = 0;
    for (auto& j : jobs) {
      ios += j->progress().ios.load(std::memory_order_relaxed);
      lat += j->progress().lat_ns.load(std::memory_order_relaxed);
    }
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t dios = ios - last_ios;
    double mean_us = dios == 0 ? 0 : static_cast<double>(lat - last_lat) / dios / 1000.0;
    std::fprintf(stderr, "\r[bs %u] %5.1f s: %8.0f IOPS, mean clat %8.1f us   ", bs, elapsed,
                 static_cast<double>(dios), mean_us);
    std::fflush(stderr);
    printed = true;
    last_ios = ios;
    last_lat = lat;
    next += std::chrono::seconds(1);
  }
  for (auto& t : threads) t.join();
  if (printed) std::fprintf(stderr, "\r%70s\r", "");
  return results;
}

nlohmann::json clat_json(const LatencyHistogram& h) {
  nlohmann::json pct = nlohmann::json::object();
  if (h.count() > 0) {
    for (double p : kPercentiles) pct[percentile_key(p)] = h.percentile(p);
  }
  return {{"min", h.min()},       {"max", h.max()}, {"mean", h.mean()},
          {"stddev", h.stddev()}, {"N", h.count()}, {"percentile", pct}};
}

nlohmann::json direction_json(const DirectionStats& d, double runtime_s) {
  double secs = runtime_s > 0 ? runtime_s : 0;
  double bw_bytes = secs > 0 ? static_cast<double>(d.bytes) / secs : 0;
  return {{"io_bytes", d.bytes},
          {"io_kbytes", d.bytes / 1024},
          {"bw_bytes", static_cast<uint64_t>(bw_bytes)},
          {"bw", static_cast<uint64_t>(bw_bytes / 1024)},
          {"iops", secs > 0 ? static_cast<double>(d.ios) / secs : 0.0},
          {"runtime", static_cast<uint64_t>(std::llround(secs * 1000))},
          {"total_ios", d.ios},
          {"clat_ns", clat_json(d.clat)}};
}

nlohmann::json path_json(const PathCounters& p) {
  return {{"writes_in_capsule", p.writes_in_capsule},
          {"writes_keyed", p.writes_keyed},
          {"rdma_reads", p.writes_keyed},
          {"reads", p.reads},
          {"capsules_inline", p.capsules_inline},
          {"capsules_by_reference", p.capsules_by_reference}};
}

nlohmann::json job_json(const JobResult& j, const std::string& name) {
  nlohmann::json out = {{"jobname", name},
                        {"jobid", j.jobid},
                        {"qid", j.qid},
                        {"runtime", static_cast<uint64_t>(std::llround(j.runtime_s * 1000))},
                        {"window_start_unix_ns", j.window_start_unix_ns},
                        {"window_end_unix_ns", j.window_end_unix_ns},
                        {"read", direction_json(j.read, j.runtime_s)},
                        {"write", direction_json(j.write, j.runtime_s)},
                        {"path", path_json(j.path)},
                        {"verify",
                         {{"checked", j.verify_checked},
                          {"errors", j.verify_errors},
                          {"first_error", j.verify_first_error}}},
                        {"error", j.status.ok() ? "" : j.status.to_string()}};
  return out;
}

void append(std::string& s, const char* fmt, auto... args) {
  char line[512];
  std::snprintf(line, sizeof(line), fmt, args...);
  s += line;
}

void direction_text(std::string& s, const char* dir, const DirectionStats& d, double runtime_s) {
  if (d.ios == 0) return;
  double iops = runtime_s > 0 ? d.ios / runtime_s : 0;
  double mib = runtime_s > 0 ? d.bytes / runtime_s / 1048576.0 : 0;
  const LatencyHistogram& h = d.clat;
  append(s, "    %s: IOPS=%.1f, BW=%.2fMiB/s, %" PRIu64 " ios in %.3f s\n", dir, iops, mib, d.ios,
         runtime_s);
  append(s, "      clat (usec): min=%.1f, max=%.1f, avg=%.1f, stdev=%.1f\n", h.min() / 1e3,
         h.max() / 1e3, h.mean() / 1e3, h.stddev() / 1e3);
  append(s, "      clat percentiles (usec): p50=%.1f p90=%.1f p99=%.1f p99.9=%.1f\n",
         h.percentile(50) / 1e3, h.percentile(90) / 1e3, h.percentile(99) / 1e3,
         h.percentile(99.9) / 1e3);
}

void job_text(std::string& s, const char* name, const JobResult& j) {
  append(s, "  %s:%s\n", name, j.status.ok() ? "" : (" ERROR " + j.status.to_string()).c_str());
  direction_text(s, "read", j.read, j.runtime_s);
  direction_text(s, "write", j.write, j.runtime_s);
  const PathCounters& p = j.path;
  append(s,
         "    path: in-capsule writes %" PRIu64 ", keyed writes (target RDMA READ) %" PRIu64
         ", reads (target RDMA WRITE) %" PRIu64 ", capsules inline %" PRIu64
         ", by reference %" PRIu64 "\n",
         p.writes_in_capsule, p.writes_keyed, p.reads, p.capsules_inline, p.capsules_by_reference);
}

}  // namespace

void merge_into(JobResult& all, const JobResult& j) {
  all.runtime_s = std::max(all.runtime_s, j.runtime_s);
  if (j.window_start_unix_ns != 0 &&
      (all.window_start_unix_ns == 0 || j.window_start_unix_ns < all.window_start_unix_ns)) {
    all.window_start_unix_ns = j.window_start_unix_ns;
  }
  all.window_end_unix_ns = std::max(all.window_end_unix_ns, j.window_end_unix_ns);
  all.read.ios += j.read.ios;
  all.read.bytes += j.read.bytes;
  all.read.clat.merge(j.read.clat);
  all.write.ios += j.write.ios;
  all.write.bytes += j.write.bytes;
  all.write.clat.merge(j.write.clat);
  all.path.add(j.path);
  all.verify_checked += j.verify_checked;
  all.verify_errors += j.verify_errors;
  all.retried_ios += j.retried_ios;
  if (all.verify_first_error.empty()) all.verify_first_error = j.verify_first_error;
  if (all.status.ok()) all.status = j.status;
}

Result<RwMode> parse_rw(std::string_view text) {
  if (text == "read") return RwMode::kRead;
  if (text == "write") return RwMode::kWrite;
  if (text == "randread") return RwMode::kRandRead;
  if (text == "randwrite") return RwMode::kRandWrite;
  if (text == "randrw") return RwMode::kRandRw;
  return Status::invalid_argument("--rw '" + std::string(text) +
                                  "' is not one of read, write, randread, randwrite, randrw");
}

const char* rw_name(RwMode mode) {
  switch (mode) {
    case RwMode::kRead:
      return "read";
    case RwMode::kWrite:
      return "write";
    case RwMode::kRandRead:
      return "randread";
    case RwMode::kRandWrite:
      return "randwrite";
    case RwMode::kRandRw:
      return "randrw";
  }
  return "?";
}

bool rw_reads(RwMode m) {
  return m == RwMode::kRead || m == RwMode::kRandRead || m == RwMode::kRandRw;
}
bool rw_writes(RwMode m) {
  return m == RwMode::kWrite || m == RwMode::kRandWrite || m == RwMode::kRandRw;
}

Result<std::vector<uint32_t>> parse_bs_list(std::string_view text) {
  std::vector<uint32_t> out;
  if (text.empty()) return Status::invalid_argument("--bs is empty");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    NVMF_ASSIGN_OR_RETURN(uint64_t v, parse_size(item, "--bs"));
    std::string quoted = "--bs '" + std::string(item) + "'";
    if (v == 0 || v % 512 != 0) {
      return Status::invalid_argument(quoted + " is not a non-zero multiple of 512 bytes");
    }
    if (v > kMaxBs) return Status::invalid_argument(quoted + " is larger than 16m");
    if (std::find(out.begin(), out.end(), v) != out.end()) {
      return Status::invalid_argument(quoted + " is listed twice");
    }
    out.push_back(static_cast<uint32_t>(v));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string percentile_key(double percent) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%f", percent);
  return buf;
}

IoPattern::IoPattern(RwMode mode, int rwmixread, uint64_t region_offset, uint64_t region_bytes,
                     uint32_t bs, uint64_t seed)
    : mode_(mode),
      rwmixread_(rwmixread),
      region_offset_(region_offset),
      blocks_(bs == 0 ? 0 : region_bytes / bs),
      bs_(bs),
      state_(splitmix64(seed) | 1) {}

uint64_t IoPattern::random() {
  // xorshift64* (Vigna): fast, no allocation, good enough for offsets and the rw mix.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return state_ * 0x2545f4914f6cdd1dull;
}

IoPattern::Io IoPattern::next() {
  switch (mode_) {
    case RwMode::kRead:
    case RwMode::kWrite: {
      uint64_t block = cursor_;
      cursor_ = cursor_ + 1 == blocks_ ? 0 : cursor_ + 1;
      return Io{mode_ == RwMode::kWrite, region_offset_ + block * bs_};
    }
    case RwMode::kRandRead:
    case RwMode::kRandWrite:
    case RwMode::kRandRw:
      break;
  }
  bool write = mode_ == RwMode::kRandWrite;
  if (mode_ == RwMode::kRandRw) write = static_cast<int>((random() >> 32) % 100) >= rwmixread_;
  uint64_t block = (random() >> 11) % blocks_;
  return Io{write, region_offset_ + block * bs_};
}

void fill_verify_pattern(uint8_t* buf, size_t bytes, uint64_t offset, uint32_t unit,
                         uint64_t seed) {
  for (size_t u = 0; u + unit <= bytes; u += unit) {
    uint8_t* p = buf + u;
    uint64_t off = offset + u;
    put64(p, kVerifyMagic);
    put64(p + 8, off);
    put64(p + 16, unit);
    put64(p + 24, seed);
    for (size_t i = kVerifyHeaderBytes; i + 8 <= unit; i += 8) {
      put64(p + i, pattern_word(seed, off, i));
    }
  }
}

int64_t check_verify_pattern(const uint8_t* buf, size_t bytes, uint64_t offset, uint32_t unit,
                             uint64_t seed) {
  for (size_t u = 0; u + unit <= bytes; u += unit) {
    const uint8_t* p = buf + u;
    uint64_t off = offset + u;
    const uint64_t header[4] = {kVerifyMagic, off, unit, seed};
    for (size_t h = 0; h < 4; ++h) {
      if (get64(p + 8 * h) != header[h]) return static_cast<int64_t>(u + 8 * h);
    }
    for (size_t i = kVerifyHeaderBytes; i + 8 <= unit; i += 8) {
      if (get64(p + i) != pattern_word(seed, off, i)) return static_cast<int64_t>(u + i);
    }
  }
  return -1;
}

void PathCounters::add(const PathCounters& o) {
  writes_in_capsule += o.writes_in_capsule;
  writes_keyed += o.writes_keyed;
  reads += o.reads;
  capsules_inline += o.capsules_inline;
  capsules_by_reference += o.capsules_by_reference;
}

uint32_t bench_threads(uint32_t numjobs, uint32_t threads) {
  return threads == 0 ? numjobs : std::min(threads, numjobs);
}

Status check_bench_threads(uint32_t numjobs, uint32_t threads) {
  if (threads > numjobs) {
    return Status::invalid_argument("--threads " + std::to_string(threads) + " exceeds --numjobs " +
                                    std::to_string(numjobs) +
                                    ": every thread drives at least one job");
  }
  return ok_status();
}

Status check_bench_times(const BenchOptions& o) {
  if (!(o.runtime_s > 0) || !std::isfinite(o.runtime_s)) {
    return Status::invalid_argument("--runtime must be a finite number of seconds > 0");
  }
  if (!(o.ramp_time_s >= 0) || !std::isfinite(o.ramp_time_s)) {
    return Status::invalid_argument("--ramp_time must be a finite number of seconds >= 0");
  }
  if (!(o.start_at_unix_s >= 0) || !std::isfinite(o.start_at_unix_s)) {
    return Status::invalid_argument("--start-at must be finite Unix seconds >= 0");
  }
  return ok_status();
}

Result<uint64_t> bench_region_bytes(const Controller& c, const BenchOptions& o) {
  if (o.bs.empty()) return Status::invalid_argument("--bs is empty");
  if (o.iodepth < 1) return Status::invalid_argument("--iodepth must be >= 1");
  if (o.numjobs < 1) return Status::invalid_argument("--numjobs must be >= 1");
  NVMF_RETURN_IF_ERROR(check_bench_threads(o.numjobs, o.threads));
  if (o.rwmixread < 0 || o.rwmixread > 100) {
    return Status::invalid_argument("--rwmixread must be 0..100");
  }
  NVMF_RETURN_IF_ERROR(check_bench_times(o));
  if (c.num_io_queues() < o.numjobs) {
    return Status::invalid_argument("--numjobs " + std::to_string(o.numjobs) +
                                    ": the controller granted only " +
                                    std::to_string(c.num_io_queues()) + " I/O queues");
  }
  if (c.io_queue_slots() < o.iodepth) {
    return Status::invalid_argument("--iodepth " + std::to_string(o.iodepth) + " exceeds the " +
                                    std::to_string(c.io_queue_slots()) +
                                    " command slots of each I/O queue");
  }
  uint32_t lba = c.lba_size();
  uint32_t max_cmd = c.transfer_limits().max_command_bytes;
  uint32_t max_bs = 0;
  for (uint32_t bs : o.bs) {
    if (bs % lba != 0) {
      return Status::invalid_argument("--bs " + std::to_string(bs) +
                                      " is not a multiple of the LBA size " + std::to_string(lba));
    }
    if (max_cmd != 0 && bs > max_cmd) {
      return Status::invalid_argument("--bs " + std::to_string(bs) +
                                      " exceeds the largest command the controller takes (" +
                                      std::to_string(max_cmd) + " bytes)");
    }
    max_bs = std::max(max_bs, bs);
  }
  uint64_t ns_bytes = c.namespace_info().nsze * lba;
  // Every job of the whole run has its region (a share of a multipath run included).
  const uint32_t all_jobs = std::max(o.all_jobs, o.first_job + o.numjobs);
  uint64_t region = o.size;
  if (region == 0) region = ns_bytes / all_jobs / max_bs * max_bs;
  if (region == 0) {
    return Status::invalid_argument("--bs " + std::to_string(max_bs) + " x --numjobs " +
                                    std::to_string(all_jobs) + " exceeds the namespace (" +
                                    std::to_string(ns_bytes) + " bytes)");
  }
  for (uint32_t bs : o.bs) {
    if (region % bs != 0) {
      return Status::invalid_argument("--size " + std::to_string(region) +
                                      " is not a multiple of --bs " + std::to_string(bs));
    }
  }
  if (region > ns_bytes / all_jobs) {
    return Status::invalid_argument("--size " + std::to_string(region) + " x --numjobs " +
                                    std::to_string(all_jobs) + " exceeds the namespace (" +
                                    std::to_string(ns_bytes) + " bytes)");
  }
  return region;
}

namespace {

// --start-at: sleeps until the wall clock reaches it (in slices, so that SIGINT still ends the
// run at once). The controller's keep-alive runs on its own thread meanwhile.
void wait_until_start(const BenchOptions& o) {
  if (o.start_at_unix_s <= 0) return;
  const auto start = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(o.start_at_unix_s)));
  while (std::chrono::system_clock::now() < start) {
    if (o.stop != nullptr && o.stop->load()) return;
    std::this_thread::sleep_for(std::min<std::chrono::system_clock::duration>(
        start - std::chrono::system_clock::now(), std::chrono::milliseconds(100)));
  }
}

}  // namespace

Result<BenchReport> run_bench(Controller& c, const BenchOptions& o) {
  NVMF_ASSIGN_OR_RETURN(uint64_t region, bench_region_bytes(c, o));
  uint32_t max_bs = *std::max_element(o.bs.begin(), o.bs.end());
  std::vector<std::unique_ptr<Job>> jobs;
  for (uint32_t j = 0; j < o.numjobs; ++j) {
    const uint32_t id = o.first_job + j;
    NVMF_ASSIGN_OR_RETURN(IoQueue * q, c.io_queue(j));
    auto job = std::make_unique<Job>(id, j, q, c, o, region * id, region, max_bs);
    NVMF_RETURN_IF_ERROR(job->setup(c));
    jobs.push_back(std::move(job));
  }
  BenchReport report;
  report.options = o;
  report.options.stop = nullptr;
  report.lba_size = c.lba_size();
  report.region_bytes = region;
  // The k-th reconnect of a phase is the same for every job: its resume time is the earliest.
  auto note_resumes = [&](const std::vector<JobResult>& phase) {
    uint32_t n = 0;
    for (const JobResult& r : phase) n = std::max(n, r.resumes);
    for (uint32_t k = 0; k < n; ++k) {
      int64_t first = INT64_MAX;
      for (const JobResult& r : phase) {
        if (k < r.resumes) first = std::min(first, r.resumed_unix_ns[k]);
      }
      report.resumed_unix_ns.push_back(first);
    }
  };
  auto note = [&](const JobResult& r) {
    report.verify_checked += r.verify_checked;
    report.verify_errors += r.verify_errors;
    report.retried_ios += r.retried_ios;
    report.longest_clat_ns =
        std::max({report.longest_clat_ns, r.read.clat.max(), r.write.clat.max()});
    if (report.verify_first_error.empty()) report.verify_first_error = r.verify_first_error;
    if (report.status.ok()) report.status = r.status;
  };
  // INFO lines (--log-level info) mark each phase as it begins: SIGINT and SIGTERM are handled
  // from the first one on, so a script may wait for a phase before it signals.
  if (o.start_at_unix_s > 0) {
    NVMF_LOG(INFO, "host") << "bench: waiting for --start-at " << std::fixed << std::setprecision(0)
                           << o.start_at_unix_s;
  }
  wait_until_start(o);
  // SIGINT/SIGTERM (o.stop) ends every phase: waiting for --start-at (no I/O at all), the
  // --verify fill (its unwritten part is never read back), the timed runs, and the read-back
  // (a signal before it skips it: a stopped fill left LBAs a read-back would call mismatches).
  auto stopped = [&o] { return o.stop != nullptr && o.stop->load(); };
  if (o.verify && !stopped()) {
    NVMF_LOG(INFO, "host") << "bench: --verify fill of " << region << " bytes per job";
    std::vector<JobResult> fill = run_phase(c, jobs, Phase::kFill, max_bs, o);
    for (const JobResult& r : fill) note(r);
    note_resumes(fill);
  }
  for (uint32_t bs : o.bs) {
    if (!report.status.ok()) break;
    if (o.stop != nullptr && o.stop->load()) break;
    BsResult b;
    b.bs = bs;
    NVMF_LOG(INFO, "host") << "bench: timed run, bs " << bs << ", " << o.runtime_s << " s";
    b.jobs = run_phase(c, jobs, Phase::kTimed, bs, o);
    for (const JobResult& r : b.jobs) {
      merge_into(b.all, r);
      note(r);
    }
    note_resumes(b.jobs);
    report.results.push_back(std::move(b));
  }
  if (o.verify && !stopped() && rw_writes(o.rw) && report.status.ok()) {
    std::vector<JobResult> back = run_phase(c, jobs, Phase::kReadBack, max_bs, o);
    for (const JobResult& r : back) note(r);
    note_resumes(back);
  }
  return report;
}

Result<std::vector<uint32_t>> bench_jobs_per_path(const std::vector<uint8_t>& ana_states,
                                                  IoPolicy policy, uint32_t numjobs) {
  std::vector<size_t> best;
  for (uint8_t want : {proto::kAnaOptimized, proto::kAnaNonOptimized}) {
    for (size_t p = 0; p < ana_states.size(); ++p) {
      if (ana_states[p] == want) best.push_back(p);
    }
    if (!best.empty()) break;
  }
  if (best.empty()) {
    return Status::unavailable("no path is optimized or non-optimized for the namespace");
  }
  if (policy == IoPolicy::kNuma) best.resize(1);
  std::vector<uint32_t> counts(ana_states.size(), 0);
  for (uint32_t j = 0; j < numjobs; ++j) ++counts[best[j % best.size()]];
  return counts;
}

Result<BenchReport> run_multipath_bench(const std::vector<BenchPath>& paths,
                                        const std::vector<uint32_t>& jobs_per_path,
                                        const BenchOptions& o) {
  std::vector<BenchOptions> shares;
  std::vector<size_t> share_path;
  uint32_t first = 0;
  for (size_t p = 0; p < paths.size() && p < jobs_per_path.size(); ++p) {
    if (jobs_per_path[p] == 0) continue;
    BenchOptions share = o;
    share.first_job = first;
    share.all_jobs = o.numjobs;
    share.numjobs = jobs_per_path[p];
    share.threads = o.threads == 0 ? 0 : std::min(o.threads, share.numjobs);
    share.progress = o.progress && paths.size() == 1;
    first += share.numjobs;
    shares.push_back(share);
    share_path.push_back(p);
  }
  if (first != o.numjobs) {
    return Status::invalid_argument("the paths' jobs add up to " + std::to_string(first) +
                                    ", not --numjobs " + std::to_string(o.numjobs));
  }
  std::vector<Result<BenchReport>> reports(shares.size(), Status::internal("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < shares.size(); ++i) {
    threads.emplace_back([&, i] { reports[i] = run_bench(*paths[share_path[i]].c, shares[i]); });
  }
  for (auto& t : threads) t.join();
  BenchReport merged;
  merged.options = o;
  merged.options.stop = nullptr;
  for (size_t i = 0; i < reports.size(); ++i) {
    if (!reports[i].ok()) {
      return std::move(reports[i]).status().annotate("path " + paths[share_path[i]].name);
    }
    BenchReport& r = *reports[i];
    if (i == 0) {
      merged.lba_size = r.lba_size;
      merged.region_bytes = r.region_bytes;
    }
    for (size_t b = 0; b < r.results.size(); ++b) {
      if (merged.results.size() <= b) {
        merged.results.emplace_back();
        merged.results[b].bs = r.results[b].bs;
      }
      for (JobResult& j : r.results[b].jobs) {
        j.target_path = paths[share_path[i]].name;
        merge_into(merged.results[b].all, j);
        merged.results[b].jobs.push_back(std::move(j));
      }
    }
    merged.verify_checked += r.verify_checked;
    merged.verify_errors += r.verify_errors;
    if (merged.verify_first_error.empty()) merged.verify_first_error = r.verify_first_error;
    merged.retried_ios += r.retried_ios;
    merged.longest_clat_ns = std::max(merged.longest_clat_ns, r.longest_clat_ns);
    merged.resumed_unix_ns.insert(merged.resumed_unix_ns.end(), r.resumed_unix_ns.begin(),
                                  r.resumed_unix_ns.end());
    if (merged.status.ok()) merged.status = r.status;
  }
  std::sort(merged.resumed_unix_ns.begin(), merged.resumed_unix_ns.end());
  return merged;
}

namespace {

// Per target path of a multipath bench, every block size summed: {"path", "jobs", "read_ios",
// "write_ios", "read_bytes", "write_bytes"}, in the order the paths first appear.
nlohmann::json multipath_bench_json(const BenchReport& r) {
  std::vector<std::string> order;
  std::map<std::string, std::array<uint64_t, 5>> sums;  // jobs, read ios, write ios, bytes...
  for (const BsResult& b : r.results) {
    for (const JobResult& j : b.jobs) {
      if (j.target_path.empty()) continue;
      auto [it, fresh] = sums.try_emplace(j.target_path, std::array<uint64_t, 5>{});
      if (fresh) order.push_back(j.target_path);
      if (&b == &r.results.front()) ++it->second[0];
      it->second[1] += j.read.ios;
      it->second[2] += j.write.ios;
      it->second[3] += j.read.bytes;
      it->second[4] += j.write.bytes;
    }
  }
  nlohmann::json paths = nlohmann::json::array();
  for (const std::string& p : order) {
    const auto& v = sums[p];
    paths.push_back({{"path", p},
                     {"jobs", v[0]},
                     {"read_ios", v[1]},
                     {"write_ios", v[2]},
                     {"read_bytes", v[3]},
                     {"write_bytes", v[4]}});
  }
  return paths;
}

}  // namespace

nlohmann::json bench_json(const BenchReport& r) {
  const BenchOptions& o = r.options;
  nlohmann::json results = nlohmann::json::array();
  for (const BsResult& b : r.results) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const JobResult& j : b.jobs) {
      jobs.push_back(job_json(j, "job" + std::to_string(j.jobid)));
      if (!j.target_path.empty()) jobs.back()["target_path"] = j.target_path;
    }
    nlohmann::json all = job_json(b.all, "all");
    all.erase("jobid");
    all.erase("qid");
    results.push_back({{"bs", b.bs}, {"jobs", jobs}, {"all", all}});
  }
  nlohmann::json out = {{"nvmf_bench_version", 1},
                        {"global options",
                         {{"rw", rw_name(o.rw)},
                          {"rwmixread", o.rwmixread},
                          {"bs", o.bs},
                          {"iodepth", o.iodepth},
                          {"numjobs", o.numjobs},
                          {"threads", bench_threads(o.numjobs, o.threads)},
                          {"runtime", o.runtime_s},
                          {"ramp_time", o.ramp_time_s},
                          {"start_at", o.start_at_unix_s},
                          {"size", r.region_bytes},
                          {"verify", o.verify},
                          {"poll", r.poll}}},
                        {"lba_size", r.lba_size},
                        {"results", results},
                        {"verify",
                         {{"enabled", o.verify},
                          {"checked", r.verify_checked},
                          {"errors", r.verify_errors},
                          {"passed", o.verify && r.verify_errors == 0 && r.status.ok()},
                          {"first_error", r.verify_first_error}}},
                        {"recovery",
                         {{"retried_ios", r.retried_ios},
                          {"longest_clat_ns", r.longest_clat_ns},
                          {"losses", r.recovery.losses},
                          {"reconnect_attempts", r.recovery.reconnect_attempts},
                          {"reconnects", r.recovery.reconnects},
                          {"path_errors", r.recovery.path_errors},
                          {"longest_outage_ms", r.recovery.longest_outage_ms},
                          {"resumed_unix_ns", r.resumed_unix_ns},
                          {"last_loss", r.recovery.last_loss}}},
                        {"error", r.status.ok() ? "" : r.status.to_string()}};
  if (nlohmann::json paths = multipath_bench_json(r); !paths.empty()) {
    out["multipath"] = {{"paths", paths}};
  }
  return out;
}

std::string bench_text(const BenchReport& r) {
  const BenchOptions& o = r.options;
  std::string s;
  for (const BsResult& b : r.results) {
    append(s, "bs=%u rw=%s%s iodepth=%u numjobs=%u threads=%u poll=%s size=%" PRIu64 " per job\n",
           b.bs, rw_name(o.rw),
           o.rw == RwMode::kRandRw ? (" rwmixread=" + std::to_string(o.rwmixread)).c_str() : "",
           o.iodepth, o.numjobs, bench_threads(o.numjobs, o.threads), r.poll.c_str(),
           r.region_bytes);
    for (const JobResult& j : b.jobs) {
      job_text(s,
               ("job" + std::to_string(j.jobid) + " (qid " + std::to_string(j.qid) +
                (j.target_path.empty() ? "" : " on " + j.target_path) + ")")
                   .c_str(),
               j);
    }
    if (b.jobs.size() > 1) job_text(s, "all jobs", b.all);
  }
  for (const nlohmann::json& p : multipath_bench_json(r)) {
    append(s, "path %s: %" PRIu64 " jobs, %" PRIu64 " reads, %" PRIu64 " writes\n",
           p["path"].get<std::string>().c_str(), p["jobs"].get<uint64_t>(),
           p["read_ios"].get<uint64_t>(), p["write_ios"].get<uint64_t>());
  }
  if (o.verify) {
    append(s, "verify: %" PRIu64 " reads checked, %" PRIu64 " errors%s%s\n", r.verify_checked,
           r.verify_errors, r.verify_first_error.empty() ? "" : ": ", r.verify_first_error.c_str());
  }
  if (!r.status.ok()) append(s, "error: %s\n", r.status.to_string().c_str());
  return s;
}

}  // namespace nvmf::host
