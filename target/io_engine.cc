// SPDX-License-Identifier: BSD-3-Clause
// IoEngine: the io_uring engine and the worker-thread fallback.
#include "target/io_engine.h"

#include <fcntl.h>
#include <liburing.h>
#include <linux/falloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "common/log.h"

namespace nvmf::target {
namespace {

constexpr int kZeroRangeMode = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
constexpr int kPunchHoleMode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
constexpr unsigned kWorkerThreads = 4;

// A FIFO of IoRequests linked through IoRequest::next (no allocation).
struct IoList {
  IoRequest* head = nullptr;
  IoRequest* tail = nullptr;

  bool empty() const { return head == nullptr; }
  void push(IoRequest* io) {
    io->next = nullptr;
    if (tail != nullptr) {
      tail->next = io;
    } else {
      head = io;
    }
    tail = io;
  }
  IoRequest* pop() {
    IoRequest* io = head;
    if (io != nullptr) {
      head = io->next;
      if (head == nullptr) tail = nullptr;
      io->next = nullptr;
    }
    return io;
  }
  void append(IoList& other) {
    if (other.empty()) return;
    if (tail != nullptr) {
      tail->next = other.head;
    } else {
      head = other.head;
    }
    tail = other.tail;
    other.head = other.tail = nullptr;
  }
};

bool moves_data(IoOp op) { return op == IoOp::kRead || op == IoOp::kWrite; }

void read_eventfd(int fd) {
  uint64_t value = 0;
  (void)!::read(fd, &value, sizeof(value));
}

// ------------------------------------------------------------------------------- io_uring --

struct UringSetup {
  uint32_t flags;
  const char* what;
};
constexpr UringSetup kUringSetups[] = {
    {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
     "single issuer, deferred task work"},
    {IORING_SETUP_SINGLE_ISSUER, "single issuer"},
    {0, "task work on return to user space"},
};

class UringEngine final : public IoEngine {
 public:
  static Result<std::unique_ptr<IoEngine>> create(uint32_t depth, const UringSetupOptions& opt) {
    std::unique_ptr<UringEngine> e(new UringEngine());
    int err = -EINVAL;
    for (const UringSetup& setup : kUringSetups) {
      if (!opt.defer_taskrun && setup.flags != 0) continue;
      io_uring_params params{};
      // Room in the CQ for every operation we let into the kernel (capped at cq_capacity_), so
      // completions are never dropped or held back by the kernel.
      params.flags = IORING_SETUP_CQSIZE | setup.flags;
      // One issuer: the thread that enables the ring (first use), not necessarily this one.
      if ((setup.flags & IORING_SETUP_SINGLE_ISSUER) != 0) params.flags |= IORING_SETUP_R_DISABLED;
      params.cq_entries = depth * 2;
      err = (params.flags & opt.refuse_flags) != 0
                ? -EINVAL
                : io_uring_queue_init_params(depth, &e->ring_, &params);
      if (err == 0) {
        e->setup_ = setup;
        e->enabled_ = (params.flags & IORING_SETUP_R_DISABLED) == 0;
        e->cq_capacity_ = params.cq_entries;
        break;
      }
      if (err != -EINVAL) break;  // not a flag the kernel lacks: the next would fail alike
    }
    if (err < 0) return Status::from_errno("io_uring_queue_init", -err);
    e->ring_ok_ = true;
    io_uring_probe* probe = io_uring_get_probe_ring(&e->ring_);
    bool complete = probe != nullptr;
    for (int op : {IORING_OP_READ, IORING_OP_WRITE, IORING_OP_FSYNC, IORING_OP_FALLOCATE}) {
      complete = complete && io_uring_opcode_supported(probe, op) != 0;
    }
    if (probe != nullptr) io_uring_free_probe(probe);
    if (!complete) {
      return Status::unavailable("io_uring lacks READ, WRITE, FSYNC or FALLOCATE (kernel < 5.6)");
    }
    e->event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (e->event_fd_ < 0) return Status::from_errno("eventfd", errno);
    err = io_uring_register_eventfd(&e->ring_, e->event_fd_);
    if (err < 0) return Status::from_errno("io_uring_register_eventfd", -err);
    // A table of empty slots for register_memory() (Linux 5.19); without it, no fixed buffers.
    if (opt.fixed_buffers) {
      const int sparse = opt.refuse_sparse_buffers
                             ? -EINVAL
                             : io_uring_register_buffers_sparse(&e->ring_, kMaxFixedRegions);
      e->fixed_ok_.store(sparse == 0, std::memory_order_relaxed);
      if (sparse < 0) {
        NVMF_LOG(INFO, "target") << "io_uring: no sparse fixed-buffer table ("
                                 << errno_string(-sparse)
                                 << "; Linux < 5.19?): plain reads and writes";
      }
    }
    if (opt.iopoll) e->setup_poll_ring(depth);
    return std::unique_ptr<IoEngine>(std::move(e));
  }

