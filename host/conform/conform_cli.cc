// SPDX-License-Identifier: BSD-3-Clause
#include "host/conform/conform_cli.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "host/cli/cli_util.h"
#include "host/conform/conform.h"

namespace nvmf::host {

CLI::App* add_conform_subcommand(CLI::App& app, ConformArgs& args) {
  CLI::App* c = app.add_subcommand(
      "conform", "check the target against the NVMe-oF RDMA specification (a case catalogue)");
  c->add_option("--cases", args.cases, "comma-separated case ids to run (default: all)");
  c->add_flag("--list", args.list, "list the catalogue and exit (with --json, as JSON too)");
  c->add_option("--json", args.json, "JSON report file, or - for stdout");
  c->add_option("--junit", args.junit, "JUnit XML report file");
  c->add_option("--junit-suite", args.suite, "testsuite name in the JUnit XML")
      ->capture_default_str();
  c->add_flag("--include-dangerous", args.include_dangerous,
              "also run the cases that crash or wedge some targets");
  c->add_flag("--progress", args.progress, "one line per case on stderr while running");
  return c;
}

namespace {

Status write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) return Status::from_errno("write " + path, errno);
  return ok_status();
}

}  // namespace

Result<std::vector<std::string>> conform_case_ids(const std::string& cases) {
  std::vector<std::string> ids;
  std::stringstream list(cases);
  for (std::string id; std::getline(list, id, ',');) {
    if (!id.empty()) ids.push_back(id);
  }
  if (auto sel = conform::select_cases(conform::catalogue(), ids); !sel.ok()) {
    return Status::invalid_argument("--cases: " + sel.status().message());
  }
  return ids;
}

int cmd_conform(const HostOptions& opts, int timeout_ms, const ConformArgs& args) {
  if (args.list) {
    // --json FILE writes the catalogue there too (the table stays on stdout); --json - puts
    // only the JSON on stdout, as a run's report does.
    if (args.json != "-") std::cout << conform::list_text(conform::catalogue()) << std::flush;
    if (!args.json.empty()) {
      std::string text = conform::list_json(conform::catalogue()).dump(2) + "\n";
      if (args.json == "-") {
        std::cout << text;
      } else if (Status st = write_file(args.json, text); !st.ok()) {
        std::fprintf(stderr, "nvmf-host: conform: %s\n", st.to_string().c_str());
        return kExitRuntime;
      }
    }
    return kExitOk;
  }
  conform::ConformOptions o;
  o.traddr = opts.traddr;
  o.trsvcid = opts.trsvcid;
  o.host_traddr = opts.host_traddr;
  o.subnqn = opts.subnqn;
  o.hostnqn = opts.hostnqn;
  o.dhchap = opts.dhchap;
  o.timeout_ms = timeout_ms;
  o.include_dangerous = args.include_dangerous;
  o.verbose = args.progress;
  Result<std::vector<std::string>> ids = conform_case_ids(args.cases);
  if (!ids.ok()) return host_usage_error("conform", ids.status().message());
  o.only = std::move(*ids);
  for (const std::string& path : {args.json, args.junit}) {
    if (path.empty() || path == "-") continue;
    if (Status st = check_writable(path, "report"); !st.ok()) {
      std::fprintf(stderr, "nvmf-host: conform: %s\n", st.to_string().c_str());
      return kExitRuntime;
    }
  }
  auto report = conform::run(o);
  if (!report.ok()) {
    std::fprintf(stderr, "nvmf-host: conform: %s\n", report.status().to_string().c_str());
    return kExitRuntime;
  }
  if (args.json != "-") std::cout << conform::table_text(*report) << std::flush;
  if (!args.json.empty()) {
    std::string text = conform::to_json(*report).dump(2) + "\n";
    if (args.json == "-") {
      std::cout << text;
    } else if (Status st = write_file(args.json, text); !st.ok()) {
      std::fprintf(stderr, "nvmf-host: conform: %s\n", st.to_string().c_str());
      return kExitRuntime;
    }
  }
  if (!args.junit.empty()) {
    if (Status st = write_file(args.junit, conform::junit_xml(*report, args.suite)); !st.ok()) {
      std::fprintf(stderr, "nvmf-host: conform: %s\n", st.to_string().c_str());
      return kExitRuntime;
    }
  }
  return conform::exit_code(*report) == 0 ? kExitOk : kExitRuntime;
}

}  // namespace nvmf::host
