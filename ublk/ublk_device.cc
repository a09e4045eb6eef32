// SPDX-License-Identifier: BSD-3-Clause
#include "ublk/ublk_device.h"

#include <fcntl.h>
#include <liburing.h>
#include <linux/ublk_cmd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <optional>

#include "common/log.h"
#include "common/nvme_status.h"
#include "host/io_queue.h"
#include "proto/nvme.h"

namespace nvmf::ublk {

namespace {

// The ioctl encoding of ublk's commands (UBLK_U_CMD_* and UBLK_U_IO_* of Linux 6.2's uapi; the
// kernel takes them from 6.0 on, as it takes the plain numbers of older headers).
constexpr uint32_t kCmdAddDev = _IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd);
constexpr uint32_t kCmdDelDev = _IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd);
// UBLK_U_CMD_DEL_DEV_ASYNC (Linux 6.9): removes the device without waiting for the last opener
// of /dev/ublkbN to close it (DEL_DEV waits, uninterruptibly for a process that blocks
// SIGINT and SIGTERM, while a file system is still mounted).
constexpr uint32_t kCmdDelDevAsync = _IOR('u', 0x14, struct ublksrv_ctrl_cmd);
constexpr uint32_t kCmdStartDev = _IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd);
constexpr uint32_t kCmdStopDev = _IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd);
constexpr uint32_t kCmdSetParams = _IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd);
constexpr uint32_t kIoFetchReq = _IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd);
constexpr uint32_t kIoCommitAndFetchReq =
    _IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd);

constexpr char kControlPath[] = "/dev/ublk-control";
// How long a queue thread sleeps at most between two looks at its IoQueue and the stop flag.
constexpr std::chrono::milliseconds kQueueTick{100};
// After STOP_DEV, how long a queue thread waits for its NVMe commands to finish.
constexpr std::chrono::seconds kStopGrace{10};

}  // namespace

// An io_uring (liburing), closed with the object.
struct UblkDevice::Ring {
  io_uring ring{};
  bool ready = false;
  ~Ring() {
    if (ready) io_uring_queue_exit(&ring);
  }
};

// One ublk hardware queue and its thread: the IoQueue of the same index, one tag per command
// slot, each tag with its slice of one registered buffer.
class UblkDevice::Queue {
 public:
  Queue(UblkDevice& dev, uint16_t qid, host::IoQueue* ioq, verbs::RegisteredBuffer buffer)
      : dev_(dev), qid_(qid), ioq_(ioq), buffer_(std::move(buffer)) {
    tags_.resize(dev.layout_.queue_depth);
    for (uint16_t t = 0; t < tags_.size(); ++t) {
      tags_[t].queue = this;
      tags_[t].tag = t;
    }
  }
  ~Queue() { unmap_descriptors(); }

  // The descriptor map holds /dev/ublkcN open: released before the device is deleted. The
  // queue's buffers stay until the Queue goes (after the controller's disconnect: a command
  // the target has not answered may still write into them until then).
  void unmap_descriptors() {
    if (descs_ != nullptr) ::munmap(const_cast<ublksrv_io_desc*>(descs_), descs_bytes_);
    descs_ = nullptr;
  }

  // Maps the queue's request descriptors (read-only shared memory the kernel writes).
  Status map_descriptors(int cdev_fd) {
    const size_t n = tags_.size() * sizeof(ublksrv_io_desc);
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    descs_bytes_ = (n + page - 1) / page * page;  // what ublk_ch_mmap() checks
    const off_t offset = UBLKSRV_CMD_BUF_OFFSET +
                         static_cast<off_t>(qid_) * UBLK_MAX_QUEUE_DEPTH * sizeof(ublksrv_io_desc);
    void* p = ::mmap(nullptr, descs_bytes_, PROT_READ, MAP_SHARED | MAP_POPULATE, cdev_fd, offset);
    if (p == MAP_FAILED) {
      return Status::from_errno("mmap of ublk queue " + std::to_string(qid_) + " descriptors",
                                errno);
    }
    descs_ = static_cast<const ublksrv_io_desc*>(p);
    return ok_status();
  }

