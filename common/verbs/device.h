// SPDX-License-Identifier: BSD-3-Clause
// Device queries: ibv_query_device and the device name, for limits and log lines.
#ifndef NVMF_COMMON_VERBS_DEVICE_H_
#define NVMF_COMMON_VERBS_DEVICE_H_

#include <infiniband/verbs.h>

#include <string_view>

#include "common/status.h"

namespace nvmf::verbs {

// ibv_query_device(context): max_qp_wr, max_sge, max_cqe, max_qp_rd_atom, max_qp_init_rd_atom,
// max_mr_size, ... The error names the verb, the device and errno. kInvalidArgument for null.
Result<ibv_device_attr> query_device(ibv_context* context);

// ibv_get_device_name(context->device), e.g. "rxe0"; "(no device)" for a null context.
std::string_view device_name(ibv_context* context);

}  // namespace nvmf::verbs

#endif  // NVMF_COMMON_VERBS_DEVICE_H_
