// SPDX-License-Identifier: BSD-3-Clause
// Multipath I/O over several paths (controllers) to one namespace, following Asymmetric
// Namespace Access (Base 2.0 §8.1) as the Linux host's native multipath does: I/O goes to
// optimized paths, to non-optimized ones only when no optimized path is usable; a command that
// fails with an ANA path status is sent again on another path after the path's ANA log is read
// again; a lost path is left alone while it reconnects and used again once live.
#ifndef NVMF_HOST_MULTIPATH_H_
#define NVMF_HOST_MULTIPATH_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"
#include "host/controller.h"
#include "host/io_plan.h"
#include "host/options.h"

namespace nvmf::host {

// How I/O is spread over the usable paths of the best ANA state, with Linux's iopolicy names:
// numa sends everything to the first such path in the order given (one NUMA node here: the
// failover style), round-robin takes them in turn, one call each.
enum class IoPolicy { kNuma, kRoundRobin };
// "numa" / "round-robin".
const char* iopolicy_name(IoPolicy policy);
// kInvalidArgument "--iopolicy 'x' is not one of numa, round-robin".
Result<IoPolicy> parse_iopolicy(std::string_view text);

// One path as Multipath drives it: a Controller (ControllerPath in multipath.cc), or a fake in
// tests. write/read/flush/refresh_ana run on the I/O thread while the path is up; reconnect()
// on the path thread while Multipath holds it down. live() and ana_state() are thread-safe.
class PathIo {
 public:
  virtual ~PathIo() = default;
  virtual Status write(uint64_t slba, std::span<const DataSegment> segments) = 0;
  virtual Status read(uint64_t slba, const DataSegment& segment) = 0;
  virtual Status flush() = 0;
  // The association is live (not connecting or deleted).
  virtual bool live() const = 0;
  // The namespace's ANA state on this path (proto::kAna*).
  virtual uint8_t ana_state() const = 0;
  // Reads the path's ANA log again (after an ANA path status).
  virtual Status refresh_ana() = 0;
  // A lost path: one reconnect attempt when one is due. Ok once live again; kNvmeError Host
  // Pathing Error meanwhile; `permanent` set once the path gave up (ctrl_loss_tmo).
  virtual Status reconnect(bool* permanent) = 0;
  // "traddr:trsvcid".
  virtual std::string name() const = 0;
};

// Per-path counters (calls, not commands: a transfer above MDTS is several commands).
struct PathStats {
  std::string path;       // "traddr:trsvcid"
  std::string ana_state;  // ana_state_text() of the last log read
  bool live = false;      // up and connected
  uint64_t writes = 0;
  uint64_t reads = 0;
  uint64_t flushes = 0;
  uint64_t bytes_written = 0;
  uint64_t bytes_read = 0;
  uint64_t ana_errors = 0;   // calls answered with an ANA path status, sent again elsewhere
  uint64_t path_errors = 0;  // calls that found the path lost (sent again elsewhere)
  uint64_t reconnects = 0;   // the path came back after a loss
};

// Wakes I/O waiting for a usable path: ANA events (Controller admin threads) and reconnects.
class PathEvents {
 public:
  void notify();
  // One atomic load (the I/O path reads it on every call; no lock).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Waits until generation() differs from `seen` or `deadline` passes; true on a change.
  bool wait_change(uint64_t seen, std::chrono::steady_clock::time_point deadline);

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};  // moved under mutex_, read without it
};

// The multipath engine over PathIo. Use from one thread (the I/O thread), like Controller; its
// path thread reconnects lost paths once a second (each path's own reconnect_delay and
// ctrl_loss_tmo decide when an attempt is made and when it gives up).
class Multipath {
 public:
  struct Timing {
    // How long a call waits for a usable path when every path is inaccessible or changing:
    // ANATT (Identify Controller, seconds).
    std::chrono::milliseconds anatt{10000};
    // How long a call waits while a lost path is reconnecting and no other is usable:
    // fast_io_fail_tmo, else ctrl_loss_tmo (negative: no bound).
    std::chrono::milliseconds hold{-1};
  };
  Multipath(std::vector<std::unique_ptr<PathIo>> paths, IoPolicy policy, Timing timing,
            std::shared_ptr<PathEvents> events);
  ~Multipath();
  Multipath(const Multipath&) = delete;
  Multipath& operator=(const Multipath&) = delete;

