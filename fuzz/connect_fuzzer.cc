// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes one Fabrics Connect: any SQE and any 1024 bytes of Connect data, in-capsule or by
// RDMA READ, on an admin or I/O queue of the NVM subsystem (an admin Connect of the allowed
// host runs first when the input asks, so I/O Connects can find a controller). A Connect that
// succeeds must bind the queue to a controller of an allowed host, with CNTLID in DW0; one that
// fails must leave the queue without a controller.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "common/log.h"
#include "common/sgl.h"
#include "fuzz/fake_target.h"
#include "fuzz/input.h"
#include "proto/fabrics.h"
#include "target/testing/capsules.h"
#include "target/testing/fake_queue.h"

namespace nvmf::fuzz {
namespace {

using target::NextStep;

using target::testing::connect_data;

// An admin or I/O Connect (SQSIZE 7), its data in-capsule.
proto::Sqe connect_sqe(uint16_t qid) {
  return target::testing::in_capsule_connect_sqe(qid, 7, /*kato_ms=*/0);
}

// Runs `sqe` with `data` on `q` to its response (completing the RDMA READ if one is asked).
std::optional<NextStep> run(FakeQueue& q, const proto::Sqe& sqe, std::span<const uint8_t> data,
                            bool in_capsule) {
  auto step = q.deliver(sqe, in_capsule ? data : std::span<const uint8_t>());
  if (step == NextStep::kReadFromHost) step = q.complete_read(data);
  return step;
}

}  // namespace
}  // namespace nvmf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvmf::fuzz;
  static const bool init = [] { return nvmf::set_log_level(nvmf::LogLevel::kError), true; }();
  (void)init;
  Input in(data, size);
  FakeTarget t;
  uint8_t shape = in.u8();
  uint16_t qid = shape & 0x03;  // 3 is above the 2 I/O queues offered
  std::unique_ptr<FakeQueue> admin;
  if (qid != 0 && (shape & 0x04)) {
    admin = std::make_unique<FakeQueue>(*t.nvm, t.statuses, 0, 8, 8192);
    auto d = connect_data(nvmf::proto::kAdminQueueCntlid, kFuzzSubnqn, kAllowedHost);
    run(*admin, connect_sqe(0), d, true);
    require(admin->last_cqe().status == 0, "the allowed host's admin Connect failed");
  }
  FakeQueue q(*t.nvm, t.statuses, qid, 2 + in.u8() % 16, 8192);
  auto sqe = in.object<nvmf::proto::Sqe>();
  if (shape & 0x08) {  // a Connect with fuzzed fields, rather than any SQE
    auto& c = reinterpret_cast<nvmf::proto::ConnectCommand&>(sqe);
    c.opcode = nvmf::proto::kOpcodeFabrics;
    c.fctype = nvmf::proto::kFctypeConnect;
    c.flags = nvmf::proto::kFlagsPsdtSgl;
  }
  bool in_capsule = shape & 0x10;
  if (shape & 0x20) {
    if (in_capsule) {
      nvmf::encode_in_capsule_sgl(sqe.dptr, 0, nvmf::proto::kConnectDataSize);
    } else {
      (void)nvmf::encode_keyed_sgl(sqe.dptr, 0x1000, nvmf::proto::kConnectDataSize, 1);
    }
  }
  std::vector<uint8_t> d;
  if (shape & 0x40) {  // good data with fuzzed NQN bytes
    d = connect_data(in.u8() % 2 ? nvmf::proto::kAdminQueueCntlid : 1, kFuzzSubnqn,
                     shape & 0x80 ? kAllowedHost : kOtherHost);
    auto nqn = in.bytes(in.u8() % 2 ? 256 : in.u8());
    Input::copy_to(d.data() + (in.u8() % 2 ? 256 : 512), nqn);
  } else {
    auto b = in.bytes(nvmf::proto::kConnectDataSize);
    d.assign(b.begin(), b.end());
  }
  auto step = run(q, sqe, d, in_capsule);
  if (!step) return 0;
  nvmf::target::Controller* ctrl = q.processor().controller();
  if (q.last_cqe().status == 0 && *step != NextStep::kHold) {
    require(ctrl != nullptr, "a successful Connect left the queue without a controller");
    require((q.last_cqe().dw0 & 0xFFFF) == ctrl->cntlid(), "Connect DW0 is not the CNTLID");
    require(ctrl->queue(qid) == &q.processor(), "the controller does not know the queue");
    nvmf::target::Subsystem* s =
        t.nvm->find_controller(ctrl->cntlid()) == ctrl ? t.nvm.get() : t.discovery.get();
    require(s->find_controller(ctrl->cntlid()) == ctrl, "a controller no subsystem owns");
    require(s->host_allowed(ctrl->hostnqn()), "a host reached a subsystem it is not allowed on");
  } else {
    require(ctrl == nullptr, "a failed first command left the queue bound to a controller");
  }
  return 0;
}
