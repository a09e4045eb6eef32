// SPDX-License-Identifier: BSD-3-Clause
// IoEngine: asynchronous file and block-device I/O for the target's namespaces, on io_uring
// (liburing) or, where io_uring is unavailable, on a few worker threads. Submissions and
// completions both happen on the event-loop thread; the thread never waits for the disk.
#ifndef NVMF_TARGET_IO_ENGINE_H_
#define NVMF_TARGET_IO_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace nvmf::target {

// What one backend operation does. Offsets and lengths are in bytes.
enum class IoOp : uint8_t {
  kRead,       // read `length` bytes at `offset` into `data`
  kWrite,      // write `length` bytes from `data` at `offset`; RWF_DSYNC when `fua`
  kFlush,      // fdatasync(2) of the file or block device
  kZeroRange,  // fallocate(FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE) of [offset, +length)
  kPunchHole,  // fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) of [offset, +length)
};
const char* io_op_name(IoOp op);

struct IoRequest;

// Receives finished operations; implemented by the transport (one per queue).
class IoCompletion {
 public:
  virtual void io_done(IoRequest& io) = 0;

 protected:
  ~IoCompletion() = default;
};

// One operation in flight. Owned by the caller (one per command slot: nothing is allocated per
// operation); it and `data` must stay valid until `done->io_done()` ran.
struct IoRequest {
  IoOp op = IoOp::kRead;
  bool fua = false;
  int fd = -1;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint8_t* data = nullptr;
  IoCompletion* done = nullptr;
  uint32_t tag = 0;  // the caller's (the transport's slot index)
  // The file descriptor is an O_DIRECT block device whose queue polls (Namespace::polled()):
  // its reads and writes (not FUA writes) may go to the engine's IOPOLL ring, when it has one.
  bool polled = false;
  // Output: bytes moved (kRead/kWrite: `length` on success, the engine retries short
  // transfers), 0 for the others on success, or -errno.
  int64_t result = 0;
  // Engine-private: the intrusive list link of the overflow and worker queues.
  IoRequest* next = nullptr;
  uint64_t done_bytes = 0;
};

// Which engine the target uses (CLI --io-engine).
//   kAuto:    io_uring; worker threads with a warning when io_uring cannot be set up (old
//             kernel, seccomp, io_uring_disabled sysctl).
//   kUring:   io_uring or fail.
//   kThreads: worker threads (pread/pwrite/fdatasync/fallocate); for tests and comparisons.
enum class IoEngineKind : uint8_t { kAuto, kUring, kThreads };
const char* io_engine_kind_name(IoEngineKind kind);  // "auto", "uring", "threads"

// How the io_uring engine sets its ring up (CLI --uring-defer-taskrun, --uring-fixedbufs;
// TargetOptions::uring). The defaults are the plain setup (3. below) without fixed buffers.
//
// io_uring_setup(2) flags, tried in this order until the kernel accepts one (each with
// IORING_SETUP_CQSIZE); a kernel that does not know a flag answers EINVAL, then the next is
// tried, any other error ends the search:
//   1. SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG (Linux 6.1): completions are not run as task
//      work that interrupts the event-loop thread (an IPI while it polls its CQs) but held until
//      the loop asks; TASKRUN_FLAG makes the kernel set IORING_SQ_TASKRUN in the SQ ring when
//      some are held, so reap() enters the kernel (io_uring_enter GETEVENTS, non-blocking) only
//      then. The registered eventfd is still signalled when a completion is held (Linux
//      io_req_local_work_add, 6.1 included), so the loop's epoll sleep is woken; checked in the
//      soft-RoCE guest's 6.1 by ci/e2e/file_backend_test.cc (DeferredTaskWork*).
//   2. SINGLE_ISSUER (Linux 6.0): lets the kernel skip its submission lock.
//   3. none (Linux 5.6+): completions run as task work on the next return to user space.
// Not used: COOP_TASKRUN (5.19): task work is then only flagged, without waking a task asleep
// in epoll_wait, and the eventfd is signalled only once it ran, so a sleeping loop would not
// wake. With SINGLE_ISSUER the ring is created disabled (IORING_SETUP_R_DISABLED) and enabled
// by the first submit(), reap(), drain() or register_memory(): the kernel takes the enabling
// thread as the one issuer, so the engine may be created on another thread than the one that
// uses it.
struct UringSetupOptions {
  bool defer_taskrun = false;  // true: try 1. (and 2.); false: start at 3.
  // Tests: flags to treat as unknown to the kernel (EINVAL without calling it), to reach the
  // fallbacks on any kernel.
  uint32_t refuse_flags = 0;
  // A sparse table of kMaxFixedRegions fixed buffers (Linux 5.19; without it, none and the
  // engine says so in describe()); reads and writes into memory given to register_memory() then
  // use READ_FIXED / WRITE_FIXED (fio's io_uring option fixedbufs).
  bool fixed_buffers = false;
  // Tests: skip the sparse table as a kernel older than 5.19 would refuse it.
  bool refuse_sparse_buffers = false;
  // A second ring set up with IORING_SETUP_IOPOLL (CLI --uring-iopoll; fio's hipri, SPDK's
  // polled NVMe completions): reads and writes of IoRequest::polled requests go there, and
  // reap() finds their completions by polling the device's poll queue (io_uring_enter
  // GETEVENTS without waiting) in the event-loop thread, instead of an interrupt, a softirq
  // (ksoftirqd on a busy CPU) and task work. Only O_DIRECT reads and writes may be polled;
  // Flush, Write Zeroes, Dataset Management and FUA writes stay on the first ring. A kernel or
  // device that refuses IOPOLL: no second ring, a log line, everything on the first.
  bool iopoll = false;
};

