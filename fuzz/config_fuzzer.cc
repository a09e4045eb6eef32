// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes the nvmetcli config.json reader (target/config.h) with any text: it must return a
// config or an error naming a key, never throw, abort, overflow the stack or wrap a number; a
// config it accepts holds values inside the documented ranges.
#include <cstdint>
#include <string_view>

#include "proto/fabrics.h"
#include "target/config.h"
#include "target/testing/fake_queue.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nvmf::target::testing::require;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nvmf::target::TargetOptions base;
  auto config = nvmf::target::parse_nvmet_config(text, base);
  if (!config.ok()) {
    require(!config.status().message().empty(), "an error without a message");
    return 0;
  }
  const auto& o = config->options;
  require(!o.subsystems.empty(), "a config without a subsystem");
  require(o.inline_data_size >= -1, "inline_data_size below -1");
  require(o.max_queue_size >= 2 && o.max_queue_size <= 1024, "max_queue_size outside 2..1024");
  require(!o.traddr.empty() && o.traddr.size() < 256, "traddr outside 1..255 characters");
  for (const auto& s : o.subsystems) {
    require(!s.nqn.empty() && s.nqn.size() <= nvmf::proto::kNqnMaxLength, "NQN length");
    require(s.cntlid_min >= 1 && s.cntlid_min <= s.cntlid_max && s.cntlid_max <= 0xFFEF,
            "CNTLID range");
    require(!s.file_path.empty(), "a namespace without a path");
  }
  return 0;
}