  // As Controller::write/read/flush, on a path chosen by ANA state and policy. An ANA path
  // status (SCT 3h SC 01h-03h) or a lost path sends the call again on another usable path,
  // without an error to the caller; with none usable, the call waits for an ANA event or a
  // reconnect (Timing), then fails with the last path's error. Other errors are returned as
  // they are.
  Status write(uint64_t slba, std::span<const DataSegment> segments);
  Status read(uint64_t slba, const DataSegment& segment);
  Status flush();

  // Stops the path thread (no more reconnects); idempotent. Before the paths are disconnected.
  void stop();

  // Per path, in the order given. From the I/O thread.
  std::vector<PathStats> path_stats() const;
  size_t num_paths() const { return paths_.size(); }
  IoPolicy policy() const { return policy_; }

 private:
  struct Path {
    std::unique_ptr<PathIo> io;
    std::atomic<bool> down{false};  // lost: the path thread owns it until it is live again
    std::atomic<bool> dead{false};  // gave up: never used again
    std::atomic<uint64_t> reconnects{0};
    PathStats stats;
  };
  enum class Op { kWrite, kRead, kFlush };
  // The path for the next call, or -1 when none is usable.
  int choose();
  // The path is lost: the I/O thread leaves it to the path thread, woken to reconnect it.
  void mark_down(Path& p);
  template <typename Call>
  Status run(Op op, uint64_t bytes, Call&& call);
  void path_thread();

  std::vector<std::unique_ptr<Path>> paths_;
  IoPolicy policy_;
  Timing timing_;
  std::shared_ptr<PathEvents> events_;
  size_t next_ = 0;  // round-robin cursor
  std::mutex thread_mutex_;
  std::condition_variable thread_cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Several paths to one subsystem, one Controller each (HostOptions::traddr:trsvcid, then
// failover_paths), connected at once: one protection domain (a registered buffer serves every
// path), one Host Identifier and host NQN, asynchronous events on (ANA Change re-reads the ANA
// log), fast_io_fail_tmo 0 per path (a lost path's calls move to the others at once, as Linux's
// multipath requeues them), reconnect_delay and ctrl_loss_tmo per path as given. Every path
// must reach the same namespace (NSID, size and LBA size as the first path's).
class MultipathController {
 public:
  // Errors: the first path that does not connect, named ("path 10.0.0.1:4421: ...");
  // kInvalidArgument when a path shows another namespace.
  static Result<std::unique_ptr<MultipathController>> connect(const HostOptions& options,
                                                              IoPolicy policy);
  ~MultipathController();

  Status write(uint64_t slba, std::span<const DataSegment> segments) {
    return engine_->write(slba, segments);
  }
  Status read(uint64_t slba, const DataSegment& segment) { return engine_->read(slba, segment); }
  Status flush() { return engine_->flush(); }
  std::vector<PathStats> path_stats() const { return engine_->path_stats(); }
  IoPolicy policy() const { return engine_->policy(); }
  // Each path's Controller, in order (for reports: cntlid, Identify).
  const std::vector<Controller*>& controllers() const { return controllers_; }
  // Buffers registered in the shared protection domain (Controller::allocate_buffer).
  Result<verbs::RegisteredBuffer> allocate_buffer(size_t bytes);
  Result<verbs::RegisteredBuffer> register_buffer(void* addr, size_t length);
  // The first path's view (the namespace is the same on every path).
  const Controller& first() const { return *controllers_.front(); }
  uint32_t lba_size() const { return first().lba_size(); }
  // Disconnects every path (Controller::disconnect); the first error.
  Status disconnect();

 private:
  MultipathController() = default;
  std::shared_ptr<PathEvents> events_;
  std::vector<Controller*> controllers_;  // owned by engine_'s paths
  std::unique_ptr<Multipath> engine_;
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_MULTIPATH_H_
