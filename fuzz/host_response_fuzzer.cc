// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes what the host library takes from a target, which may be malicious: Identify Controller
// and Namespace data (validate_identify_controller, decode_namespace), the Active Namespace ID
// list (first_active_nsid), Discovery Log Pages (parse_discovery_log), and response capsules
// against a queue's command slots (SlotTable: CIDs out of range, answered twice, before their
// SEND completed, for a slot abandoned). Each accepted value must be one the host can use; the
// slot bookkeeping must stay consistent whatever arrives.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz/input.h"
#include "host/discover.h"
#include "host/identify.h"
#include "host/slot_table.h"
#include "proto/discovery.h"
#include "proto/nvme.h"
#include "target/testing/fake_queue.h"

namespace {

using nvmf::target::testing::require;

void identify_controller(nvmf::fuzz::Input& in) {
  auto id = in.object<nvmf::proto::IdentifyController>();
  if (nvmf::host::validate_identify_controller(id).ok()) {
    require(id.ioccsz >= 4 && id.iorcsz >= 1 && id.kas != 0,
            "an Identify Controller the host cannot use was accepted");
  }
  (void)nvmf::host::mdts_bytes(id.mdts, 4096);
  (void)nvmf::host::trim_ascii(id.sn, sizeof(id.sn));
}

void identify_namespace(nvmf::fuzz::Input& in) {
  const uint32_t nsid = in.u32();
  auto ns = in.object<nvmf::proto::IdentifyNamespace>();
  auto d = nvmf::host::decode_namespace(nsid, ns);
  if (d.ok()) {
    require(
        d->lba_size >= 512 && d->lba_size <= (1u << 20) && (d->lba_size & (d->lba_size - 1)) == 0,
        "an LBA size outside 512 B..1 MiB or not a power of two was accepted");
    require(d->nsid == nsid, "the NSID changed");
  }
}

void active_list(nvmf::fuzz::Input& in) {
  std::vector<uint8_t> list(4096, 0);
  nvmf::fuzz::Input::copy_to(list.data(), in.bytes(in.u16() % (list.size() + 1)));
  // The list ends at its first zero: only its first entry can be the first active NSID.
  auto first = nvmf::host::first_active_nsid(list);
  uint32_t head = 0;
  std::memcpy(&head, list.data(), sizeof(head));
  require(first.ok() == (head != 0), "an empty list read as an NSID, or the reverse");
  if (first.ok()) require(*first == head, "not the list's first NSID");
}

void discovery_log(nvmf::fuzz::Input& in) {
  // A header with a NUMREC near what the bytes hold (or anything), then the entries.
  const uint32_t entries = in.u8() % 8;
  std::vector<uint8_t> log(
      nvmf::proto::kDiscoveryLogHeaderSize + size_t{entries} * nvmf::proto::kDiscoveryLogEntrySize,
      0);
  nvmf::fuzz::Input::copy_to(log.data(), in.bytes(log.size()));
  auto parsed = nvmf::host::parse_discovery_log(log);
  if (parsed.ok()) {
    require(parsed->recfmt == 0, "RECFMT other than 0 accepted");
    require(parsed->entries.size() == parsed->numrec, "entries differ from NUMREC");
    require(parsed->numrec <= entries, "more entries than the bytes hold");
    for (const auto& e : parsed->entries) {
      require(e.traddr.size() <= 256 && e.trsvcid.size() <= 32 && e.subnqn.size() <= 256,
              "a field longer than its place in the entry");
    }
  }
}

// Slots of one queue; the input picks operations and CQEs. The model (what the table must say)
// is kept here beside it.
void slots(nvmf::fuzz::Input& in) {
  const uint16_t n = static_cast<uint16_t>(1 + in.u8() % 64);
  nvmf::host::SlotTable t(n);
  struct Model {
    bool busy = false, sent = false, answered = false;
  };
  std::vector<Model> m(n);
  for (int step = 0; step < 512 && !in.empty(); ++step) {
    const uint8_t op = in.u8() % 5;
    const uint16_t slot = in.u16();
    switch (op) {
      case 0: {
        auto s = t.acquire();
        size_t free = 0;
        for (const Model& x : m) free += !x.busy;
        require(s.has_value() == (free > 0), "acquire() disagrees with the free slots");
        if (s) {
          require(*s < n && !m[*s].busy, "acquire() gave a busy or foreign slot");
          m[*s] = {true, false, false};
        }
        break;
      }
      case 1: {  // a send completion (maybe for a slot not in flight)
        const bool want = slot < n && m[slot].busy && !m[slot].sent;
        require(t.on_send_complete(slot) == want, "on_send_complete() verdict");
        if (want) m[slot].sent = true;
        break;
      }
      case 2: {  // a response capsule from the target, any CID
        auto cqe = in.object<nvmf::proto::Cqe>();
        cqe.cid = slot;
        const bool want = slot < n && m[slot].busy && !m[slot].answered;
        require(t.on_response(cqe) == want, "on_response() verdict");
        if (want) m[slot].answered = true;
        break;
      }
      case 3: {  // release what is done
        if (slot < n) {
          const bool done = m[slot].busy && m[slot].sent && m[slot].answered;
          require(t.done(slot) == done, "done() verdict");
          if (done) {
            auto cqe = t.release(slot);
            require(cqe.cid == slot, "released CQE of another CID");
            m[slot] = {};
          }
        }
        break;
      }
      case 4: {  // a send that could not be posted: only for a slot acquired and not sent
        if (slot < n && m[slot].busy && !m[slot].sent && !m[slot].answered) {
          t.abandon(slot);
          m[slot] = {};
        }
        break;
      }
    }
    size_t free = 0;
    for (const Model& x : m) free += !x.busy;
    require(t.free_count() == free, "free_count() differs from the slots not in flight");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nvmf::fuzz::Input in(data, size);
  switch (in.u8() % 5) {
    case 0:
      identify_controller(in);
      break;
    case 1:
      identify_namespace(in);
      break;
    case 2:
      active_list(in);
      break;
    case 3:
      discovery_log(in);
      break;
    default:
      slots(in);
      break;
  }
  return 0;
}
