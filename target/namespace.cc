// SPDX-License-Identifier: BSD-3-Clause
// Namespace: RAM (anonymous mmap) or a file / block device opened for the IoEngine.
#include "target/namespace.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "common/log.h"

namespace nvmf::target {
namespace {

Status check_sizes(uint64_t size_bytes, uint32_t lba_size, std::string_view what) {
  if (!valid_lba_size(lba_size)) {
    return Status::invalid_argument("lba size " + std::to_string(lba_size) +
                                    " (supported: 512, 4096)");
  }
  if (size_bytes < lba_size) {
    return Status::invalid_argument(std::string(what) + ": size " + std::to_string(size_bytes) +
                                    " bytes is smaller than one LBA (" + std::to_string(lba_size) +
                                    " bytes)");
  }
  return ok_status();
}

struct Opened {
  int fd = -1;
  uint64_t bytes = 0;
  bool block_device = false;
  bool direct = false;  // opened with O_DIRECT
  dev_t rdev = 0;
};

// Opens (creating when `size_bytes` > 0) and extends the file; returns the fd and final size.
// `buffered_fallback`: when the file system refuses O_DIRECT (EINVAL), warn and open buffered.
Result<Opened> open_and_size(const std::string& path, uint64_t size_bytes, bool direct,
                             bool buffered_fallback) {
  int flags = O_RDWR | O_CLOEXEC | (size_bytes > 0 ? O_CREAT : 0) | (direct ? O_DIRECT : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  bool fell_back = false;
  if (fd < 0 && direct && errno == EINVAL && buffered_fallback) {
    direct = false;
    fell_back = true;
    fd = ::open(path.c_str(), flags & ~O_DIRECT, 0644);
  }
  if (fd < 0) {
    if (direct && errno == EINVAL) {
      return Status::invalid_argument(path +
                                      ": this file system does not support O_DIRECT "
                                      "(use buffered I/O: --buffered-io, or buffered_io 1)");
    }
    return Status::from_errno("open", errno, path);
  }
  Opened out;
  out.fd = fd;
  out.direct = direct;
  auto fail = [&](const char* op) {
    int err = errno;
    ::close(fd);
    return Status::from_errno(op, err, path);
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail("fstat");
  uint64_t current = static_cast<uint64_t>(st.st_size);
  // A block device (e.g. /dev/nullb0 from an nvmetcli config) has st_size 0: ask its size.
  if (S_ISBLK(st.st_mode)) {
    if (::ioctl(fd, BLKGETSIZE64, &current) != 0) return fail("ioctl(BLKGETSIZE64)");
    if (size_bytes > current) {
      ::close(fd);
      return Status::invalid_argument(path + ": block device of " + std::to_string(current) +
                                      " bytes cannot be extended to " + std::to_string(size_bytes));
    }
    out.bytes = current;
    out.block_device = true;
    out.rdev = st.st_rdev;
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::invalid_argument(path + ": neither a regular file nor a block device");
  }
  if (fell_back) {
    NVMF_LOG(WARN, "target") << path
                             << ": the file system refuses O_DIRECT; serving it buffered (page "
                                "cache), where nvmet would refuse it (buffered_io 0)";
  }
  if (size_bytes > current && ::ftruncate(fd, static_cast<off_t>(size_bytes)) != 0) {
    return fail("ftruncate");
  }
  out.bytes = size_bytes > current ? size_bytes : current;
  return out;
}

// The first line of the block device's sysfs queue attribute `name` (queue/NAME); a
// partition's is its disk's (../queue/NAME). Empty when neither can be read.
std::string queue_attribute(dev_t rdev, const char* name) {
  const std::string base =
      "/sys/dev/block/" + std::to_string(major(rdev)) + ":" + std::to_string(minor(rdev));
  for (const char* rel : {"/queue/", "/../queue/"}) {
    std::ifstream in(base + rel + name);
    std::string value;
    if (in && std::getline(in, value)) return value;
  }
  return "";
}

// The block device's write cache as sysfs reports it ("write back" or "write through").
// Unknown counts as volatile (a Flush then still does its work).
bool device_write_cache_volatile(dev_t rdev) {
  return queue_attribute(rdev, "write_cache") != "write through";
}

// Whether the block device's queue polls (queue/io_poll "1"). Unknown counts as not polling.
bool device_polls(dev_t rdev) { return queue_attribute(rdev, "io_poll") == "1"; }

std::atomic<uint64_t> next_serial{1};

uint64_t round_up_to_page(uint64_t bytes) {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

}  // namespace

bool valid_lba_size(uint32_t lba_size) { return lba_size == 512 || lba_size == 4096; }

Namespace::Namespace(uint8_t* base, uint64_t size_bytes, uint32_t lba_size, int fd,
                     std::string path)
    : base_(base),
      size_bytes_(size_bytes),
      serial_(next_serial.fetch_add(1, std::memory_order_relaxed)),
      lba_size_(lba_size),
      lba_shift_(static_cast<uint8_t>(std::countr_zero(lba_size))),
      fd_(fd),
      path_(std::move(path)) {}

Result<std::unique_ptr<Namespace>> Namespace::open_file(const std::string& path,
                                                        uint64_t size_bytes, uint32_t lba_size,
                                                        IoEngine& engine,
                                                        FileBackingOptions options) {
  if (!valid_lba_size(lba_size)) return check_sizes(0, lba_size, path);
  const bool asked = options.direct.has_value();
  NVMF_ASSIGN_OR_RETURN(Opened opened,
                        open_and_size(path, size_bytes, options.direct.value_or(true), !asked));
  bool direct = opened.direct;
  Status sized = check_sizes(opened.bytes, lba_size, path);
  if (sized.ok() && direct && opened.block_device) {
    int logical = 0;
    if (::ioctl(opened.fd, BLKSSZGET, &logical) == 0 && static_cast<uint32_t>(logical) > lba_size) {
      if (asked) {
        sized = Status::invalid_argument(path + ": O_DIRECT needs --lba-size of at least the " +
                                         "device's logical block size " + std::to_string(logical));
      } else {
        NVMF_LOG(WARN, "target") << path << ": logical block size " << logical
                                 << " exceeds the LBA size " << lba_size
                                 << "; serving it buffered (page cache)";
        ::close(opened.fd);
        direct = false;
        NVMF_ASSIGN_OR_RETURN(opened, open_and_size(path, size_bytes, false, false));
      }
    }
  }
  if (!sized.ok()) {
    ::close(opened.fd);
    return sized;
  }
  uint64_t usable = opened.bytes / lba_size * lba_size;
  std::unique_ptr<Namespace> ns(new Namespace(nullptr, usable, lba_size, opened.fd, path));
  ns->engine_ = &engine;
  ns->block_device_ = opened.block_device;
  ns->direct_ = direct;
  ns->polled_ = direct && opened.block_device && device_polls(opened.rdev);
  ns->volatile_write_cache_ =
      !(direct && opened.block_device) || device_write_cache_volatile(opened.rdev);
  return ns;
}

Result<std::unique_ptr<Namespace>> Namespace::create_ram(uint64_t size_bytes, uint32_t lba_size) {
  NVMF_RETURN_IF_ERROR(check_sizes(size_bytes, lba_size, "ram namespace"));
  uint64_t usable = size_bytes / lba_size * lba_size;
  // Address space only (PROT_NONE, MAP_NORESERVE): nothing is committed until made accessible.
  const uint64_t reserved = std::max(usable, kRamReserveBytes);
  void* base =
      ::mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return Status::from_errno("mmap", errno, std::to_string(reserved) + " bytes of address space");
  }
  const uint64_t accessible = std::min(round_up_to_page(usable), reserved);
  if (::mprotect(base, accessible, PROT_READ | PROT_WRITE) != 0) {
    const int err = errno;
    ::munmap(base, reserved);
    return Status::from_errno("mprotect", err, std::to_string(usable) + " bytes of RAM");
  }
  std::unique_ptr<Namespace> ns(
      new Namespace(static_cast<uint8_t*>(base), usable, lba_size, -1, {}));
  ns->reserved_bytes_ = reserved;
  ns->accessible_bytes_ = accessible;
  return ns;
}

Namespace::~Namespace() {
  if (base_ != nullptr) ::munmap(base_, reserved_bytes_);
  if (fd_ >= 0) ::close(fd_);
}

Result<uint64_t> Namespace::resize(uint64_t size_bytes) {
  const std::string what = file_backed() ? path_ : std::string("ram namespace");
  if (size_bytes != 0) {
    if (size_bytes < lba_size_ || size_bytes % lba_size_ != 0) {
      return Status::invalid_argument(what + ": size " + std::to_string(size_bytes) +
                                      " is not a whole number of LBAs of " +
                                      std::to_string(lba_size_) + " bytes");
    }
  }
  if (!file_backed()) {
    if (size_bytes == 0) {
      return Status::invalid_argument("a RAM namespace's new size must be given");
    }
    if (size_bytes > reserved_bytes_) {
      return Status::invalid_argument(what + ": " + std::to_string(size_bytes) +
                                      " bytes is above its reservation of " +
                                      std::to_string(reserved_bytes_) + " bytes");
    }
    const uint64_t old_size = this->size_bytes();
    if (size_bytes > old_size) {
      // What lies beyond the old size reads as zeroes, as a new namespace's does: bytes left
      // accessible by a shrink are cleared (no request reaches them before the new size is
      // published).
      const uint64_t want = std::min(round_up_to_page(size_bytes), reserved_bytes_);
      if (want > accessible_bytes_) {
        if (::mprotect(base_ + accessible_bytes_, want - accessible_bytes_,
                       PROT_READ | PROT_WRITE) != 0) {
          return Status::from_errno("mprotect", errno, what);
        }
      }
      const uint64_t stale_end = std::min(accessible_bytes_, size_bytes);
      if (stale_end > old_size) std::memset(base_ + old_size, 0, stale_end - old_size);
      accessible_bytes_ = std::max(accessible_bytes_, want);
    }
    size_bytes_.store(size_bytes, std::memory_order_release);
    return size_bytes;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return Status::from_errno("fstat", errno, path_);
  uint64_t current = static_cast<uint64_t>(st.st_size);
  if (block_device_) {
    if (size_bytes != 0) {
      return Status::invalid_argument(what +
                                      ": a block device has its own size (give no size "
                                      "to read it again)");
    }
    if (::ioctl(fd_, BLKGETSIZE64, &current) != 0) {
      return Status::from_errno("ioctl(BLKGETSIZE64)", errno, path_);
    }
  } else if (size_bytes != 0) {
    if (size_bytes < current) {
      return Status::invalid_argument(what + ": " + std::to_string(size_bytes) +
                                      " bytes is below the file's " + std::to_string(current) +
                                      " (a file is never shrunk)");
    }
    if (size_bytes > current && ::ftruncate(fd_, static_cast<off_t>(size_bytes)) != 0) {
      return Status::from_errno("ftruncate", errno, path_);
    }
    current = size_bytes;
  }
  const uint64_t usable = current / lba_size_ * lba_size_;
  if (usable < lba_size_) {
    return Status::invalid_argument(what + ": " + std::to_string(current) +
                                    " bytes is smaller than one LBA");
  }
  size_bytes_.store(usable, std::memory_order_release);
  return usable;
}

void Namespace::release_beyond_size() {
  if (base_ == nullptr) return;
  const uint64_t size = size_bytes();
  const uint64_t keep = round_up_to_page(size);
  if (keep < accessible_bytes_) {
    (void)::madvise(base_ + keep, accessible_bytes_ - keep, MADV_DONTNEED);
    if (::mprotect(base_ + keep, accessible_bytes_ - keep, PROT_NONE) == 0) {
      accessible_bytes_ = keep;
    }
  }
  const uint64_t tail_end = std::min(keep, accessible_bytes_);
  if (tail_end > size) std::memset(base_ + size, 0, tail_end - size);  // the last page's rest
}

std::string Namespace::describe() const {
  if (!file_backed()) return "ram";
  return std::string(block_device_ ? "block device " : "file ") + path_ +
         (direct_ ? (polled_ ? " (O_DIRECT, polled)" : " (O_DIRECT)") : " (buffered)");
}

std::span<uint8_t> Namespace::bytes(uint64_t offset, uint64_t length) const {
  assert(base_ != nullptr && offset <= reserved_bytes_ && length <= reserved_bytes_ - offset);
  return {base_ + offset, static_cast<size_t>(length)};
}

}  // namespace nvmf::target