  // The thread: sets its ring up, fetches every tag, says so through `ready`, then serves until
  // every tag's command ended or the device is stopping and no NVMe command is outstanding.
  void run(int cdev_fd) {
    Status st = setup(cdev_fd);
    {
      std::lock_guard<std::mutex> lock(ready_mu_);
      setup_status_ = st;
      setup_done_ = true;
    }
    ready_cv_.notify_all();
    if (!st.ok()) return;
    serve();
    ring_.reset();  // closing the ring ends the tags' commands still with the kernel
  }

  // Waits for run() to finish its setup; its status.
  Status wait_ready() {
    std::unique_lock<std::mutex> lock(ready_mu_);
    ready_cv_.wait(lock, [this] { return setup_done_; });
    return setup_status_;
  }

  const UblkStats& stats() const { return stats_; }

 private:
  struct Tag {
    Queue* queue = nullptr;
    uint16_t tag = 0;
    IoKind kind = IoKind::kRead;
    size_t bytes = 0;  // what a successful Read or Write reports
  };

  Status setup(int cdev_fd) {
    ring_ = std::make_unique<Ring>();
    const unsigned entries = std::bit_ceil(static_cast<unsigned>(tags_.size()));
    int rc = io_uring_queue_init(entries, &ring_->ring, 0);
    if (rc < 0) {
      return Status::from_errno("io_uring for ublk queue " + std::to_string(qid_), -rc);
    }
    ring_->ready = true;
    rc = io_uring_register_files(&ring_->ring, &cdev_fd, 1);
    if (rc < 0) return Status::from_errno("io_uring_register_files (/dev/ublkc)", -rc);
    for (Tag& t : tags_) queue_command(t, kIoFetchReq, 0);
    rc = submit();
    if (rc < 0) return Status::from_errno("ublk FETCH_REQ submit", -rc);
    if (to_submit_ != 0) return Status::internal("ublk FETCH_REQ: not every tag was submitted");
    return ok_status();
  }

  // Submits what queue_command() prepared; io_uring_submit()'s result.
  int submit() {
    const int rc = io_uring_submit(&ring_->ring);
    if (rc > 0) to_submit_ -= std::min<unsigned>(to_submit_, static_cast<unsigned>(rc));
    return rc;
  }

  uint8_t* buffer_of(const Tag& t) const {
    return buffer_.data() + static_cast<size_t>(t.tag) * dev_.layout_.max_io_buf_bytes;
  }
  host::DataSegment segment_of(const Tag& t, size_t bytes) const {
    return host::segment_of(buffer_, static_cast<size_t>(t.tag) * dev_.layout_.max_io_buf_bytes,
                            bytes);
  }

