// SPDX-License-Identifier: BSD-3-Clause
// Storage behind a namespace: anonymous RAM (Read and Write are memcpy on the event-loop
// thread, the fastest path), or a file or block device served asynchronously through the
// target's IoEngine (io_uring), never mapped, so the event loop never waits for the disk.
#ifndef NVMF_TARGET_NAMESPACE_H_
#define NVMF_TARGET_NAMESPACE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/status.h"
#include "target/drain_counter.h"

namespace nvmf::target {

class IoEngine;

// How a file or block-device namespace is opened.
struct FileBackingOptions {
  // true: O_DIRECT, the page cache is bypassed (nvmetcli's buffered_io 0, CLI --direct-io); the
  // LBA size must be at least the device's logical block size (data buffers are page-aligned
  // already). false: buffered (buffered_io 1, CLI --buffered-io). Unset: nvmet's default
  // (buffered_io 0, drivers/nvme/target/core.c nvmet_ns_alloc; io-cmd-file.c opens with
  // O_DIRECT): O_DIRECT, except where the file system refuses O_DIRECT (tmpfs before Linux 6.6)
  // or the device's logical block size exceeds the LBA size; there, buffered with a warning
  // (nvmet refuses to enable such a namespace instead).
  std::optional<bool> direct;
};

// One namespace's storage. Not copyable, not movable; owned through std::unique_ptr.
// Event-loop thread only (its sticky flush error included).
class Namespace {
 public:
  // Opens the file at `path` read-write (O_DIRECT as options.direct says); I/O goes through
  // `engine`, which must outlive the namespace.
  // - `size_bytes` > 0: creates the file if missing and extends it (ftruncate) to at least
  //   `size_bytes`; a larger file is never shrunk.
  // - `size_bytes` == 0: the file must exist; its current size is used.
  // - A block device (S_ISBLK) is used at its size (BLKGETSIZE64); it is never extended.
  // The usable size is rounded down to a multiple of `lba_size` (512 or 4096). Errors:
  // kInvalidArgument (bad lba_size, file smaller than one LBA, O_DIRECT refused by the file
  // system, LBA size below the device's logical block size with O_DIRECT), or the failing
  // system call (open, fstat, ftruncate, ioctl) with its errno.
  static Result<std::unique_ptr<Namespace>> open_file(const std::string& path, uint64_t size_bytes,
                                                      uint32_t lba_size, IoEngine& engine,
                                                      FileBackingOptions options = {});
  // Anonymous private memory of `size_bytes` (rounded down to whole LBAs), zero-filled lazily
  // by the kernel (MAP_NORESERVE). Address space for growth is reserved (resize()): up to
  // max(size_bytes, kRamReserveBytes), inaccessible beyond the size. Errors: kInvalidArgument
  // (bad lba_size, size < one LBA), mmap's errno.
  static Result<std::unique_ptr<Namespace>> create_ram(uint64_t size_bytes, uint32_t lba_size);
  static constexpr uint64_t kRamReserveBytes = uint64_t{64} << 30;  // 64 GiB

  ~Namespace();
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;

  // LBA data size in bytes (512 or 4096) and its log2 (LBADS).
  uint32_t lba_size() const { return lba_size_; }
  uint8_t lba_shift() const { return lba_shift_; }
  // NSZE: the namespace size in LBAs. Any poll group reads it without a lock; resize() changes
  // it on a running target.
  uint64_t num_lbas() const { return size_bytes() >> lba_shift_; }
  uint64_t size_bytes() const { return size_bytes_.load(std::memory_order_relaxed); }
  // A number no other Namespace of this process has: a request that spans several steps
  // checks that the namespace it started on is still the one under its NSID.
  uint64_t serial() const { return serial_; }

  // A new size on a running target (the control socket's nvmf_subsystem_resize_ns; nvmet's
  // revalidate_size). `size_bytes` 0: a file's or block device's current size is read again
  // (it grew or shrank outside the target). Otherwise, whole LBAs: a RAM namespace takes it
  // (within its reservation; growing makes the new LBAs read as zeroes); a file is extended to
  // it with ftruncate (never shrunk: data would be lost); a block device has its own size.
  // Returns the new size in bytes. Errors: kInvalidArgument (not whole LBAs, below one LBA,
  // above the RAM reservation, shrinking a file, a size for a block device), the failing system
  // call's errno. Control thread only; I/O of every poll group sees the new size at its next
  // range check. After shrinking RAM, call release_beyond_size() once no poll group can still
  // be copying beyond the new size (Target waits for every group's next round).
  Result<uint64_t> resize(uint64_t size_bytes);
  // RAM: gives the pages beyond size_bytes() back to the kernel and makes them inaccessible
  // (they read as zeroes if the namespace grows again). No-op for files.
  void release_beyond_size();

