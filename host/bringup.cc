// SPDX-License-Identifier: BSD-3-Clause
// Controller bring-up and teardown steps; see bringup.h.
#include "host/bringup.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <thread>

#include "common/nvme_status.h"
#include "host/io_plan.h"
#include "proto/auth.h"

namespace nvmf::host {
namespace {

constexpr auto kPropertyPollInterval = std::chrono::milliseconds(10);

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

std::span<const uint8_t> bytes_of(const proto::ConnectData& data) {
  return {reinterpret_cast<const uint8_t*>(&data), sizeof(data)};
}

// Where a Connect Invalid Parameters response points (IATTR/IPO in DW0), for the message.
// The Connect data fields a target may point at (NVMe-oF 1.1 "Connect Command Data").
const char* connect_data_field_name(uint32_t ipo) {
  switch (ipo) {
    case offsetof(proto::ConnectData, hostid):
      return " (HOSTID)";
    case offsetof(proto::ConnectData, cntlid):
      return " (CNTLID: no such controller)";
    case offsetof(proto::ConnectData, subnqn):
      return " (SUBNQN: the target has no such subsystem; check -n/--nqn)";
    case offsetof(proto::ConnectData, hostnqn):
      return " (HOSTNQN)";
    default:
      return "";
  }
}

std::string connect_invalid_field(uint32_t dw0) {
  uint32_t ipo = dw0 & proto::kConnectRespIpoMask;
  bool in_data = (dw0 & proto::kConnectRespIattrInData) != 0;
  return std::string(", invalid field at ") + (in_data ? "Connect data" : "SQE") + " byte " +
         std::to_string(ipo) + (in_data ? connect_data_field_name(ipo) : "");
}

Result<proto::Cqe> run_checked(CommandChannel& ch, const proto::Sqe& sqe,
                               std::span<const uint8_t> out, std::span<uint8_t> in,
                               bool allow_in_capsule, const std::string& what) {
  Result<proto::Cqe> cqe = ch.run(sqe, out, in, allow_in_capsule);
  if (!cqe.ok()) return std::move(cqe).status().annotate(what);
  NVMF_RETURN_IF_ERROR(cqe_status(*cqe, what));
  return cqe;
}

}  // namespace

void default_sleep(std::chrono::milliseconds ms) { std::this_thread::sleep_for(ms); }

Result<uint16_t> fabrics_connect(CommandChannel& ch, uint16_t qid, uint16_t queue_size,
                                 uint32_t kato_ms, const proto::ConnectData& data,
                                 bool allow_in_capsule, bool* authentication_required) {
  std::string what = "Connect (qid " + std::to_string(qid) + ")";
  proto::Sqe sqe = connect_sqe(qid, queue_size, qid == 0 ? kato_ms : 0);
  Result<proto::Cqe> cqe = ch.run(sqe, bytes_of(data), {}, allow_in_capsule);
  if (!cqe.ok()) return std::move(cqe).status().annotate(what);
  Status st = cqe_status(*cqe, what);
  if (!st.ok()) {
    if (status_sct(cqe->status) == proto::kSctCommandSpecific &&
        (status_sc(cqe->status) == proto::kScConnectInvalidParameters ||
         status_sc(cqe->status) == proto::kScConnectInvalidHost)) {
      return Status::nvme_error(cqe->status, st.message() + connect_invalid_field(cqe->dw0));
    }
    return st;
  }
  if (authentication_required != nullptr) {
    *authentication_required = (cqe->dw0 & proto::kConnectRespAuthreqAtr) != 0;
  }
  return static_cast<uint16_t>(cqe->dw0 & proto::kConnectRespCntlidMask);
}

Result<uint64_t> property_get(CommandChannel& ch, uint32_t ofst, bool eight_bytes) {
  NVMF_ASSIGN_OR_RETURN(proto::Cqe cqe, run_checked(ch, property_get_sqe(ofst, eight_bytes), {}, {},
                                                    false, "Property Get " + hex(ofst)));
  uint64_t value = cqe.dw0;
  if (eight_bytes) value |= uint64_t{cqe.dw1} << 32;
  return value;
}

Status property_set(CommandChannel& ch, uint32_t ofst, uint32_t value) {
  return run_checked(ch, property_set_sqe(ofst, value), {}, {}, false,
                     "Property Set " + hex(ofst) + " = " + hex(value))
      .status();
}

Status enable_controller(CommandChannel& ch, uint64_t cap, const SleepFn& sleep) {
  NVMF_RETURN_IF_ERROR(property_set(ch, proto::kPropCc, kCcEnable));
  uint32_t timeout_ms = cap_timeout_ms(cap);
  for (uint32_t waited = 0;; waited += kPropertyPollInterval.count()) {
    NVMF_ASSIGN_OR_RETURN(uint64_t csts, property_get(ch, proto::kPropCsts, false));
    if (csts & proto::kCstsCfs) {
      return Status::io("controller fatal status while enabling (CSTS " + hex(csts) + ")");
    }
    if (csts & proto::kCstsRdy) return ok_status();
    if (waited >= timeout_ms) {
      return Status::timeout("CSTS.RDY still 0 after CAP.TO = " + std::to_string(timeout_ms) +
                             " ms (CC " + hex(kCcEnable) + ")");
    }
    sleep(kPropertyPollInterval);
  }
}

Status disable_controller(CommandChannel& ch, uint32_t cc, uint64_t cap, const SleepFn& sleep) {
  const uint32_t disabled = cc & ~uint32_t{1};  // CC.EN is bit 0
  NVMF_RETURN_IF_ERROR(property_set(ch, proto::kPropCc, disabled));
  uint32_t timeout_ms = cap_timeout_ms(cap);
  for (uint32_t waited = 0;; waited += kPropertyPollInterval.count()) {
    NVMF_ASSIGN_OR_RETURN(uint64_t csts, property_get(ch, proto::kPropCsts, false));
    if ((csts & proto::kCstsRdy) == 0) return ok_status();
    if (waited >= timeout_ms) {
      return Status::timeout("CSTS.RDY still 1 after CAP.TO = " + std::to_string(timeout_ms) +
                             " ms (CC " + hex(disabled) + ")");
    }
    sleep(kPropertyPollInterval);
  }
}

Status shutdown_controller(CommandChannel& ch, uint32_t cc, int timeout_ms, const SleepFn& sleep) {
  NVMF_RETURN_IF_ERROR(property_set(ch, proto::kPropCc, cc_with_normal_shutdown(cc)));
  for (int waited = 0;; waited += static_cast<int>(kPropertyPollInterval.count())) {
    NVMF_ASSIGN_OR_RETURN(uint64_t csts, property_get(ch, proto::kPropCsts, false));
    uint32_t shst = static_cast<uint32_t>((csts & proto::kCstsShstMask) >> proto::kCstsShstShift);
    if (shst == proto::kShstComplete) return ok_status();
    if (waited >= timeout_ms) {
      return Status::timeout("shutdown: CSTS.SHST still " + std::to_string(shst) + " after " +
                             std::to_string(timeout_ms) + " ms");
    }
    sleep(kPropertyPollInterval);
  }
}

Result<IdentifyResult> identify_all(CommandChannel& ch) {
  IdentifyResult r;
  auto ctrl_bytes = std::span<uint8_t>(reinterpret_cast<uint8_t*>(&r.ctrl), sizeof(r.ctrl));
  NVMF_RETURN_IF_ERROR(run_checked(ch, identify_sqe(proto::kCnsController, 0), {}, ctrl_bytes,
                                   false, "Identify Controller"));
  NVMF_RETURN_IF_ERROR(validate_identify_controller(r.ctrl));
  std::vector<uint8_t> list(proto::kIdentifyDataSize);
  NVMF_RETURN_IF_ERROR(run_checked(ch, identify_sqe(proto::kCnsActiveNamespaceList, 0), {}, list,
                                   false, "Identify Active Namespace list"));
  NVMF_ASSIGN_OR_RETURN(uint32_t nsid, first_active_nsid(list));
  proto::IdentifyNamespace ns{};
  auto ns_bytes = std::span<uint8_t>(reinterpret_cast<uint8_t*>(&ns), sizeof(ns));
  NVMF_RETURN_IF_ERROR(run_checked(ch, identify_sqe(proto::kCnsNamespace, nsid), {}, ns_bytes,
                                   false, "Identify Namespace " + std::to_string(nsid)));
  NVMF_ASSIGN_OR_RETURN(r.ns, decode_namespace(nsid, ns));
  return r;
}

Result<uint16_t> set_number_of_queues(CommandChannel& ch, uint16_t wanted) {
  NVMF_ASSIGN_OR_RETURN(proto::Cqe cqe, run_checked(ch, set_num_queues_sqe(wanted), {}, {}, false,
                                                    "Set Features Number of Queues"));
  uint32_t granted = granted_num_queues(cqe.dw0);
  return static_cast<uint16_t>(granted < wanted ? granted : wanted);
}

Status set_async_event_config(CommandChannel& ch, uint32_t aec) {
  return run_checked(ch, set_async_event_config_sqe(aec), {}, {}, false,
                     "Set Features Asynchronous Event Configuration")
      .status();
}

namespace {

// The Active Namespace ID list from NSID 0 (one page: 1024 NSIDs at most).
Result<std::vector<uint32_t>> active_nsids(CommandChannel& ch) {
  std::vector<uint8_t> list(proto::kIdentifyDataSize);
  NVMF_RETURN_IF_ERROR(run_checked(ch, identify_sqe(proto::kCnsActiveNamespaceList, 0), {}, list,
                                   false, "Identify Active Namespace list")
                           .status());
  return decode_nsid_list(list);
}

// Identify Namespace `nsid`: its NSZE and LBA size; nullopt when it is not active (zero NSZE,
// or Invalid Namespace or Format).
Result<std::optional<NamespaceInfo>> identify_nsid(CommandChannel& ch, uint32_t nsid) {
  proto::IdentifyNamespace ns{};
  auto bytes = std::span<uint8_t>(reinterpret_cast<uint8_t*>(&ns), sizeof(ns));
  Result<proto::Cqe> cqe = ch.run(identify_sqe(proto::kCnsNamespace, nsid), {}, bytes, false);
  const std::string what = "Identify Namespace " + std::to_string(nsid);
  if (!cqe.ok()) return std::move(cqe).status().annotate(what);
  if (status_sct(cqe->status) == proto::kSctGeneric &&
      status_sc(cqe->status) == proto::kScInvalidNamespaceOrFormat) {
    return std::optional<NamespaceInfo>();
  }
  NVMF_RETURN_IF_ERROR(cqe_status(*cqe, what));
  if (ns.nsze == 0) return std::optional<NamespaceInfo>();
  NVMF_ASSIGN_OR_RETURN(NamespaceInfo info, decode_namespace(nsid, ns));
  return std::optional<NamespaceInfo>(info);
}

}  // namespace

Result<NamespaceSizes> scan_namespaces(CommandChannel& ch, size_t identify_at_most) {
  NVMF_ASSIGN_OR_RETURN(std::vector<uint32_t> nsids, active_nsids(ch));
  NamespaceSizes sizes;
  for (size_t i = 0; i < nsids.size(); ++i) {
    uint64_t nsze = kSizeUnknown;
    if (i < identify_at_most) {
      NVMF_ASSIGN_OR_RETURN(std::optional<NamespaceInfo> info, identify_nsid(ch, nsids[i]));
      if (!info) continue;  // went away between the list and the Identify
      nsze = info->nsze;
    }
    sizes[nsids[i]] = nsze;
  }
  return sizes;
}

Result<std::vector<NamespaceChange>> rescan_namespaces(CommandChannel& ch, NamespaceSizes& known,
                                                       std::span<const uint32_t> changed) {
  std::vector<uint32_t> nsids(changed.begin(), changed.end());
  if (nsids.size() == 1 && nsids[0] == 0xFFFFFFFF) {
    NVMF_ASSIGN_OR_RETURN(nsids, active_nsids(ch));
    for (const auto& [nsid, nsze] : known) nsids.push_back(nsid);
    std::sort(nsids.begin(), nsids.end());
    nsids.erase(std::unique(nsids.begin(), nsids.end()), nsids.end());
  }
  std::vector<NamespaceChange> out;
  for (uint32_t nsid : nsids) {
    if (nsid == 0 || nsid == 0xFFFFFFFF) continue;
    NVMF_ASSIGN_OR_RETURN(std::optional<NamespaceInfo> info, identify_nsid(ch, nsid));
    auto it = known.find(nsid);
    if (!info) {
      if (it == known.end()) continue;
      known.erase(it);
      out.push_back({nsid, NamespaceChange::Kind::kRemoved, 0, 0});
      continue;
    }
    NamespaceChange c{nsid, NamespaceChange::Kind::kChanged, info->nsze, info->lba_size};
    if (it == known.end()) {
      c.kind = NamespaceChange::Kind::kAdded;
    } else if (it->second != kSizeUnknown && it->second != info->nsze) {
      c.kind = NamespaceChange::Kind::kResized;
    }
    known[nsid] = info->nsze;
    out.push_back(c);
  }
  return out;
}

Status keep_alive(CommandChannel& ch) {
  return run_checked(ch, keep_alive_sqe(), {}, {}, false, "Keep Alive").status();
}

}  // namespace nvmf::host
