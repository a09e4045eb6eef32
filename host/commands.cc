// SPDX-License-Identifier: BSD-3-Clause
// Pure builders for the host's commands; see commands.h.
#include "host/commands.h"

#include <bit>
#include <cstdio>
#include <cstring>

namespace nvmf::host {
namespace {

// The SQE bytes every Fabrics command starts with: opcode 7Fh, PSDT 01b, FCTYPE.
template <typename Command>
Command fabrics_command(uint8_t fctype) {
  Command cmd{};
  cmd.opcode = proto::kOpcodeFabrics;
  cmd.flags = proto::kFlagsPsdtSgl;
  cmd.fctype = fctype;
  return cmd;
}

proto::Sqe nvme_command(uint8_t opcode, uint32_t nsid) {
  proto::Sqe sqe{};
  sqe.opcode = opcode;
  sqe.flags = proto::kFlagsPsdtSgl;  // NVMe-oF requires SGLs (Base 2.0 §4.1, PSDT 01b).
  sqe.nsid = nsid;
  return sqe;
}

Status check_nqn(std::string_view what, std::string_view nqn) {
  if (nqn.empty()) return Status::invalid_argument(std::string(what) + " is empty");
  if (nqn.size() > proto::kNqnMaxLength) {
    return Status::invalid_argument(std::string(what) + " is " + std::to_string(nqn.size()) +
                                    " bytes, longer than the 223 an NQN may have");
  }
  return ok_status();
}

proto::Sqe rw_sqe(uint8_t opcode, uint32_t nsid, uint64_t slba, uint32_t nlb) {
  proto::Sqe sqe = nvme_command(opcode, nsid);
  sqe.cdw10 = static_cast<uint32_t>(slba);
  sqe.cdw11 = static_cast<uint32_t>(slba >> 32);
  sqe.cdw12 = (nlb - 1) & proto::kRwNlbMask;
  return sqe;
}

}  // namespace

proto::CmRequestPrivateData cm_request_private_data(uint16_t qid, uint16_t queue_size) {
  proto::CmRequestPrivateData pd{};
  pd.recfmt = proto::kCmRecfmt0;
  pd.qid = qid;
  pd.hrqsize = queue_size;
  pd.hsqsize = static_cast<uint16_t>(queue_size - 1);
  return pd;
}

std::string_view cm_reject_status_name(uint16_t sts) {
  switch (sts) {
    case proto::kCmRejectInvalidPrivateDataLength:
      return "invalid private data length";
    case proto::kCmRejectInvalidRecfmt:
      return "invalid RECFMT";
    case proto::kCmRejectInvalidQid:
      return "invalid QID";
    case proto::kCmRejectInvalidHsqsize:
      return "invalid HSQSIZE";
    case proto::kCmRejectInvalidHrqsize:
      return "invalid HRQSIZE";
    case proto::kCmRejectNoResources:
      return "no resources";
    case proto::kCmRejectInvalidIrd:
      return "invalid IRD";
    case proto::kCmRejectInvalidOrd:
      return "invalid ORD";
    case proto::kCmRejectInvalidCntlid:
      return "invalid CNTLID";
    default:
      return "unknown status";
  }
}

std::string cm_reject_message(const uint8_t* data, size_t len, int cm_status) {
  proto::CmRejectPrivateData rej{};
  if (data != nullptr && len >= sizeof(rej)) {
    std::memcpy(&rej, data, sizeof(rej));
    if (rej.recfmt == proto::kCmRecfmt0) {
      return "CM reject: " + std::string(cm_reject_status_name(rej.sts)) + " (" +
             std::to_string(rej.sts) + ")";
    }
  }
  return "CM reject: no NVMe-oF status (consumer reason " + std::to_string(cm_status) + ")";
}

Result<proto::ConnectData> connect_data(const HostId& hostid, uint16_t cntlid,
                                        std::string_view subnqn, std::string_view hostnqn) {
  NVMF_RETURN_IF_ERROR(check_nqn("subsystem NQN", subnqn));
  NVMF_RETURN_IF_ERROR(check_nqn("host NQN", hostnqn));
  proto::ConnectData data{};
  std::memcpy(data.hostid, hostid.data(), hostid.size());
  data.cntlid = cntlid;
  std::memcpy(data.subnqn, subnqn.data(), subnqn.size());  // zero-initialised: NUL terminated
  std::memcpy(data.hostnqn, hostnqn.data(), hostnqn.size());
  return data;
}

proto::Sqe connect_sqe(uint16_t qid, uint16_t queue_size, uint32_t kato_ms) {
  auto cmd = fabrics_command<proto::ConnectCommand>(proto::kFctypeConnect);
  cmd.recfmt = proto::kRecfmt0;
  cmd.qid = qid;
  cmd.sqsize = static_cast<uint16_t>(queue_size - 1);
  cmd.kato = kato_ms;
  return std::bit_cast<proto::Sqe>(cmd);
}

proto::Sqe property_get_sqe(uint32_t ofst, bool eight_bytes) {
  auto cmd = fabrics_command<proto::PropertyGetCommand>(proto::kFctypePropertyGet);
  cmd.attrib = eight_bytes ? proto::kPropertySize8 : proto::kPropertySize4;
  cmd.ofst = ofst;
  return std::bit_cast<proto::Sqe>(cmd);
}

proto::Sqe property_set_sqe(uint32_t ofst, uint32_t value) {
  auto cmd = fabrics_command<proto::PropertySetCommand>(proto::kFctypePropertySet);
  cmd.attrib = proto::kPropertySize4;
  cmd.ofst = ofst;
  cmd.value = value;
  return std::bit_cast<proto::Sqe>(cmd);
}

proto::Sqe identify_sqe(uint8_t cns, uint32_t nsid) {
  proto::Sqe sqe = nvme_command(proto::kAdminIdentify, nsid);
  sqe.cdw10 = cns;
  return sqe;
}

proto::Sqe set_num_queues_sqe(uint16_t n) {
  proto::Sqe sqe = nvme_command(proto::kAdminSetFeatures, 0);
  sqe.cdw10 = proto::kFeatureNumberOfQueues;
  uint32_t zero_based = static_cast<uint32_t>(n - 1) & 0xFFFF;
  sqe.cdw11 = zero_based | (zero_based << 16);
  return sqe;
}

proto::Sqe set_async_event_config_sqe(uint32_t aec) {
  proto::Sqe sqe = nvme_command(proto::kAdminSetFeatures, 0);
  sqe.cdw10 = proto::kFeatureAsyncEventConfig;
  sqe.cdw11 = aec;
  return sqe;
}

proto::Sqe keep_alive_sqe() { return nvme_command(proto::kAdminKeepAlive, 0); }

proto::Sqe read_sqe(uint32_t nsid, uint64_t slba, uint32_t nlb) {
  return rw_sqe(proto::kNvmRead, nsid, slba, nlb);
}

proto::Sqe write_sqe(uint32_t nsid, uint64_t slba, uint32_t nlb) {
  return rw_sqe(proto::kNvmWrite, nsid, slba, nlb);
}

proto::Sqe flush_sqe(uint32_t nsid) { return nvme_command(proto::kNvmFlush, nsid); }

proto::Sqe write_zeroes_sqe(uint32_t nsid, uint64_t slba, uint32_t nlb) {
  return rw_sqe(proto::kNvmWriteZeroes, nsid, slba, nlb);
}

proto::Sqe deallocate_sqe(uint32_t nsid, uint32_t nr) {
  proto::Sqe sqe = nvme_command(proto::kNvmDatasetManagement, nsid);
  sqe.cdw10 = (nr - 1) & 0xFF;
  sqe.cdw11 = proto::kDsmAttributeDeallocate;
  return sqe;
}

std::string command_name(const proto::Sqe& sqe, bool admin) {
  if (sqe.opcode == proto::kOpcodeFabrics) {
    switch (sqe.nsid & 0xFF) {
      case proto::kFctypeConnect:
        return "Connect";
      case proto::kFctypePropertyGet:
        return "Property Get";
      case proto::kFctypePropertySet:
        return "Property Set";
      default:
        return "Fabrics command " + std::to_string(sqe.nsid & 0xFF);
    }
  }
  if (admin) {
    switch (sqe.opcode) {
      case proto::kAdminIdentify:
        return "Identify";
      case proto::kAdminSetFeatures:
        return "Set Features";
      case proto::kAdminGetFeatures:
        return "Get Features";
      case proto::kAdminKeepAlive:
        return "Keep Alive";
      default:
        return "admin opcode " + std::to_string(sqe.opcode);
    }
  }
  switch (sqe.opcode) {
    case proto::kNvmRead:
      return "Read";
    case proto::kNvmWrite:
      return "Write";
    case proto::kNvmFlush:
      return "Flush";
    default:
      return "I/O opcode " + std::to_string(sqe.opcode);
  }
}

}  // namespace nvmf::host