  ~UringEngine() override {
    if (poll_ok_) io_uring_queue_exit(&poll_ring_);
    if (ring_ok_) io_uring_queue_exit(&ring_);
    if (event_fd_ >= 0) ::close(event_fd_);
  }

  void submit(IoRequest& io) override {
    io.done_bytes = 0;
    io.result = 0;
    ++in_flight_;
    if (!enabled_) enable();
    if (!overflow_.empty() || !prepare(io)) overflow_.push(&io);
  }

  void flush_submissions() override {
    // On -EAGAIN/-EBUSY/-EINTR the entries stay in the SQ ring and go with the next call.
    if (unsubmitted_ && io_uring_submit(&ring_) >= 0) unsubmitted_ = false;
    // On an IOPOLL ring the submit also polls once (liburing adds GETEVENTS).
    if (poll_unsubmitted_ && io_uring_submit(&poll_ring_) >= 0) poll_unsubmitted_ = false;
  }

  int reap() override {
    if (in_kernel_ == 0 && poll_in_kernel_ == 0 && overflow_.empty()) return 0;
    // With TASKRUN_FLAG, io_uring_peek_cqe enters the kernel (GETEVENTS, no wait) only when the
    // SQ ring's IORING_SQ_TASKRUN says completions are held; otherwise it reads the CQ ring.
    int delivered = deliver(ring_, in_kernel_);
    if (poll_in_kernel_ > 0) {
      // IOPOLL: nothing reaches the CQ ring until someone polls the device: one
      // io_uring_enter(GETEVENTS, min_complete 0) polls each request once, without waiting.
      (void)io_uring_get_events(&poll_ring_);
      delivered += deliver(poll_ring_, poll_in_kernel_);
    }
    while (!overflow_.empty() && prepare(*overflow_.head)) overflow_.pop();
    return delivered;
  }

  // Delivers the completions in `ring`'s CQ ring (its SQEs counted in `in_kernel`); a short
  // read or write is submitted again for the rest.
  int deliver(io_uring& ring, uint32_t& in_kernel) {
    int delivered = 0;
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring, &cqe) == 0) {
      auto* io = static_cast<IoRequest*>(io_uring_cqe_get_data(cqe));
      int res = cqe->res;
      io_uring_cqe_seen(&ring, cqe);
      --in_kernel;
      if (&ring == &poll_ring_ && res == -EOPNOTSUPP) {
        // The kernel does not poll this device after all (sysfs said io_poll 1; Linux refuses
        // polled reads of a queue without poll queues): this one again on the first ring, and
        // every later one there too.
        if (!poll_refused_) {
          poll_refused_ = true;
          NVMF_LOG(WARN, "target") << "io_uring: a polled " << io_op_name(io->op)
                                   << " was refused (EOPNOTSUPP): reads and writes complete by "
                                      "interrupt from now on";
        }
        if (!overflow_.empty() || !prepare(*io)) overflow_.push(io);
        continue;
      }
      if (moves_data(io->op) && res > 0 && io->done_bytes + res < io->length) {
        io->done_bytes += static_cast<uint64_t>(res);  // short transfer: the rest, again
        if (!overflow_.empty() || !prepare(*io)) overflow_.push(io);
        continue;
      }
      if (moves_data(io->op)) {
        // 0 bytes with some left: the file ended (truncated under us) or the device gave up.
        io->result = res < 0 ? res : (res == 0 ? -EIO : static_cast<int64_t>(io->length));
      } else {
        io->result = res;
      }
      --in_flight_;
      ++delivered;
      io->done->io_done(*io);
    }
    return delivered;
  }