// The names of io_uring_setup(2) flags as liburing spells them without IORING_SETUP_
// ("SINGLE_ISSUER", "DEFER_TASKRUN", "TASKRUN_FLAG", ...), lowest bit first; unknown bits as
// "0x...". For the log and the --json report.
std::vector<std::string> uring_setup_flag_names(uint32_t flags);

// Event-loop thread only (the thread fallback's workers are internal to it).
class IoEngine {
 public:
  // `depth` bounds the submissions queued in the kernel at once (io_uring SQ entries); more are
  // held in an overflow list and submitted as completions free entries. Errors: kInvalidArgument
  // for kUring when io_uring cannot be set up (with the reason), errno of eventfd/pthread.
  static constexpr uint32_t kDefaultDepth = 256;
  static Result<std::unique_ptr<IoEngine>> create(IoEngineKind kind, uint32_t depth = kDefaultDepth,
                                                  const UringSetupOptions& uring = {});
  virtual ~IoEngine() = default;

  // Queues `io`; its completion is delivered by a later reap() (never from inside submit()).
  virtual void submit(IoRequest& io) = 0;
  // Hands queued operations to the kernel (io_uring: one io_uring_enter); no-op when none.
  virtual void flush_submissions() = 0;
  // Delivers finished operations (IoCompletion::io_done) without blocking; returns how many.
  virtual int reap() = 0;
  // Readable when completions are waiting: watched by the event loop's epoll while it sleeps.
  virtual int event_fd() const = 0;
  // Consumes the event_fd() notification (after epoll reported it).
  virtual void clear_event() = 0;
  // Blocks until every submitted operation completed, delivering them (target shutdown).
  virtual void drain() = 0;
  // Operations submitted and not yet delivered.
  virtual uint64_t in_flight() const = 0;
  // "io_uring" or "threads".
  virtual const char* name() const = 0;
  // name() and how it was set up, for the log: "io_uring (single issuer, deferred task work)".
  virtual std::string describe() const { return name(); }
  // The io_uring_setup(2) flags the kernel accepted after the fallbacks, without CQSIZE and
  // R_DISABLED (0 for the thread engine). Constant after create(): any thread may read it.
  virtual uint32_t setup_flags() const { return 0; }
  // True while reads and writes inside registered memory go as READ_FIXED / WRITE_FIXED: asked
  // for, the kernel took the sparse table and no registration was refused since. Any thread.
  virtual bool fixed_buffers() const { return false; }

  // Registers [base, base + bytes) with the kernel as a fixed buffer (io_uring_register_buffers,
  // at most kMaxFixedRegions regions, each up to 1 GiB): reads and writes whose data lies inside
  // one region then use READ_FIXED / WRITE_FIXED, which skip pinning the pages per operation
  // (O_DIRECT). True when registered now or already; false when not (the thread engine, the
  // table full, the kernel refusing: ENOMEM under RLIMIT_MEMLOCK), and then plain reads and
  // writes are used, so a false is never an error. The memory must stay mapped until
  // unregister_memory(base) (the kernel holds a reference on its pages until then).
  static constexpr uint32_t kMaxFixedRegions = 16;
  virtual bool register_memory(uint8_t* /*base*/, uint64_t /*bytes*/) { return false; }
  // Forgets a region register_memory() took; operations already submitted finish on it.
  virtual void unregister_memory(uint8_t* /*base*/) {}
  // Reads and writes submitted with a fixed buffer so far (for tests and the --json report;
  // any thread, relaxed).
  virtual uint64_t fixed_operations() const { return 0; }
  // True when the IOPOLL ring exists (UringSetupOptions::iopoll, and the kernel took it). Any
  // thread.
  virtual bool iopoll() const { return false; }
  // Reads and writes submitted on the IOPOLL ring so far (--json; any thread, relaxed).
  virtual uint64_t polled_operations() const { return 0; }
  // Operations on the IOPOLL ring not yet reaped: their completions are only found by reap(),
  // never signalled on event_fd(), so the event loop must not sleep while this is > 0.
  virtual uint32_t polled_in_kernel() const { return 0; }
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_IO_ENGINE_H_
