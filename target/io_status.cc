// SPDX-License-Identifier: BSD-3-Clause
// status_for_io_error.
#include "target/io_status.h"

#include <cerrno>

#include "common/nvme_status.h"

namespace nvmf::target {

uint16_t status_for_io_error(IoCommand command, int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return generic_status(proto::kScCapacityExceeded, true);
    case EOPNOTSUPP:
      return generic_status(proto::kScInvalidOpcode, true);
    case EIO:
    case ENODATA:
    case EBADMSG:
    case EILSEQ:
      if (command == IoCommand::kRead) {
        return make_status(proto::kSctMediaError, proto::kScUnrecoveredReadError);
      }
      if (command == IoCommand::kWrite || command == IoCommand::kWriteZeroes) {
        return make_status(proto::kSctMediaError, proto::kScWriteFault);
      }
      break;
    default:
      break;
  }
  return generic_status(proto::kScInternalError, true);
}

}  // namespace nvmf::target
