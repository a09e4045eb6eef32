// Storage behind namespace 1: a file mapped with mmap(2) or anonymous RAM, so that Read and
// Write are memcpy and Flush is msync(2): no system call on the I/O path.
#ifndef NVMF_TARGET_NAMESPACE_H_
#define NVMF_TARGET_NAMESPACE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/status.h"

namespace nvmf::target {

// One namespace's bytes, mapped in memory. Not copyable, not movable (pointers into the
// mapping are handed out); owned through std::unique_ptr. Thread-safety: the mapping itself is
// immutable after creation; concurrent access to the same bytes is the caller's business.
class Namespace {
 public:
  // Maps the file at `path` (MAP_SHARED, read-write).
  // - `size_bytes` > 0: creates the file if missing and extends it (ftruncate) to at least
  //   `size_bytes`; a larger file is never shrunk.
  // - `size_bytes` == 0: the file must exist; its current size is used.
  // - A block device (S_ISBLK) is used at its size (BLKGETSIZE64); it is never extended.
  // The usable size is rounded down to a multiple of `lba_size` (512 or 4096). Errors:
  // kInvalidArgument (bad lba_size, file smaller than one LBA), or the failing system call
  // (open, fstat, ftruncate, mmap) with its errno.
  static Result<std::unique_ptr<Namespace>> open_file(const std::string& path, uint64_t size_bytes,
                                                      uint32_t lba_size);
  // Anonymous private memory of `size_bytes` (rounded down to whole LBAs), zero-filled lazily
  // by the kernel (MAP_NORESERVE). Errors: kInvalidArgument (bad lba_size, size < one LBA),
  // mmap's errno.
  static Result<std::unique_ptr<Namespace>> create_ram(uint64_t size_bytes, uint32_t lba_size);

  ~Namespace();
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;

  // LBA data size in bytes (512 or 4096) and its log2 (LBADS).
  uint32_t lba_size() const { return lba_size_; }
  uint8_t lba_shift() const { return lba_shift_; }
  // NSZE: the namespace size in LBAs.
  uint64_t num_lbas() const { return size_bytes_ >> lba_shift_; }
  uint64_t size_bytes() const { return size_bytes_; }
  bool file_backed() const { return fd_ >= 0; }
  // "file /path" or "ram", for logs.
  std::string describe() const;

  // The bytes [offset, offset + length). The caller must have range-checked the request
  // (check_lba_range()): this only asserts in debug builds.
  std::span<uint8_t> bytes(uint64_t offset, uint64_t length) const;

  // Makes written data durable: msync(MS_SYNC) of the whole mapping for a file, nothing for
  // RAM. Error: msync's errno.
  Status flush() const;

 private:
  Namespace(uint8_t* base, uint64_t size_bytes, uint64_t map_bytes, uint32_t lba_size, int fd,
            std::string path);

  uint8_t* base_;
  uint64_t size_bytes_;  // usable bytes: whole LBAs
  uint64_t map_bytes_;   // bytes mapped (>= size_bytes_)
  uint32_t lba_size_;
  uint8_t lba_shift_;
  int fd_;  // -1 for RAM
  std::string path_;
};

// True for the LBA sizes this target supports: 512 and 4096 bytes.
bool valid_lba_size(uint32_t lba_size);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_NAMESPACE_H_
