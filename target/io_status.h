// SPDX-License-Identifier: BSD-3-Clause
// The NVMe status a failed backend operation completes with, following Linux nvmet's mapping
// of errors from its file and block-device backends (errno_to_nvme_status and
// blk_to_nvme_status in drivers/nvme/target/core.c).
#ifndef NVMF_TARGET_IO_STATUS_H_
#define NVMF_TARGET_IO_STATUS_H_

#include <cstdint>

#include "target/io_engine.h"

namespace nvmf::target {

// The NVMe command a backend operation serves, for the status it gets.
enum class IoCommand : uint8_t { kRead, kWrite, kFlush, kWriteZeroes, kDatasetManagement };

// `err` is a positive errno:
//   ENOSPC, EDQUOT       -> Capacity Exceeded (SCT 0h SC 81h), DNR
//   EIO (and ENODATA, EBADMSG, EILSEQ: media) on a Read  -> Unrecovered Read Error (2h/81h)
//                        on a Write or Write Zeroes       -> Write Fault (2h/80h)
//                        (no DNR: another path or a retry may succeed, as nvmet)
//   EOPNOTSUPP           -> Invalid Opcode, DNR (the backing cannot do it)
//   anything else, and any error of a Flush or Dataset Management except ENOSPC
//                        -> Internal Error (0h/06h), DNR
// A failed Flush always has DNR: a retried fdatasync would not see the same write-back error.
uint16_t status_for_io_error(IoCommand command, int err);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_IO_STATUS_H_
