// Namespace: mmap-backed storage for namespace 1 (file or RAM).
#include "target/namespace.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cassert>
#include <cerrno>
#include <utility>

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

// Opens (creating when `size_bytes` > 0) and extends the file; returns the fd and final size.
Result<std::pair<int, uint64_t>> open_and_size(const std::string& path, uint64_t size_bytes) {
  int flags = O_RDWR | O_CLOEXEC | (size_bytes > 0 ? O_CREAT : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return Status::from_errno("open", errno, path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::from_errno("fstat", err, path);
  }
  uint64_t current = static_cast<uint64_t>(st.st_size);
  // A block device (e.g. /dev/nullb0 from an nvmetcli config) has st_size 0: ask its size.
  if (S_ISBLK(st.st_mode)) {
    if (::ioctl(fd, BLKGETSIZE64, &current) != 0) {
      int err = errno;
      ::close(fd);
      return Status::from_errno("ioctl(BLKGETSIZE64)", err, path);
    }
    if (size_bytes > current) {
      ::close(fd);
      return Status::invalid_argument(path + ": block device of " + std::to_string(current) +
                                      " bytes cannot be extended to " + std::to_string(size_bytes));
    }
    return std::make_pair(fd, current);
  }
  if (size_bytes > current && ::ftruncate(fd, static_cast<off_t>(size_bytes)) != 0) {
    int err = errno;
    ::close(fd);
    return Status::from_errno("ftruncate", err, path);
  }
  return std::make_pair(fd, size_bytes > current ? size_bytes : current);
}

}  // namespace

bool valid_lba_size(uint32_t lba_size) { return lba_size == 512 || lba_size == 4096; }

Namespace::Namespace(uint8_t* base, uint64_t size_bytes, uint64_t map_bytes, uint32_t lba_size,
                     int fd, std::string path)
    : base_(base),
      size_bytes_(size_bytes),
      map_bytes_(map_bytes),
      lba_size_(lba_size),
      lba_shift_(static_cast<uint8_t>(std::countr_zero(lba_size))),
      fd_(fd),
      path_(std::move(path)) {}

Result<std::unique_ptr<Namespace>> Namespace::open_file(const std::string& path,
                                                        uint64_t size_bytes, uint32_t lba_size) {
  if (!valid_lba_size(lba_size)) return check_sizes(0, lba_size, path);
  NVMF_ASSIGN_OR_RETURN(auto opened, open_and_size(path, size_bytes));
  auto [fd, file_bytes] = opened;
  Status sized = check_sizes(file_bytes, lba_size, path);
  if (!sized.ok()) {
    ::close(fd);
    return sized;
  }
  void* base = ::mmap(nullptr, file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    ::close(fd);
    // EINVAL/ENODEV: the file system cannot map files shared (e.g. 9p without a cache).
    bool unmappable = err == EINVAL || err == ENODEV;
    return Status::from_errno(
        "mmap", err, unmappable ? path + ": this file system does not support MAP_SHARED" : path);
  }
  uint64_t usable = file_bytes / lba_size * lba_size;
  return std::unique_ptr<Namespace>(
      new Namespace(static_cast<uint8_t*>(base), usable, file_bytes, lba_size, fd, path));
}

Result<std::unique_ptr<Namespace>> Namespace::create_ram(uint64_t size_bytes, uint32_t lba_size) {
  NVMF_RETURN_IF_ERROR(check_sizes(size_bytes, lba_size, "ram namespace"));
  uint64_t usable = size_bytes / lba_size * lba_size;
  void* base = ::mmap(nullptr, usable, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return Status::from_errno("mmap", errno, std::to_string(usable) + " bytes of RAM");
  }
  return std::unique_ptr<Namespace>(
      new Namespace(static_cast<uint8_t*>(base), usable, usable, lba_size, -1, {}));
}

Namespace::~Namespace() {
  ::munmap(base_, map_bytes_);
  if (fd_ >= 0) ::close(fd_);
}

std::string Namespace::describe() const { return file_backed() ? "file " + path_ : "ram"; }

std::span<uint8_t> Namespace::bytes(uint64_t offset, uint64_t length) const {
  assert(offset <= size_bytes_ && length <= size_bytes_ - offset);
  return {base_ + offset, static_cast<size_t>(length)};
}

Status Namespace::flush() const {
  if (!file_backed()) return ok_status();
  if (::msync(base_, map_bytes_, MS_SYNC) != 0) return Status::from_errno("msync", errno, path_);
  return ok_status();
}

}  // namespace nvmf::target
