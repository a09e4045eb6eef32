// IoEngine: asynchronous file and block-device I/O for the target's namespaces, on io_uring
// (liburing) or, where io_uring is unavailable, on a few worker threads. Submissions and
// completions both happen on the event-loop thread; the thread never waits for the disk.
#ifndef NVMF_TARGET_IO_ENGINE_H_
#define NVMF_TARGET_IO_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>

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

// Event-loop thread only (the thread fallback's workers are internal to it).
class IoEngine {
 public:
  // `depth` bounds the submissions queued in the kernel at once (io_uring SQ entries); more are
  // held in an overflow list and submitted as completions free entries. Errors: kInvalidArgument
  // for kUring when io_uring cannot be set up (with the reason), errno of eventfd/pthread.
  static Result<std::unique_ptr<IoEngine>> create(IoEngineKind kind, uint32_t depth = 256);
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
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_IO_ENGINE_H_