  // Prepares FETCH_REQ or COMMIT_AND_FETCH_REQ for `t` (submitted by the loop).
  void queue_command(Tag& t, uint32_t op, int32_t result) {
    // At most one command per tag is with the kernel or queued, and the ring has a slot per
    // tag: there is always a free SQE. Should there be none, the device ends (failure()).
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_->ring);
    if (sqe == nullptr) {
      dev_.set_failure("ublk queue " + std::to_string(qid_) + ": no free submission entry");
      return;
    }
    std::memset(sqe, 0, sizeof(*sqe));
    sqe->opcode = IORING_OP_URING_CMD;
    sqe->fd = 0;  // the registered /dev/ublkcN
    sqe->flags = IOSQE_FIXED_FILE;
    sqe->cmd_op = op;
    sqe->user_data = t.tag;
    auto* cmd = reinterpret_cast<ublksrv_io_cmd*>(&sqe->addr3);
    cmd->q_id = qid_;
    cmd->tag = t.tag;
    cmd->result = result;
    cmd->addr = reinterpret_cast<uint64_t>(buffer_of(t));
    ++with_kernel_;
    ++to_submit_;
  }

  void commit(Tag& t, int32_t result) {
    if (result < 0) ++stats_.errors;
    queue_command(t, kIoCommitAndFetchReq, result);
  }

  static void done(void* arg, const host::IoCompletion& c) {
    Tag& t = *static_cast<Tag*>(arg);
    const int err = errno_of_status(c.status);
    t.queue->commit(t, err != 0 ? err : static_cast<int32_t>(t.bytes));
  }

  // A request the kernel handed to tag `t`: its NVMe command, or its completion at once.
  void start_request(Tag& t) {
    const ublksrv_io_desc d = descs_[t.tag];
    const MappedIo m = map_io(dev_.layout_, d.op_flags, d.nr_sectors, d.start_sector);
    if (m.error != 0) {
      commit(t, m.error);
      return;
    }
    const IoRequest& r = m.request;
    t.kind = r.kind;
    t.bytes = r.bytes;
    Status st;
    switch (r.kind) {
      case IoKind::kRead:
        ++stats_.reads;
        stats_.bytes_read += r.bytes;
        st = ioq_->submit_read(r.slba, segment_of(t, r.bytes), done, &t);
        break;
      case IoKind::kWrite: {
        ++stats_.writes;
        stats_.bytes_written += r.bytes;
        const host::DataSegment seg = segment_of(t, r.bytes);
        st = ioq_->submit_write(r.slba, std::span(&seg, 1), done, &t, r.fua);
        break;
      }
      case IoKind::kFlush:
        ++stats_.flushes;
        st = ioq_->submit_flush(done, &t);
        break;
      case IoKind::kDeallocate: {
        ++stats_.discards;
        proto::DsmRange range{0, r.nlb, r.slba};
        std::memcpy(buffer_of(t), &range, sizeof(range));
        st = ioq_->submit_deallocate(segment_of(t, sizeof(range)), 1, done, &t);
        break;
      }
      case IoKind::kWriteZeroes:
        ++stats_.write_zeroes;
        st = ioq_->submit_write_zeroes(r.slba, r.nlb, done, &t);
        break;
    }
    if (!st.ok()) {
      const bool nvme = st.code() == StatusCode::kNvmeError && st.nvme_status().has_value();
      commit(t, nvme ? errno_of_status(status_without_phase(*st.nvme_status())) : -EIO);
    }
  }

  // Completions of the tags' commands: a request to serve, or the tag's end.
  int reap() {
    int n = 0;
    unsigned head;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_->ring, head, cqe) {
      ++n;
      --with_kernel_;
      const auto tag = static_cast<uint16_t>(cqe->user_data);
      if (tag >= tags_.size()) continue;  // never: user_data is ours
      if (cqe->res == UBLK_IO_RES_OK && !dev_.stopping_.load(std::memory_order_relaxed)) {
        start_request(tags_[tag]);
      } else if (cqe->res == UBLK_IO_RES_OK) {
        commit(tags_[tag], -EIO);  // a request after STOP_DEV: the device is going away
      }
      // UBLK_IO_RES_ABORT (-ENODEV) or another error: the tag is done with.
    }
    io_uring_cq_advance(&ring_->ring, static_cast<unsigned>(n));
    return n;
  }

  void serve() {
    using Clock = std::chrono::steady_clock;
    Clock::time_point stop_deadline = Clock::time_point::max();
    for (;;) {
      int work = reap();
      Result<int> ran = ioq_->process_completions();
      if (!ran.ok()) {
        dev_.set_failure("ublk queue " + std::to_string(qid_) + ": " + ran.status().to_string());
        return;
      }
      work += *ran;
      if (to_submit_ > 0) {
        const int rc = submit();
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
          dev_.set_failure(
              Status::from_errno("ublk queue " + std::to_string(qid_) + ": io_uring_submit", -rc)
                  .to_string());
          return;
        }
      }
      const bool stopping = dev_.stopping_.load(std::memory_order_acquire);
      if (stopping && stop_deadline == Clock::time_point::max()) {
        stop_deadline = Clock::now() + kStopGrace;
      }
      if ((with_kernel_ == 0 || stopping) && ioq_->outstanding() == 0 && to_submit_ == 0) {
        if (!stopping) {  // the kernel ended every tag: the device was deleted under us
          dev_.set_failure("ublk queue " + std::to_string(qid_) +
                           ": the kernel ended every tag's command (the device was removed)");
        }
        return;
      }
      if (stopping && Clock::now() >= stop_deadline) {
        ++stats_.stop_grace_expired;
        return;
      }
      if (work == 0) ioq_->wait(Clock::now() + kQueueTick, ring_->ring.ring_fd);
    }
  }

  UblkDevice& dev_;
  const uint16_t qid_;
  host::IoQueue* const ioq_;
  verbs::RegisteredBuffer buffer_;
  std::vector<Tag> tags_;
  const ublksrv_io_desc* descs_ = nullptr;
  size_t descs_bytes_ = 0;
  std::unique_ptr<Ring> ring_;
  unsigned with_kernel_ = 0;  // tags whose FETCH or COMMIT_AND_FETCH the kernel holds
  unsigned to_submit_ = 0;    // prepared, not yet submitted
  UblkStats stats_;
  std::mutex ready_mu_;
  std::condition_variable ready_cv_;
  bool setup_done_ = false;
  Status setup_status_;
};

