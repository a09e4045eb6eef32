// SPDX-License-Identifier: BSD-3-Clause
// Test harness: a CommandProcessor driven in memory the way the RDMA transport drives it (no
// device), with an IoEngine stand-in whose operations the test completes by hand. For unit
// tests of target/ only (gtest inside). The capsule builders are in capsules.h; the fuzzers'
// transport, FakeQueue, in fake_queue.h (which says why there are two).
#ifndef NVMF_TARGET_TESTING_PROCESSOR_HARNESS_H_
#define NVMF_TARGET_TESTING_PROCESSOR_HARNESS_H_

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/nvme_status.h"
#include "common/sgl.h"
#include "proto/fabrics.h"
#include "target/command_processor.h"
#include "target/io_engine.h"
#include "target/testing/capsules.h"

namespace nvmf::target::testing {

inline constexpr uint32_t kPage = 4096;
inline constexpr uint32_t kInCapsule = 8192;  // two pages
inline constexpr uint32_t kGoodCc = 0x00460001;

// The transport side of a queue, recorded: disconnect requests, the post-Connect setup
// (connect_accepted(), failing when accept_ok is false) and held commands' late responses.
class FakeLink : public QueueLink {
 public:
  explicit FakeLink(std::string name) : name_(std::move(name)) {}
  void request_disconnect(std::string_view reason) override { reasons.emplace_back(reason); }
  std::string describe() const override { return name_; }
  std::string peer_host() const override { return peer; }
  bool connect_accepted() override {
    ++accepts;
    return accept_ok;
  }
  void respond_held(Request& r) override { held_responses.push_back(r.cqe); }
  bool on_owner_thread() const override { return owner; }
  std::vector<std::string> reasons;
  bool owner = true;  // false: calls come as from another poll group
  std::string peer;   // peer_host()
  int accepts = 0;
  bool accept_ok = true;
  std::vector<proto::Cqe> held_responses;

 private:
  std::string name_;
};

// Records submissions; the test decides when and how each finishes (finish_next()).
class FakeEngine : public IoEngine {
 public:
  void submit(IoRequest& io) override {
    submitted.push_back(&io);
    history.push_back(io);
  }
  void flush_submissions() override {}
  int reap() override { return 0; }
  int event_fd() const override { return -1; }
  void clear_event() override {}
  void drain() override {}
  uint64_t in_flight() const override { return submitted.size(); }
  const char* name() const override { return "fake"; }

  // Completes the oldest submission with `result` (bytes or -errno) through its IoCompletion.
  void finish_next(int64_t result) {
    ASSERT_FALSE(submitted.empty());
    IoRequest* io = submitted.front();
    submitted.pop_front();
    io->result = result;
    io->done->io_done(*io);
  }

  std::deque<IoRequest*> submitted;
  std::vector<IoRequest> history;  // copies, in submission order
};

// One queue: its processor plus a receive buffer (SQE + in-capsule pages) and a slot buffer.
// As the transport, it receives io_done() and passes the Request back to the processor.
class TestQueue : public IoCompletion {
 public:
  TestQueue(Subsystem& subsys, StatusCounters& statuses, uint16_t qid, uint32_t queue_size)
      : link("test qid " + std::to_string(qid)),
        proc(subsys, link, counters, statuses, qid, queue_size, kInCapsule),
        pages(kInCapsule / kPage, std::vector<uint8_t>(kPage)) {
    // Page-aligned like the transport's registered buffers (O_DIRECT needs it).
    buffer_storage.reset(static_cast<uint8_t*>(
        std::aligned_alloc(4096, (subsys.config().max_transfer_bytes() + 4095) / 4096 * 4096)));
    buffer = {buffer_storage.get(), subsys.config().max_transfer_bytes()};
    for (auto& p : pages) page_ptrs.push_back(p.data());
  }

  // Submits `s` with `data` placed in the in-capsule area at `data_offset`.
  NextStep submit(const proto::Sqe& s, std::span<const uint8_t> data = {},
                  uint32_t data_offset = 0) {
    sqe = s;
    for (size_t i = 0; i < data.size(); ++i) {
      size_t at = data_offset + i;
      pages[at / kPage][at % kPage] = data[i];
    }
    req = Request{};
    req.sqe = &sqe;
    req.in_capsule = InCapsuleArea{
        page_ptrs, kPage, static_cast<uint32_t>(data.empty() ? 0 : data_offset + data.size())};
    req.buffer = buffer;
    req.io.done = this;
    return last = proc.begin(req);
  }
  void io_done(IoRequest&) override { last = proc.io_done(req); }
  uint16_t status() const { return req.cqe.status; }
  // Submits `s` into `other` instead of `req` (a second command in flight on this queue), with
  // `received` bytes of in-capsule data already in `pages`.
  NextStep submit_other(Request& other, const proto::Sqe& s, proto::Sqe& storage,
                        uint32_t received = 0) {
    storage = s;
    other = Request{};
    other.sqe = &storage;
    other.in_capsule = InCapsuleArea{page_ptrs, kPage, received};
    other.buffer = buffer;
    other.io.done = this;
    return proc.begin(other);
  }

  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  FakeLink link;
  QueueCounters counters;
  CommandProcessor proc;
  std::unique_ptr<uint8_t, Free> buffer_storage;
  std::span<uint8_t> buffer;
  std::vector<std::vector<uint8_t>> pages;
  std::vector<uint8_t*> page_ptrs;
  proto::Sqe sqe{};
  Request req;
  NextStep last = NextStep::kRespond;  // what begin() or the last io_done() returned
};

// A Connect whose data is in-capsule (offset 0) or, with `in_capsule` false, keyed (the
// processor then asks for an RDMA READ).
inline proto::Sqe connect_sqe(uint16_t qid, uint16_t sqsize, bool in_capsule = true) {
  if (in_capsule) return in_capsule_connect_sqe(qid, sqsize);
  proto::Sqe s = in_capsule_connect_sqe(qid, sqsize);
  auto& c = reinterpret_cast<proto::ConnectCommand&>(s);
  EXPECT_TRUE(encode_keyed_sgl(c.sgl1, 0x1000, proto::kConnectDataSize, 0x77));
  return s;
}

inline proto::Sqe identify_sqe(uint8_t cns, uint32_t nsid = 0) {
  proto::Sqe s = base_sqe(proto::kAdminIdentify);
  s.nsid = nsid;
  s.cdw10 = cns;
  EXPECT_TRUE(encode_keyed_sgl(s.dptr, 0x2000, 4096, 0x55));
  return s;
}

// Read/Write (and Write Zeroes with sgl_bytes 0) of `nlb` LBAs at `slba` on nsid 1.
inline proto::Sqe rw_sqe(uint8_t opcode, uint64_t slba, uint32_t nlb, uint32_t sgl_bytes,
                         bool in_capsule = false, uint32_t offset = 0) {
  proto::Sqe s = base_sqe(opcode);
  s.nsid = 1;
  s.cdw10 = static_cast<uint32_t>(slba);
  s.cdw11 = static_cast<uint32_t>(slba >> 32);
  s.cdw12 = nlb - 1;
  if (sgl_bytes == 0) return s;
  if (in_capsule) {
    encode_in_capsule_sgl(s.dptr, offset, sgl_bytes);
  } else {
    EXPECT_TRUE(encode_keyed_sgl(s.dptr, 0x3000, sgl_bytes, 0x99));
  }
  return s;
}

}  // namespace nvmf::target::testing

#endif  // NVMF_TARGET_TESTING_PROCESSOR_HARNESS_H_
