// SPDX-License-Identifier: BSD-3-Clause
// Device queries.
#include "common/verbs/device.h"

#include <string>

namespace nvmf::verbs {

Result<ibv_device_attr> query_device(ibv_context* context) {
  if (context == nullptr) return Status::invalid_argument("ibv_query_device: null device context");
  ibv_device_attr attr{};
  if (const int err = ibv_query_device(context, &attr); err != 0) {
    return Status::from_errno("ibv_query_device", err, device_name(context));
  }
  return attr;
}

std::string_view device_name(ibv_context* context) {
  if (context == nullptr || context->device == nullptr) return "(no device)";
  const char* name = ibv_get_device_name(context->device);
  return name != nullptr ? name : "(unnamed device)";
}

}  // namespace nvmf::verbs