Result<int> open_control() {
  const int fd = ::open(kControlPath, O_RDWR | O_CLOEXEC);
  if (fd >= 0) return fd;
  const int err = errno;
  if (err == ENOENT) {
    return Status::unavailable(std::string(kControlPath) +
                               " is missing: load ublk_drv (modprobe ublk_drv; Linux 6.0 or "
                               "later built with CONFIG_BLK_DEV_UBLK)");
  }
  return Status::from_errno(std::string("open ") + kControlPath, err);
}

Status ublk_available() {
  NVMF_ASSIGN_OR_RETURN(const int fd, open_control());
  ::close(fd);
  return ok_status();
}

UblkDevice::UblkDevice(host::Controller& ctrl, const DeviceLayout& layout)
    : ctrl_(ctrl), layout_(layout) {}

Result<std::unique_ptr<UblkDevice>> UblkDevice::create(host::Controller& ctrl,
                                                       const UblkOptions& options) {
  const proto::IdentifyController& id = ctrl.identify_controller();
  const size_t nq = ctrl.num_io_queues();
  if (nq == 0) return Status::unavailable("the controller has no I/O queue");
  host::IoQueue* first = nullptr;
  NVMF_ASSIGN_OR_RETURN(first, ctrl.io_queue(0));
  DeviceFacts facts;
  facts.lba_size = ctrl.lba_size();
  facts.nsze = ctrl.namespace_info().nsze;
  facts.max_command_bytes = ctrl.transfer_limits().max_command_bytes;
  facts.volatile_write_cache = (id.vwc & proto::kVwcPresent) != 0;
  facts.dataset_management = (id.oncs & proto::kOncsDatasetManagement) != 0;
  facts.write_zeroes = (id.oncs & proto::kOncsWriteZeroes) != 0;
  facts.queues = static_cast<uint16_t>(std::min<size_t>(nq, kMaxHwQueues));
  facts.depth = std::min<uint16_t>(first->depth(), kMaxQueueDepth);
  facts.max_io_bytes = options.max_io_bytes;
  DeviceLayout layout;
  NVMF_ASSIGN_OR_RETURN(layout, plan_device(facts));

  std::unique_ptr<UblkDevice> dev(new UblkDevice(ctrl, layout));
  NVMF_ASSIGN_OR_RETURN(dev->control_fd_, open_control());
  dev->control_ring_ = std::make_unique<Ring>();
  int rc = io_uring_queue_init(4, &dev->control_ring_->ring, IORING_SETUP_SQE128);
  if (rc < 0) return Status::from_errno("io_uring with 128-byte SQEs (ublk control)", -rc);
  dev->control_ring_->ready = true;

  ublksrv_ctrl_dev_info info{};
  info.nr_hw_queues = layout.nr_hw_queues;
  info.queue_depth = layout.queue_depth;
  info.max_io_buf_bytes = layout.max_io_buf_bytes;
  info.dev_id = options.dev_id < 0 ? ~0u : static_cast<uint32_t>(options.dev_id);
  dev->dev_id_ = info.dev_id;
  if (Result<int> added = dev->control(kCmdAddDev, &info, sizeof(info), 0, "ADD_DEV");
      !added.ok()) {
    if (added.status().os_errno() == EEXIST) {
      return Status::invalid_argument("ublk device " + std::to_string(info.dev_id) +
                                      " exists already: give another --dev-id, or none");
    }
    return added.status();
  }
  dev->added_ = true;
  dev->dev_id_ = info.dev_id;
  // The kernel makes no more hardware queues than CPUs: the IoQueues beyond go unused.
  if (info.nr_hw_queues >= 1 && info.nr_hw_queues < layout.nr_hw_queues) {
    dev->layout_.nr_hw_queues = info.nr_hw_queues;
    layout.nr_hw_queues = info.nr_hw_queues;
  }
  if (info.max_io_buf_bytes != layout.max_io_buf_bytes || info.queue_depth != layout.queue_depth ||
      info.nr_hw_queues != layout.nr_hw_queues) {
    return Status::internal(
        "ublk ADD_DEV changed the device: " + std::to_string(info.nr_hw_queues) + " queues x " +
        std::to_string(info.queue_depth) + " tags of " + std::to_string(info.max_io_buf_bytes) +
        " bytes");
  }

  ublk_params params{};
  params.len = sizeof(params);
  params.types = UBLK_PARAM_TYPE_BASIC;
  params.basic.attrs =
      (layout.volatile_cache ? UBLK_ATTR_VOLATILE_CACHE : 0u) | (layout.fua ? UBLK_ATTR_FUA : 0u);
  params.basic.logical_bs_shift = layout.logical_bs_shift;
  params.basic.physical_bs_shift = layout.logical_bs_shift;
  params.basic.io_min_shift = layout.logical_bs_shift;
  params.basic.io_opt_shift = layout.logical_bs_shift;
  params.basic.max_sectors = layout.max_sectors;
  params.basic.dev_sectors = layout.dev_sectors;
  if (layout.max_discard_sectors != 0 || layout.max_write_zeroes_sectors != 0) {
    params.types |= UBLK_PARAM_TYPE_DISCARD;
    params.discard.discard_granularity = layout.discard_granularity != 0
                                             ? layout.discard_granularity
                                             : 1u << layout.logical_bs_shift;
    params.discard.max_discard_sectors = layout.max_discard_sectors;
    params.discard.max_write_zeroes_sectors = layout.max_write_zeroes_sectors;
    params.discard.max_discard_segments = 1;
  }
  NVMF_RETURN_IF_ERROR(
      dev->control(kCmdSetParams, &params, sizeof(params), 0, "SET_PARAMS").status());

  const std::string cdev = "/dev/ublkc" + std::to_string(dev->dev_id_);
  for (int tries = 0; tries < 100 && dev->cdev_fd_ < 0; ++tries) {
    dev->cdev_fd_ = ::open(cdev.c_str(), O_RDWR | O_CLOEXEC);
    if (dev->cdev_fd_ < 0 && errno != ENOENT) break;
    if (dev->cdev_fd_ < 0) ::usleep(10 * 1000);  // devtmpfs or udev makes the node
  }
  if (dev->cdev_fd_ < 0) return Status::from_errno("open " + cdev, errno);

  for (uint16_t q = 0; q < layout.nr_hw_queues; ++q) {
    host::IoQueue* ioq = nullptr;
    NVMF_ASSIGN_OR_RETURN(ioq, ctrl.io_queue(q));
    Result<verbs::RegisteredBuffer> buf =
        ctrl.allocate_buffer(static_cast<size_t>(layout.queue_depth) * layout.max_io_buf_bytes);
    if (!buf.ok()) return buf.status();
    auto queue = std::make_unique<Queue>(*dev, q, ioq, std::move(*buf));
    NVMF_RETURN_IF_ERROR(queue->map_descriptors(dev->cdev_fd_));
    dev->queues_.push_back(std::move(queue));
  }
  return dev;
}

