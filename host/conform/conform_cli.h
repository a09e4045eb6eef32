// SPDX-License-Identifier: BSD-3-Clause
// The `nvmf-host conform` subcommand: its CLI11 options and its run (host/conform/conform.h does
// the work).
#ifndef NVMF_HOST_CONFORM_CONFORM_CLI_H_
#define NVMF_HOST_CONFORM_CONFORM_CLI_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "host/options.h"

namespace nvmf::host {

// The `conform` options as typed (docs/host.md "conform").
struct ConformArgs {
  std::string cases;  // comma-separated ids; empty: all
  bool list = false;
  std::string json;               // report file, "-" for stdout
  std::string junit;              // JUnit XML file
  std::string suite = "conform";  // JUnit testsuite name
  bool include_dangerous = false;
  bool progress = false;
};

// Adds the `conform` subcommand to `app`; the values land in `args`.
CLI::App* add_conform_subcommand(CLI::App& app, ConformArgs& args);

// The case ids of --cases (comma-separated; empty: all), checked against the catalogue:
// kInvalidArgument "--cases: ..." naming the first unknown id.
Result<std::vector<std::string>> conform_case_ids(const std::string& cases);

// --list: prints the catalogue, exit 0. Otherwise runs the catalogue against opts.traddr /
// opts.subnqn with `timeout_ms` per command, prints the table, writes the reports. Exit 0 when
// every must case passed, 1 when one failed or the preflight could not connect, 2 on bad
// options.
int cmd_conform(const HostOptions& opts, int timeout_ms, const ConformArgs& args);

}  // namespace nvmf::host

#endif  // NVMF_HOST_CONFORM_CONFORM_CLI_H_