  int event_fd() const override { return event_fd_; }
  void clear_event() override { read_eventfd(event_fd_); }

  void drain() override {
    if (in_flight_ > 0 && !enabled_) enable();
    while (in_flight_ > 0) {
      flush_submissions();
      reap();
      if (in_flight_ == 0) break;
      // reap() may have prepared SQEs it did not submit (a polled operation the kernel refused,
      // now for the first ring; the rest of a short transfer; the overflow list): submitted
      // before waiting on ring_, or io_uring_wait_cqe waits for one the kernel never saw.
      flush_submissions();
      if (poll_in_kernel_ > 0) continue;  // found by polling (reap), never by waiting
      if (unsubmitted_) continue;         // -EAGAIN/-EBUSY: try again
      io_uring_cqe* cqe = nullptr;
      int err = io_uring_wait_cqe(&ring_, &cqe);
      if (err < 0 && err != -EINTR && err != -EAGAIN) {
        NVMF_LOG(ERROR, "target") << "io_uring_wait_cqe: " << errno_string(-err) << " with "
                                  << in_flight_ << " operation(s) in flight";
        return;
      }
    }
  }

  uint64_t in_flight() const override { return in_flight_; }
  const char* name() const override { return "io_uring"; }
  std::string describe() const override {
    std::string s = std::string("io_uring (") + setup_.what;
    if (!fixed_buffers()) s += "; no fixed buffers";
    if (poll_ok_) s += "; IOPOLL ring";
    return s + ")";
  }
  uint32_t setup_flags() const override { return setup_.flags; }
  bool iopoll() const override { return poll_ok_; }
  uint64_t polled_operations() const override {
    return polled_ops_.load(std::memory_order_relaxed);
  }
  uint32_t polled_in_kernel() const override { return poll_in_kernel_; }
  bool fixed_buffers() const override { return fixed_ok_.load(std::memory_order_relaxed); }

  bool register_memory(uint8_t* base, uint64_t bytes) override {
    if (!fixed_buffers() || base == nullptr || bytes == 0 || bytes > (uint64_t{1} << 30))
      return false;
    if (!enabled_) enable();  // with SINGLE_ISSUER, registration is the issuer's
    FixedRegion* slot = nullptr;
    for (FixedRegion& r : regions_) {
      if (r.base == base && r.end == base + bytes) return true;
      if (slot == nullptr && r.base == nullptr) slot = &r;
    }
    if (slot == nullptr) return false;
    iovec iov{base, static_cast<size_t>(bytes)};
    __u64 tag = 0;
    const auto index = static_cast<unsigned>(slot - regions_);
    int err = io_uring_register_buffers_update_tag(&ring_, index, &iov, &tag, 1);
    if (err < 0) {
      // Asked once: the kernel would refuse the next region alike.
      fixed_ok_.store(false, std::memory_order_relaxed);
      NVMF_LOG(INFO, "target") << "io_uring: " << bytes << " bytes not registered as a fixed "
                               << "buffer (" << errno_string(-err) << "); plain reads and writes";
      return false;
    }
    *slot = FixedRegion{base, base + bytes};
    return true;
  }

  void unregister_memory(uint8_t* base) override {
    for (FixedRegion& r : regions_) {
      if (r.base != base || base == nullptr) continue;
      iovec none{nullptr, 0};  // an empty slot (the kernel drops its page references when
      __u64 tag = 0;           // the operations submitted on it have finished)
      const auto index = static_cast<unsigned>(&r - regions_);
      (void)io_uring_register_buffers_update_tag(&ring_, index, &none, &tag, 1);
      r = FixedRegion{};
    }
  }

  uint64_t fixed_operations() const override { return fixed_ops_.load(std::memory_order_relaxed); }

 private:
  struct FixedRegion {
    uint8_t* base = nullptr;
    uint8_t* end = nullptr;
  };

  UringEngine() = default;

  // The first use: enables a ring created disabled, which makes this thread its one issuer.
  void enable() {
    enabled_ = true;
    // IORING_REGISTER_ENABLE_RINGS by hand: liburing 2.3's shared library does not export
    // io_uring_enable_rings (declared, missing from its symbol map).
    if (::syscall(__NR_io_uring_register, ring_.ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr, 0) <
        0) {
      // Submissions then fail with EBADFD and come back as that error (Internal Error).
      NVMF_LOG(ERROR, "target") << "io_uring enable rings: " << errno_string(errno);
    }
  }

