// SPDX-License-Identifier: BSD-3-Clause
// The one shape of a bad command line on both binaries (nvmf-host, nvmf-target), the same as the
// scripts' (ci/lib/args.sh usage_error): two lines on stderr, then exit 2.
//   PROG: MESSAGE        MESSAGE names the option the user got wrong (or the one missing)
//   usage: USAGE         the synopsis of PROG (or of the subcommand used); "try ... --help"
#ifndef NVMF_COMMON_CLI_USAGE_H_
#define NVMF_COMMON_CLI_USAGE_H_

#include <string_view>

namespace nvmf {

inline constexpr int kExitUsage = 2;  // a bad command line, on both binaries and the scripts

// Prints "PROG: MESSAGE" and "usage: USAGE" on stderr and returns kExitUsage.
int usage_error(std::string_view prog, std::string_view message, std::string_view usage);

}  // namespace nvmf

#endif  // NVMF_COMMON_CLI_USAGE_H_