UblkDevice::~UblkDevice() {
  Status st = stop();
  if (!st.ok()) NVMF_LOG(WARN, "ublk") << st.to_string();
}

Result<int> UblkDevice::control(uint32_t op, void* buf, uint16_t len, uint64_t data0,
                                const char* what) {
  io_uring* ring = &control_ring_->ring;
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (sqe == nullptr) return Status::internal("ublk control ring full");
  std::memset(sqe, 0, 2 * sizeof(*sqe));  // a 128-byte SQE
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = control_fd_;
  sqe->cmd_op = op;
  auto* cmd = reinterpret_cast<ublksrv_ctrl_cmd*>(&sqe->addr3);
  cmd->dev_id = dev_id_;
  cmd->queue_id = 0xFFFF;  // not a queue's command
  cmd->len = len;
  cmd->addr = reinterpret_cast<uint64_t>(buf);
  cmd->data[0] = data0;
  int rc = io_uring_submit(ring);
  if (rc < 0) return Status::from_errno(std::string("ublk ") + what + ": io_uring_submit", -rc);
  io_uring_cqe* cqe = nullptr;
  do {
    rc = io_uring_wait_cqe(ring, &cqe);
  } while (rc == -EINTR);
  if (rc < 0) return Status::from_errno(std::string("ublk ") + what + ": io_uring_wait_cqe", -rc);
  const int res = cqe->res;
  io_uring_cqe_seen(ring, cqe);
  if (res < 0) {
    return Status::from_errno(std::string("ublk ") + what + " (device " +
                                  (dev_id_ == ~0u ? std::string("any") : std::to_string(dev_id_)) +
                                  ")",
                              -res);
  }
  return res;
}