  // The fixed-buffer slot holding [data, data + length), or -1.
  int fixed_index(const uint8_t* data, uint64_t length) const {
    for (uint32_t i = 0; i < kMaxFixedRegions; ++i) {
      const FixedRegion& r = regions_[i];
      if (r.base != nullptr && data >= r.base && data < r.end &&
          length <= static_cast<uint64_t>(r.end - data)) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // The IOPOLL ring (UringSetupOptions::iopoll): as big as the first, no eventfd (its
  // completions are polled for), no fixed buffers. Refused: a log line, and none.
  void setup_poll_ring(uint32_t depth) {
    io_uring_params params{};
    params.flags = IORING_SETUP_IOPOLL | IORING_SETUP_CQSIZE;
    params.cq_entries = depth * 2;
    const int err = io_uring_queue_init_params(depth, &poll_ring_, &params);
    if (err < 0) {
      NVMF_LOG(WARN, "target") << "io_uring: no IOPOLL ring (" << errno_string(-err)
                               << "); polled devices complete by interrupt";
      return;
    }
    poll_ok_ = true;
    poll_cq_capacity_ = params.cq_entries;
  }

  // Fills one SQE for `io` (from io.done_bytes on); false when the SQ or the CQ budget is full.
  // A polled request's read or write (not a FUA write: RWF_DSYNC may need a flush after the
  // data, which a polled completion does not wait for on every kernel) goes to the IOPOLL ring.
  bool prepare(IoRequest& io) {
    const bool polled = poll_ok_ && !poll_refused_ && io.polled &&
                        (io.op == IoOp::kRead || (io.op == IoOp::kWrite && !io.fua));
    io_uring& ring = polled ? poll_ring_ : ring_;
    uint32_t& in_kernel = polled ? poll_in_kernel_ : in_kernel_;
    if (in_kernel >= (polled ? poll_cq_capacity_ : cq_capacity_)) return false;
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    if (sqe == nullptr) {
      io_uring_submit(&ring);
      sqe = io_uring_get_sqe(&ring);
      if (sqe == nullptr) return false;
    }
    const uint64_t done = io.done_bytes;
    const int fixed =
        moves_data(io.op) && !polled ? fixed_index(io.data + done, io.length - done) : -1;
    if (fixed >= 0) {  // one writer: a relaxed load and store, no locked instruction
      fixed_ops_.store(fixed_ops_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    if (polled) {
      polled_ops_.store(polled_ops_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    const auto bytes = static_cast<unsigned>(io.length - done);
    switch (io.op) {
      case IoOp::kRead:
        if (fixed >= 0) {
          io_uring_prep_read_fixed(sqe, io.fd, io.data + done, bytes, io.offset + done, fixed);
        } else {
          io_uring_prep_read(sqe, io.fd, io.data + done, bytes, io.offset + done);
        }
        break;
      case IoOp::kWrite:
        if (fixed >= 0) {
          io_uring_prep_write_fixed(sqe, io.fd, io.data + done, bytes, io.offset + done, fixed);
        } else {
          io_uring_prep_write(sqe, io.fd, io.data + done, bytes, io.offset + done);
        }
        sqe->rw_flags = io.fua ? RWF_DSYNC : 0;
        break;
      case IoOp::kFlush:
        io_uring_prep_fsync(sqe, io.fd, IORING_FSYNC_DATASYNC);
        break;
      case IoOp::kZeroRange:
      case IoOp::kPunchHole:
        io_uring_prep_fallocate(sqe, io.fd,
                                io.op == IoOp::kZeroRange ? kZeroRangeMode : kPunchHoleMode,
                                static_cast<off_t>(io.offset), static_cast<off_t>(io.length));
        break;
    }
    io_uring_sqe_set_data(sqe, &io);
    ++in_kernel;
    (polled ? poll_unsubmitted_ : unsubmitted_) = true;
    return true;
  }

  io_uring ring_{};
  bool ring_ok_ = false;
  bool enabled_ = true;  // false while a ring created with R_DISABLED waits for its issuer
  std::atomic<bool> fixed_ok_{false};  // the sparse fixed-buffer table is registered
  UringSetup setup_{0, ""};
  FixedRegion regions_[kMaxFixedRegions];
  std::atomic<uint64_t> fixed_ops_{0};  // written by the loop, read by stats()
  int event_fd_ = -1;
  uint32_t cq_capacity_ = 0;
  uint32_t in_kernel_ = 0;    // SQEs prepared and not yet reaped
  uint64_t in_flight_ = 0;    // submitted and not yet delivered (overflow included)
  bool unsubmitted_ = false;  // SQEs prepared since the last io_uring_submit
  IoList overflow_;           // waiting for an SQE or CQ room, in order
  // The IOPOLL ring (setup_poll_ring), its SQEs not yet reaped, its unsubmitted SQEs.
  io_uring poll_ring_{};
  bool poll_ok_ = false;
  uint32_t poll_cq_capacity_ = 0;
  uint32_t poll_in_kernel_ = 0;
  bool poll_unsubmitted_ = false;
  bool poll_refused_ = false;  // a polled operation got EOPNOTSUPP: none goes there any more
  std::atomic<uint64_t> polled_ops_{0};  // written by the loop, read by stats()
};

// ------------------------------------------------------------------------ worker threads --

int64_t run_blocking(IoRequest& io) {
  switch (io.op) {
    case IoOp::kRead:
    case IoOp::kWrite: {
      uint64_t done = 0;
      while (done < io.length) {
        iovec iov{io.data + done, static_cast<size_t>(io.length - done)};
        auto at = static_cast<off_t>(io.offset + done);
        ssize_t n = io.op == IoOp::kRead ? ::preadv2(io.fd, &iov, 1, at, 0)
                                         : ::pwritev2(io.fd, &iov, 1, at, io.fua ? RWF_DSYNC : 0);
        if (n < 0) {
          if (errno == EINTR) continue;
          return -errno;
        }
        if (n == 0) return -EIO;
        done += static_cast<uint64_t>(n);
      }
      return static_cast<int64_t>(done);
    }
    case IoOp::kFlush:
      return ::fdatasync(io.fd) == 0 ? 0 : -errno;
    case IoOp::kZeroRange:
    case IoOp::kPunchHole: {
      int mode = io.op == IoOp::kZeroRange ? kZeroRangeMode : kPunchHoleMode;
      return ::fallocate(io.fd, mode, static_cast<off_t>(io.offset),
                         static_cast<off_t>(io.length)) == 0
                 ? 0
                 : -errno;
    }
  }
  return -EINVAL;
}

// The fallback: blocking system calls on kWorkerThreads threads. The event-loop thread takes
// the queue lock once per round that submitted something and once per round that has
// completions to deliver (an atomic count says so without the lock).
class ThreadEngine final : public IoEngine {
 public:
  static Result<std::unique_ptr<IoEngine>> create() {
    std::unique_ptr<ThreadEngine> e(new ThreadEngine());
    e->event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (e->event_fd_ < 0) return Status::from_errno("eventfd", errno);
    for (unsigned i = 0; i < kWorkerThreads; ++i)
      e->workers_.emplace_back([p = e.get()] { p->work(); });
    return std::unique_ptr<IoEngine>(std::move(e));
  }

  ~ThreadEngine() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    if (event_fd_ >= 0) ::close(event_fd_);
  }

  void submit(IoRequest& io) override {
    io.done_bytes = 0;
    io.result = 0;
    ++in_flight_;
    unsubmitted_.push(&io);
  }

  void flush_submissions() override {
    if (unsubmitted_.empty()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_io_.append(unsubmitted_);
    }
    cv_.notify_all();
  }

  int reap() override {
    if (finished_.load(std::memory_order_acquire) == 0) return 0;
    IoList done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done.append(done_);
      finished_.store(0, std::memory_order_relaxed);
    }
    int delivered = 0;
    while (IoRequest* io = done.pop()) {
      --in_flight_;
      ++delivered;
      io->done->io_done(*io);
    }
    return delivered;
  }

  int event_fd() const override { return event_fd_; }
  void clear_event() override { read_eventfd(event_fd_); }

  void drain() override {
    while (in_flight_ > 0) {
      flush_submissions();
      if (reap() > 0) continue;
      pollfd p{event_fd_, POLLIN, 0};
      (void)::poll(&p, 1, 100);
      clear_event();
    }
  }

  uint64_t in_flight() const override { return in_flight_; }
  const char* name() const override { return "threads"; }

 private:
  ThreadEngine() = default;

  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || !pending_io_.empty(); });
      if (stopping_) return;
      IoRequest* io = pending_io_.pop();
      lock.unlock();
      io->result = run_blocking(*io);
      lock.lock();
      done_.push(io);
      finished_.fetch_add(1, std::memory_order_release);
      uint64_t one = 1;
      (void)!::write(event_fd_, &one, sizeof(one));
    }
  }

