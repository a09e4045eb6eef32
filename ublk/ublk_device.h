// SPDX-License-Identifier: BSD-3-Clause
// UblkDevice: a namespace of a connected Controller as a Linux block device /dev/ublkbN, served
// through ublk (drivers/block/ublk_drv.c, Linux 6.0+, module ublk_drv): one ublk hardware queue
// per I/O queue, each served by its own thread through the host library's asynchronous API
// (host/io_queue.h). Every ublk request becomes one NVMe command: read and write (FUA kept),
// flush, discard as Dataset Management Deallocate and write-zeroes as Write Zeroes when the
// controller supports them (ublk/ublk_map.h). Data moves once: the kernel copies between the
// request's pages and the tag's buffer, which is registered memory the target reads from or
// writes into with RDMA.
//
// Recovery is the Controller's: while it reconnects the commands are held and the block
// device's requests wait; past fast_io_fail_tmo they fail with -ENOLINK (Linux's
// BLK_STS_TRANSPORT for a Host Pathing Error), as they do once ctrl_loss_tmo removed the
// controller.
#ifndef NVMF_UBLK_UBLK_DEVICE_H_
#define NVMF_UBLK_UBLK_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "host/controller.h"
#include "ublk/ublk_map.h"

namespace nvmf::ublk {

// Opens ublk's control device /dev/ublk-control (read-write: root, or CAP_SYS_ADMIN): the fd.
// kUnavailable naming ublk_drv when it is missing; the errno otherwise (EACCES, EPERM).
Result<int> open_control();
// Whether a ublk device can be added here (open_control() and close).
Status ublk_available();

struct UblkOptions {
  int dev_id = -1;                     // ublk device number N; -1: the kernel picks
  uint32_t max_io_bytes = 128 * 1024;  // the most one request carries (per-tag buffer)
};

// Requests served, all queues (read after stop()).
struct UblkStats {
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t flushes = 0;
  uint64_t discards = 0;
  uint64_t write_zeroes = 0;
  uint64_t errors = 0;  // requests completed with an error
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  // Queue threads that stop() ended after waiting 10 s for their NVMe commands (0 in an
  // orderly removal: every command had finished).
  uint64_t stop_grace_expired = 0;
};

class UblkDevice {
 public:
  // Adds the device (UBLK_CMD_ADD_DEV with one queue per I/O queue of `ctrl` and a tag per
  // command slot, UBLK_CMD_SET_PARAMS with the namespace's size and LBA size), allocates each
  // queue's registered tag buffers and opens /dev/ublkcN. Errors: kUnavailable without
  // /dev/ublk-control ("modprobe ublk_drv"), kInvalidArgument for a namespace no ublk device
  // can show (plan_device()), the kernel's errno by name otherwise. The Controller must outlive
  // the UblkDevice, and must not be used for other I/O (its IoQueues are the device's).
  static Result<std::unique_ptr<UblkDevice>> create(host::Controller& ctrl,
                                                    const UblkOptions& options);
  ~UblkDevice();  // stop()
  UblkDevice(const UblkDevice&) = delete;
  UblkDevice& operator=(const UblkDevice&) = delete;

  // Starts one thread per queue (each takes its IoQueue and fetches every tag) and then
  // UBLK_CMD_START_DEV: the block device exists when it returns.
  Status start();
  // UBLK_CMD_STOP_DEV (the kernel removes the block device once its requests finished), ends
  // the queue threads, closes the character device and UBLK_CMD_DEL_DEV. Idempotent; the first
  // error.
  Status stop();

  uint32_t dev_id() const { return dev_id_; }
  std::string block_device() const { return "/dev/ublkb" + std::to_string(dev_id_); }
  const DeviceLayout& layout() const { return layout_; }
  // Why a queue thread ended early (empty while none did). Thread-safe.
  std::string failure() const;
  // Summed over the queues; complete once stop() returned.
  UblkStats stats() const;

 private:
  class Queue;
  UblkDevice(host::Controller& ctrl, const DeviceLayout& layout);
  // One control command on /dev/ublk-control; the kernel's result (>= 0) or its errno.
  Result<int> control(uint32_t op, void* buf, uint16_t len, uint64_t data0, const char* what);
  void set_failure(const std::string& why);
  UblkStats sum_queues() const;

  host::Controller& ctrl_;
  DeviceLayout layout_;
  uint32_t dev_id_ = 0;
  bool added_ = false;
  bool started_ = false;
  bool stopped_ = false;
  int control_fd_ = -1;
  int cdev_fd_ = -1;
  struct Ring;
  std::unique_ptr<Ring> control_ring_;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::string failure_;
  UblkStats final_stats_;  // the queues' counters, kept by stop()
};

}  // namespace nvmf::ublk

#endif  // NVMF_UBLK_UBLK_DEVICE_H_