Status UblkDevice::start() {
  if (started_) return ok_status();
  if (stopped_) return Status::unavailable("the ublk device was stopped");
  for (auto& q : queues_) {
    Queue* queue = q.get();
    const int fd = cdev_fd_;
    threads_.emplace_back([queue, fd] { queue->run(fd); });
  }
  started_ = true;  // threads to join from here on
  for (auto& q : queues_) NVMF_RETURN_IF_ERROR(q->wait_ready());
  // The kernel waits here until every tag of every queue was fetched.
  NVMF_RETURN_IF_ERROR(
      control(kCmdStartDev, nullptr, 0, static_cast<uint64_t>(::getpid()), "START_DEV").status());
  return ok_status();
}

Status UblkDevice::stop() {
  if (stopped_) return ok_status();
  stopped_ = true;
  Status first;
  auto keep = [&first](const Status& st) {
    if (first.ok() && !st.ok()) first = st;
  };
  if (started_) {
    // The block device goes away once its requests finished: the threads serve until then.
    // Commands held for a reconnect fail now rather than at ctrl-loss-tmo.
    ctrl_.fail_held_io();
    keep(control(kCmdStopDev, nullptr, 0, 0, "STOP_DEV").status());
  }
  stopping_.store(true, std::memory_order_release);
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  final_stats_ = sum_queues();
  for (auto& q : queues_) q->unmap_descriptors();
  if (cdev_fd_ >= 0) {
    ::close(cdev_fd_);
    cdev_fd_ = -1;
  }
  if (added_) {
    Result<int> del = control(kCmdDelDevAsync, nullptr, 0, 0, "DEL_DEV_ASYNC");
    // Before Linux 6.9 the command is unknown: EOPNOTSUPP (the kernel's ENOTSUPP, 524, too).
    const std::optional<int> err = del.ok() ? std::nullopt : del.status().os_errno();
    if (err == EOPNOTSUPP || err == 524) {
      del = control(kCmdDelDev, nullptr, 0, 0, "DEL_DEV");
    }
    keep(del.status());
    added_ = false;
  }
  control_ring_.reset();
  if (control_fd_ >= 0) {
    ::close(control_fd_);
    control_fd_ = -1;
  }
  return first;
}

void UblkDevice::set_failure(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_.empty()) failure_ = why;
}

std::string UblkDevice::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

UblkStats UblkDevice::stats() const { return stopped_ ? final_stats_ : sum_queues(); }

UblkStats UblkDevice::sum_queues() const {
  UblkStats s;
  for (const auto& q : queues_) {
    const UblkStats& x = q->stats();
    s.reads += x.reads;
    s.writes += x.writes;
    s.flushes += x.flushes;
    s.discards += x.discards;
    s.write_zeroes += x.write_zeroes;
    s.errors += x.errors;
    s.bytes_read += x.bytes_read;
    s.bytes_written += x.bytes_written;
    s.stop_grace_expired += x.stop_grace_expired;
  }
  return s;
}

}  // namespace nvmf::ublk
