// SPDX-License-Identifier: BSD-3-Clause
// Older option spellings kept working on both command lines (nvmf-host, nvmf-target) without
// being shown: docs/cli-reference.md lists the current names only.
#ifndef NVMF_COMMON_CLI_ALIAS_H_
#define NVMF_COMMON_CLI_ALIAS_H_

#include <CLI/CLI.hpp>
#include <string>

namespace nvmf {

// Adds `names` ("-i,--input") to `app` as an older spelling of the already added option
// `current`, storing into the same `value` after `check` (the checks `current` has, e.g.
// CLI::Range(1, 64)). The alias is in CLI11's group "" (not in --help). CLI11 names no hidden
// option in its errors, so the alias does its own checks and names itself:
//   CLI::ValidationError "--input: the older spelling of --data: give one of them" when both
//     spellings are given (CLI11 runs option callbacks after the whole command line is parsed,
//     so `current`'s count is known);
//   CLI::ValidationError "--queues: Value 0 not in range 1 to 64" when `check` refuses;
//   CLI::ConversionError "--queues: 'x' is not a value of this option" when it does not convert.
template <typename T>
CLI::Option* add_hidden_alias(CLI::App& app, const std::string& names, T& value,
                              CLI::Option* current, CLI::Validator check = CLI::Validator()) {
  auto store = [&value, current, names, check](const std::string& text) {
    if (current->count() > 0) {
      throw CLI::ValidationError(
          names, "the older spelling of " + current->get_name() + ": give one of them");
    }
    std::string checked = text;
    if (std::string why = check(checked); !why.empty()) throw CLI::ValidationError(names, why);
    if (!CLI::detail::lexical_cast(checked, value)) {
      throw CLI::ConversionError(names + ": '" + text + "' is not a value of this option");
    }
  };
  return app.add_option_function<std::string>(names, store)->group("");
}

}  // namespace nvmf

#endif  // NVMF_COMMON_CLI_ALIAS_H_
