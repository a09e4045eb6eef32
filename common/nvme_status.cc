// SPDX-License-Identifier: BSD-3-Clause
// Names for NVMe status values (NVMe Base 2.0 §4.2.3 status code tables).
#include "common/nvme_status.h"

#include <cstdio>

#include "proto/auth.h"

namespace nvmf {
namespace {

using namespace proto;  // NOLINT: status constants only

std::string_view generic_text(uint8_t sc) {
  switch (sc) {
    case kScSuccess:
      return "Success";
    case kScInvalidOpcode:
      return "Invalid Command Opcode";
    case kScInvalidField:
      return "Invalid Field in Command";
    case kScCommandIdConflict:
      return "Command ID Conflict";
    case kScDataTransferError:
      return "Data Transfer Error";
    case kScAbortedPowerLoss:
      return "Commands Aborted due to Power Loss Notification";
    case kScInternalError:
      return "Internal Error";
    case kScAbortRequested:
      return "Command Abort Requested";
    case kScAbortedSqDeletion:
      return "Command Aborted due to SQ Deletion";
    case kScInvalidNamespaceOrFormat:
      return "Invalid Namespace or Format";
    case kScCommandSequenceError:
      return "Command Sequence Error";
    case kScInvalidSglSegmentDescriptor:
      return "Invalid SGL Segment Descriptor";
    case kScInvalidNumberOfSglDescriptors:
      return "Invalid Number of SGL Descriptors";
    case kScDataSglLengthInvalid:
      return "Data SGL Length Invalid";
    case kScMetadataSglLengthInvalid:
      return "Metadata SGL Length Invalid";
    case kScSglDescriptorTypeInvalid:
      return "SGL Descriptor Type Invalid";
    case kScSglOffsetInvalid:
      return "SGL Offset Invalid";
    case kScHostIdentifierInconsistentFormat:
      return "Host Identifier Inconsistent Format";
    case kScKeepAliveTimerExpired:
      return "Keep Alive Timer Expired";
    case kScKeepAliveTimeoutInvalid:
      return "Keep Alive Timeout Invalid";
    case kScLbaOutOfRange:
      return "LBA Out of Range";
    case kScCapacityExceeded:
      return "Capacity Exceeded";
    case kScNamespaceNotReady:
      return "Namespace Not Ready";
    case kScReservationConflict:
      return "Reservation Conflict";
    default:
      return "Unknown";
  }
}

std::string_view command_specific_text(uint8_t sc) {
  switch (sc) {
    case kScCompletionQueueInvalid:
      return "Completion Queue Invalid";
    case kScInvalidQueueIdentifier:
      return "Invalid Queue Identifier";
    case kScInvalidQueueSize:
      return "Invalid Queue Size";
    case kScAbortCommandLimitExceeded:
      return "Abort Command Limit Exceeded";
    case kScAsyncEventRequestLimitExceeded:
      return "Asynchronous Event Request Limit Exceeded";
    case kScInvalidLogPage:
      return "Invalid Log Page";
    case kScFeatureIdNotSaveable:
      return "Feature Identifier Not Saveable";
    case kScFeatureNotChangeable:
      return "Feature Not Changeable";
    case kScFeatureNotNamespaceSpecific:
      return "Feature Not Namespace Specific";
    case kScIncompatibleFormat:
      return "Incompatible Format";
    case kScControllerBusy:
      return "Controller Busy";
    case kScConnectInvalidParameters:
      return "Connect Invalid Parameters";
    case kScConnectRestartDiscovery:
      return "Connect Restart Discovery";
    case kScConnectInvalidHost:
      return "Connect Invalid Host";
    case kScAuthRequired:
      return "Authentication Required";
    default:
      return "Unknown";
  }
}

}  // namespace

std::string_view status_code_text(uint8_t sct, uint8_t sc) {
  switch (sct) {
    case kSctGeneric:
      return generic_text(sc);
    case kSctCommandSpecific:
      return command_specific_text(sc);
    case kSctMediaError:
      if (sc == kScWriteFault) return "Write Fault";
      if (sc == kScUnrecoveredReadError) return "Unrecovered Read Error";
      return "Media or Data Integrity Error";
    case kSctPath:
      if (sc == kScAnaPersistentLoss) return "Asymmetric Access Persistent Loss";
      if (sc == kScAnaInaccessible) return "Asymmetric Access Inaccessible";
      if (sc == kScAnaTransition) return "Asymmetric Access Transition";
      if (sc == kScControllerPathingError) return "Controller Pathing Error";
      if (sc == kScHostPathingError) return "Host Pathing Error";
      if (sc == kScCommandAbortedByHost) return "Command Aborted By Host";
      return "Path Related Status";
    case kSctVendor:
      return "Vendor Specific";
    default:
      return "Unknown";
  }
}

std::string status_name(uint16_t status) {
  char codes[48];
  std::snprintf(codes, sizeof(codes), " (SCT 0x%x SC 0x%02x", status_sct(status),
                status_sc(status));
  std::string out(status_code_text(status_sct(status), status_sc(status)));
  out += codes;
  if (status_dnr(status)) out += ", DNR";
  if (status_more(status)) out += ", M";
  if (status_crd(status) != 0) out += ", CRD " + std::to_string(status_crd(status));
  out += ')';
  return out;
}

}  // namespace nvmf