  // Backend operations in flight (submitted to the IoEngine, completion not yet handled), any
  // poll group: the file must stay open until they are done. io_started() before the
  // submission, io_finished() when its completion is handled.
  void io_started() { in_flight_.acquire(); }
  void io_finished() { in_flight_.release(); }
  int32_t io_in_flight() const { return in_flight_.count(); }
  // Waits until no backend operation is in flight, at most `timeout`; false on timeout (the
  // target stopping drops completions: their operations never finish here). For a namespace
  // no request can find any more (removed, every poll group past its next round).
  bool wait_io_idle(std::chrono::milliseconds timeout) { return in_flight_.wait_idle(timeout); }
  // True for a file or block device (I/O through engine()), false for RAM (bytes()).
  bool file_backed() const { return fd_ >= 0; }
  // The file or block device (empty for RAM).
  const std::string& path() const { return path_; }
  bool block_device() const { return block_device_; }
  bool direct() const { return direct_; }
  // An O_DIRECT block device whose queue polls (sysfs queue/io_poll 1: the driver has poll
  // queues, as nvme with poll_queues > 0 or null_blk with poll_queues): its reads and writes
  // may be completed by polling (IoRequest::polled, UringSetupOptions::iopoll).
  bool polled() const { return polled_; }
  int fd() const { return fd_; }
  // Not null exactly when file_backed().
  IoEngine* engine() const { return engine_; }
  // Whether a write can be acknowledged before it is durable, so Flush has work to do
  // (Identify Controller VWC): false for RAM (nothing is durable, nothing to flush); true for
  // buffered files and devices (the page cache) and O_DIRECT files (file system metadata, the
  // disk's cache); for an O_DIRECT block device, the device's own queue/write_cache in sysfs.
  bool volatile_write_cache() const { return volatile_write_cache_; }
  // "file /path (buffered)", "block device /dev/x (O_DIRECT)" or "ram", for logs.
  std::string describe() const;

  // RAM only: the bytes [offset, offset + length). The caller must have range-checked the
  // request (check_lba_range()): this only asserts in debug builds.
  std::span<uint8_t> bytes(uint64_t offset, uint64_t length) const;

  // A Flush of this namespace failed with `err` (an errno): every later Flush fails too, with
  // the same status. The kernel reports a write-back error to fdatasync only once per open
  // file, so a retried Flush would "succeed" over data that was lost (the fsync retry
  // problem); the failure stays visible until the target is restarted. Any poll group may set
  // and read it (one namespace serves every group's queues): the first error wins.
  void set_flush_error(int err) {
    int none = 0;
    flush_error_.compare_exchange_strong(none, err, std::memory_order_relaxed);
  }
  int flush_error() const { return flush_error_.load(std::memory_order_relaxed); }

 private:
  Namespace(uint8_t* base, uint64_t size_bytes, uint32_t lba_size, int fd, std::string path);

  uint8_t* base_;                     // RAM only
  uint64_t reserved_bytes_ = 0;       // RAM: the mapping's length (PROT_NONE beyond accessible_)
  uint64_t accessible_bytes_ = 0;     // RAM: readable and writable from base_
  std::atomic<uint64_t> size_bytes_;  // usable bytes: whole LBAs
  uint64_t serial_;
  uint32_t lba_size_;
  uint8_t lba_shift_;
  int fd_;  // -1 for RAM
  std::string path_;
  IoEngine* engine_ = nullptr;
  bool block_device_ = false;
  bool direct_ = false;
  bool polled_ = false;
  bool volatile_write_cache_ = false;
  std::atomic<int> flush_error_{0};
  DrainCounter in_flight_;
};

// True for the LBA sizes this target supports: 512 and 4096 bytes.
bool valid_lba_size(uint32_t lba_size);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_NAMESPACE_H_