  int event_fd_ = -1;
  uint64_t in_flight_ = 0;  // event-loop thread only
  IoList unsubmitted_;      // event-loop thread only
  std::mutex mu_;
  std::condition_variable cv_;
  IoList pending_io_;  // guarded by mu_
  IoList done_;        // guarded by mu_
  bool stopping_ = false;
  std::atomic<uint32_t> finished_{0};
  std::vector<std::thread> workers_;
};

}  // namespace

const char* io_op_name(IoOp op) {
  switch (op) {
    case IoOp::kRead:
      return "read";
    case IoOp::kWrite:
      return "write";
    case IoOp::kFlush:
      return "flush";
    case IoOp::kZeroRange:
      return "zero range";
    case IoOp::kPunchHole:
      return "punch hole";
  }
  return "?";
}

std::vector<std::string> uring_setup_flag_names(uint32_t flags) {
  static constexpr struct {
    uint32_t flag;
    const char* name;
  } kNames[] = {
      {IORING_SETUP_IOPOLL, "IOPOLL"},
      {IORING_SETUP_SQPOLL, "SQPOLL"},
      {IORING_SETUP_SQ_AFF, "SQ_AFF"},
      {IORING_SETUP_CQSIZE, "CQSIZE"},
      {IORING_SETUP_CLAMP, "CLAMP"},
      {IORING_SETUP_ATTACH_WQ, "ATTACH_WQ"},
      {IORING_SETUP_R_DISABLED, "R_DISABLED"},
      {IORING_SETUP_SUBMIT_ALL, "SUBMIT_ALL"},
      {IORING_SETUP_COOP_TASKRUN, "COOP_TASKRUN"},
      {IORING_SETUP_TASKRUN_FLAG, "TASKRUN_FLAG"},
      {IORING_SETUP_SQE128, "SQE128"},
      {IORING_SETUP_CQE32, "CQE32"},
      {IORING_SETUP_SINGLE_ISSUER, "SINGLE_ISSUER"},
      {IORING_SETUP_DEFER_TASKRUN, "DEFER_TASKRUN"},
  };
  std::vector<std::string> out;
  for (const auto& n : kNames) {
    if ((flags & n.flag) != 0) out.emplace_back(n.name);
    flags &= ~n.flag;
  }
  for (uint32_t bit = 0; bit < 32; ++bit) {
    if ((flags & (uint32_t{1} << bit)) == 0) continue;
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%x", uint32_t{1} << bit);
    out.emplace_back(hex);
  }
  return out;
}

const char* io_engine_kind_name(IoEngineKind kind) {
  switch (kind) {
    case IoEngineKind::kAuto:
      return "auto";
    case IoEngineKind::kUring:
      return "uring";
    case IoEngineKind::kThreads:
      return "threads";
  }
  return "?";
}

Result<std::unique_ptr<IoEngine>> IoEngine::create(IoEngineKind kind, uint32_t depth,
                                                   const UringSetupOptions& uring_options) {
  if (kind == IoEngineKind::kThreads) return ThreadEngine::create();
  auto uring = UringEngine::create(depth, uring_options);
  if (uring.ok() || kind == IoEngineKind::kUring) {
    if (!uring.ok()) {
      return Status::invalid_argument("--io-engine uring: io_uring is not available here: " +
                                      uring.status().to_string());
    }
    NVMF_LOG(INFO, "target") << "io_uring set up: " << (*uring)->describe();
    return uring;
  }
  NVMF_LOG(WARN, "target") << "io_uring is not available (" << uring.status().to_string()
                           << "); file and block-device namespaces use " << kWorkerThreads
                           << " worker threads instead";
  return ThreadEngine::create();
}

}  // namespace nvmf::target
