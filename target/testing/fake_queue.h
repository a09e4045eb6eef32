// SPDX-License-Identifier: BSD-3-Clause
// FakeQueue: one target queue driven in memory the way RdmaQueue drives it (command slots, RDMA
// READs that complete later, Async Event Requests held), with the checks every transport relies
// on. No RDMA device and no GoogleTest: the fuzzers (//fuzz) link it, and unit tests may.
//
// The target's in-memory transports all live in target/testing/:
// - FakeQueue (here): many commands in flight on slots, held commands answered later, a broken
//   transport invariant aborts (a fuzzer finding). A RAM namespace only: kBackend aborts.
// - processor_harness.h's TestQueue, FakeLink and FakeEngine: one command at a time, stepped by
//   a unit test with GoogleTest assertions, backend I/O the test completes by hand. The fuzzers
//   cannot use it: it needs gtest (ASSERT_* inside), which libFuzzer binaries do not link, and
//   it holds one Request where the fuzzers need every slot of a queue.
// - capsules.h: the SQEs and Connect data both build.
#ifndef NVMF_TARGET_TESTING_FAKE_QUEUE_H_
#define NVMF_TARGET_TESTING_FAKE_QUEUE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proto/nvme.h"
#include "target/command_processor.h"
#include "target/counters.h"
#include "target/queue_link.h"
#include "target/subsystem.h"

namespace nvmf::target::testing {

// Aborts with `what` on stderr when `ok` is false: a broken transport invariant is a finding.
void require(bool ok, std::string_view what);

// One queue as a CM connection accepted with `qid` and `queue_size` (hsqsize + 1) would make
// it: queue_size command slots, each with a data buffer of the subsystem's max transfer bytes,
// and receives with `in_capsule_bytes` of in-capsule area (4 KiB pages).
//
// Like RdmaQueue, a capsule takes a free slot (none free: it is refused here, where RDMA would
// leave it in the receive queue; before a Connect is accepted only kSlotsBeforeConnect slots
// exist); the SQE and the in-capsule pages stay valid until the response is sent, or until the
// command is held (kHold gives the receive back: the SQE is freed, so a late use of it is a
// use-after-free ASan reports; the processor answers it later through respond_held()). Every
// response is checked: CID and SQID echo the command, the data phase fits the slot buffer and
// a keyed SGL, a held command is answered once.
class FakeQueue final : public target::QueueLink {
 public:
  FakeQueue(target::Subsystem& subsystem, target::StatusCounters& statuses, uint16_t qid,
            uint32_t queue_size, uint32_t in_capsule_bytes);
  ~FakeQueue() override;
  FakeQueue(const FakeQueue&) = delete;
  FakeQueue& operator=(const FakeQueue&) = delete;

  // Delivers a capsule: the SQE plus `in_capsule` bytes after it (truncated to the area).
  // Returns the slot's outcome, or nullopt when no slot was free.
  std::optional<target::NextStep> deliver(const proto::Sqe& sqe,
                                          std::span<const uint8_t> in_capsule);
  // Completes the oldest outstanding RDMA READ with `data` (zero-filled to the length asked);
  // nullopt when none is outstanding.
  std::optional<target::NextStep> complete_read(std::span<const uint8_t> data);
  // Completes the oldest outstanding RDMA READ as a faulty provider may (soft-RoCE when the QP
  // fails mid-READ): reported done, but only the first `placed` bytes of `data` were written to
  // the slot buffer; the rest keeps what it held. nullopt when none is outstanding.
  std::optional<target::NextStep> complete_read_partly(std::span<const uint8_t> data,
                                                       size_t placed);
  size_t reads_outstanding() const { return reads_.size(); }
  // Makes the next connect_accepted() fail (the RDMA transport could not set the queue up).
  void fail_connect_setup() { fail_setup_ = true; }

  // The CQE of the last response sent (kRespond or kWriteToHostThenRespond).
  const proto::Cqe& last_cqe() const { return last_cqe_; }
  uint64_t responses() const { return responses_; }
  // request_disconnect() was called: the owner should destroy this queue soon.
  bool disconnect_requested() const { return !disconnect_reason_.empty(); }
  const std::string& disconnect_reason() const { return disconnect_reason_; }
  target::CommandProcessor& processor() { return *processor_; }
  uint16_t qid() const { return qid_; }

  // QueueLink.
  void request_disconnect(std::string_view reason) override;
  std::string describe() const override;
  bool connect_accepted() override;
  void respond_held(target::Request& r) override;

  static constexpr uint32_t kSlotsBeforeConnect = 2;  // as RdmaQueue

 private:
  struct Slot {
    std::unique_ptr<proto::Sqe> sqe;  // the receive buffer's SQE; null while free or held
    std::vector<std::vector<uint8_t>> pages;
    std::vector<uint8_t*> page_ptrs;
    std::vector<uint8_t> buffer;  // the slot's data buffer
    target::Request req;
    bool busy = false;
    bool held = false;
    uint16_t cid = 0;  // the command's, for checking a held command's late response
  };
  target::NextStep act(uint32_t slot, target::NextStep step);
  void release(uint32_t slot);

  uint16_t qid_;
  uint32_t in_capsule_bytes_;
  uint32_t max_transfer_bytes_;
  target::QueueCounters counters_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> reads_;  // slots waiting for their RDMA READ, oldest first
  proto::Cqe last_cqe_{};
  uint64_t responses_ = 0;
  std::string disconnect_reason_;
  bool accepted_ = false;  // connect_accepted() ran: every slot may be used
  bool fail_setup_ = false;
  std::unique_ptr<target::CommandProcessor> processor_;  // last: destroyed first
};

}  // namespace nvmf::target::testing

#endif  // NVMF_TARGET_TESTING_FAKE_QUEUE_H_
