// SPDX-License-Identifier: BSD-3-Clause
// The two binaries against a careless user, no RDMA device needed: every bad command line ends
// with exit 2 and a message naming the option, or exit 1 naming what failed, before any device
// or connection is touched; never a crash, an abort or a silent success (exit 0). A bad command
// line has one shape on both binaries (common/cli_usage.h), and the option it names is the first
// mistake: a bad value, whatever else is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace nvmf::e2e {
namespace {

std::string runfile(const std::string& rel) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return std::string(srcdir ? srcdir : ".") + "/nvmf_rdma/" + rel;
}

std::string tmpdir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Outcome {
  int exit_code;  // -1: killed by a signal (a crash or an abort)
  std::string err;
};

Outcome run(const std::string& binary, const std::string& args) {
  const std::string log = tmpdir() + "/stderr.log";
  int rc =
      std::system(("'" + runfile(binary) + "' " + args + " > /dev/null 2> '" + log + "'").c_str());
  return Outcome{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(log)};
}

struct Case {
  std::string args;
  int want_exit;
  const char* names;  // text the message must contain
};

// Splits stderr into its lines (no trailing empty one).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Exit 2 (a bad command line) prints "PROG: MESSAGE" naming `names`, then the usage line
// "usage: PROG ... --help)", last; exit 1 (a failure at run time) prints no usage line.
// Returns what is wrong, or "" when the shape holds.
std::string shape_error(const std::string& prog, const Outcome& o, const std::string& names) {
  const std::vector<std::string> lines = lines_of(o.err);
  if (o.exit_code != 2) {
    for (const std::string& line : lines) {
      if (line.rfind("usage: ", 0) == 0)
        return "a usage line after exit " + std::to_string(o.exit_code);
    }
    return "";
  }
  if (lines.size() < 2) return "fewer than two lines";
  const std::string& message = lines[lines.size() - 2];
  const std::string& usage = lines.back();
  if (message.rfind(prog + ": ", 0) != 0) return "the message does not start with '" + prog + ": '";
  if (message.find(names) == std::string::npos) return "the message does not name " + names;
  if (usage.rfind("usage: " + prog + " ", 0) != 0)
    return "the last line is not 'usage: " + prog + " ...'";
  if (usage.size() < 7 || usage.compare(usage.size() - 7, 7, "--help)") != 0) {
    return "the usage line does not end with '--help)'";
  }
  int usage_lines = 0;
  for (const std::string& line : lines) usage_lines += line.rfind("usage: ", 0) == 0 ? 1 : 0;
  if (usage_lines != 1) return std::to_string(usage_lines) + " usage lines";
  return "";
}

// Addresses are well formed but unreachable: every case must fail before connecting.
constexpr char kTarget[] = "-a 192.0.2.1 ";
constexpr char kHost[] = "-a 192.0.2.1 -n nqn.2024-01.io.nvmf-rdma:t ";

TEST(CliArgs, TargetRefusesBadOptions) {
  const std::string dir = tmpdir();
  const Case cases[] = {
      {"", 2, "nvmf-target: --traddr is required"},
      {"--ram-size 1m", 2, "nvmf-target: --traddr is required"},
      {"-a 192.0.2.1", 2, "--file PATH or --ram-size"},
      // A bad value is named first, whatever is missing (-a, a namespace backing).
      {"--log-level loud", 2, "--log-level"},
      {"-v --log-level loud", 2, "--log-level"},
      {"--lba-size 7", 2, "--lba-size 7"},
      {"--ram-size 10x", 2, "--ram-size"},
      {"--file x --size 10x", 2, "--size"},
      {"--ram-size 1000", 2, "--ram-size 1000 is not a whole number of LBAs"},
      {"--cpu x", 2, "--cpu x"},
      {"--cpu 3 --poll-groups 2", 2, "--cpu 3 pins one thread"},
      {"-s abc", 2, "--trsvcid"},
      {"-a 999.1.1.1", 2, "--traddr: "},
      {"--nqn ''", 2, "--nqn"},
      {"--queue-size 0", 2, "--queue-size"},
      {"--max-io-queues 0", 2, "--max-io-queues"},
      {"--inline-data-size -2", 2, "--inline-data-size"},
      {"--poll sometimes", 2, "--poll"},
      {"--poll-mode fast", 2, "--poll-mode"},
      {"--busy-poll-us -5", 2, "--busy-poll-us"},
      {"--stall-warn-ms 5", 2, "--stall-warn-ms"},
      {"--poll-groups 0", 2, "--poll-groups"},
      {"--io-engine fast", 2, "--io-engine"},
      {"--uring-fixedbufs maybe", 2, "--uring-fixedbufs"},
      {"--uring-iopoll always", 2, "--uring-iopoll"},
      {"--srq maybe", 2, "--srq"},
      {"--max-srq-depth 1", 2, "--max-srq-depth"},
      {"--num-shared-buffers 70000", 2, "--num-shared-buffers"},
      {"--max-rdma-read-depth 0", 2, "--max-rdma-read-depth"},
      {"--ack-timeout 32", 2, "--ack-timeout"},
      {"--max-pending-connections 0", 2, "--max-pending-connections"},
      {"--connect-timeout-ms 1", 2, "--connect-timeout-ms"},
      {"--send-stall-timeout-ms 1", 2, "--send-stall-timeout-ms"},
      {"--max-controllers 0", 2, "--max-controllers"},
      {"--max-controllers-per-host 0", 2, "--max-controllers-per-host"},
      {"--requested-max-inline-data x", 2, "--requested-max-inline-data"},
      {"--config /nonexistent-dir/c.json", 2, "--config"},
      {"--direct-io --buffered-io", 2, "--buffered-io"},
      {"-a 192.0.2.1 --ram-size 10x", 2, "--ram-size"},
      {"-a 192.0.2.1 --ram-size 1m --frob", 2, "nvmf-target: unknown option '--frob'"},
      {"-a 192.0.2.1 --ram-size 1m frobnicate", 2, "nvmf-target: unexpected argument 'frobnicate'"},
      {"frobnicate", 2, "nvmf-target: unexpected argument 'frobnicate'"},
      {"--frob 5 --lba-size 7", 2, "nvmf-target: unknown option '--frob'"},
      {"-a 192.0.2.1 --ram-size 1m --log-level loud", 2, "--log-level"},
      {"-a 192.0.2.1 --ram-size 1m --poll-mode fast", 2, "--poll-mode"},
      {"-a 192.0.2.1 --ram-size 1m --poll busy --poll-mode busy", 2, "--poll"},
      {"-a 192.0.2.1 --ram-size 1m --requested-max-inline-data x", 2,
       "--requested-max-inline-data"},
      {"-a 192.0.2.1 --ram-size 1m --max-inline-data 0 --requested-max-inline-data 0", 2,
       "--max-inline-data"},
      {"-v -a 192.0.2.1 --ram-size 1m --lba-size 7", 2, "--lba-size"},
      {"-a 192.0.2.1 --ram-size 1m --json /nonexistent-dir/t.json", 1, "--json"},
      {"-a 192.0.2.1 --ram-size -1", 2, "--ram-size"},
      {"-a 192.0.2.1 --ram-size 0", 2, "--ram-size"},
      {"-a 192.0.2.1 --ram-size 99999999999t", 2, "--ram-size"},
      {"-a 192.0.2.1 --ram-size 100", 2, "smaller than one LBA"},
      {"-a 192.0.2.1 --ram-size 1m --ram-size 2m", 2, "--ram-size"},
      {"-a 192.0.2.1 --ram-size 1m --lba-size 1000", 2, "--lba-size"},
      {"-a 192.0.2.1 --ram-size 1000", 2, "--ram-size 1000 is not a whole number of LBAs"},
      {"-a 192.0.2.1 --ram-size 1m --lba-size 4096 --ram-size 6k", 2, "--ram-size"},
      {"-a 192.0.2.1 --ram-size 6k --lba-size 4096", 2, "--ram-size 6144 is not a whole"},
      {"-a 192.0.2.1 --file /tmp/x.img --size 1000", 2, "--size 1000 is not a whole"},
      {"-a 192.0.2.1 --file /tmp/x.img --size 100", 2, "--size 100 is smaller than one LBA"},
      {"-a 192.0.2.1 --ram-size 1m --busy-poll-us ''", 2, "--busy-poll-us"},
      {"-a 192.0.2.1 --ram-size 1m --lba-size -512", 2, "--lba-size"},
      {"-a 192.0.2.1 --ram-size 1m --file x", 2, "exactly one"},
      {"-a 192.0.2.1 --ram-size 1m --size 1m", 2, "--size"},
      {"-a 192.0.2.1 --ram-size 1m -s abc", 2, "--trsvcid"},
      {"-a 192.0.2.1 --ram-size 1m -s 65536", 2, "--trsvcid"},
      {"-a 192.0.2.1 --ram-size 1m -s -1", 2, "--trsvcid"},
      {"-a 999.1.1.1 --ram-size 1m", 2, "--traddr"},
      {"-a localhost --ram-size 1m", 2, "--traddr"},
      {"-a 192.0.2.1 --ram-size 1m --uring-fixedbufs maybe", 2, "--uring-fixedbufs"},
      {"-a 192.0.2.1 --ram-size 1m --uring-defer-taskrun 1", 2, "--uring-defer-taskrun"},
      {"-a 192.0.2.1 --ram-size 1m --ack-timeout 32", 2, "--ack-timeout"},
      {"-a 192.0.2.1 --ram-size 1m --poll-groups 0", 2, "--poll-groups 0 is not auto or 1..64"},
      {"-a 192.0.2.1 --ram-size 1m --poll-groups banana", 2,
       "--poll-groups banana is not auto or 1..64"},
      {"-a 192.0.2.1 --ram-size 1m --poll-groups 65", 2, "--poll-groups 65 is not auto or 1..64"},
      {"-a 192.0.2.1 --ram-size 1m --poll-groups -1", 2, "--poll-groups"},
      {"-a 192.0.2.1 --ram-size 1m --poll-groups ''", 2, "--poll-groups"},
      {"-a 192.0.2.1 --ram-size 1m --poll-groups 2 --cpu 1", 2, "--cpu 1 pins one thread"},
      // auto and a count are taken (the next refusal is another option's).
      {"-a 192.0.2.1 --ram-size 1m --poll-groups auto --lba-size 7", 2, "--lba-size"},
      {"-a 192.0.2.1 --ram-size 1m --poll-groups 64 --lba-size 7", 2, "--lba-size"},
      {"-a 192.0.2.1 --ram-size 1m --poll-groups auto --cpu 1 --lba-size 7", 2, "--lba-size"},
      {"-a 192.0.2.1 --ram-size 1m --queue-size 0", 2, "--queue-size"},
      {"-a 192.0.2.1 --ram-size 1m --queue-size 70000", 2, "--queue-size"},
      {"-a 192.0.2.1 --ram-size 1m --max-io-queues 0", 2, "--max-io-queues"},
      {"-a 192.0.2.1 --ram-size 1m --max-io-queues 70000", 2, "--max-io-queues"},
      {"-a 192.0.2.1 --ram-size 1m --inline-data-size -2", 2, "--inline-data-size"},
      {"-a 192.0.2.1 --ram-size 1m --inline-data-size 99999999999", 2, "--inline-data-size"},
      {"-a 192.0.2.1 --ram-size 1m --nqn ''", 2, "--nqn"},
      {"-a 192.0.2.1 --ram-size 1m --log-level loud", 2, "--log-level"},
      {"-a 192.0.2.1 --ram-size 1m --poll sometimes", 2, "--poll"},
      {"-a 192.0.2.1 --ram-size 1m --busy-poll-us 1000001", 2, "--busy-poll-us"},
      {"-a 192.0.2.1 --ram-size 1m --busy-poll-us -5", 2, "--busy-poll-us"},
      {"-a 192.0.2.1 --ram-size 1m --bogus", 2, "--bogus"},
      {"-a 192.0.2.1 --ram-size 1m --json /nonexistent-dir/r.json", 1, "--json"},
      {"-a 192.0.2.1 --file /nonexistent-dir/ns.img --size 1m", 1, "/nonexistent-dir/ns.img"},
      {"-a 192.0.2.1 --file /nonexistent-dir/ns.img", 1, "/nonexistent-dir/ns.img"},
      {"-a 192.0.2.1 --file /dev/null", 2, "neither a regular file nor a block device"},
  };
  for (const Case& c : cases) {
    Outcome o = run("target/nvmf-target", c.args);
    EXPECT_EQ(o.exit_code, c.want_exit) << c.args << ": " << o.err;
    EXPECT_NE(o.err.find(c.names), std::string::npos) << c.args << ": " << o.err;
    EXPECT_EQ(shape_error("nvmf-target", o, c.names), "") << c.args << ": " << o.err;
  }
  Outcome o = run("target/nvmf-target", "-a 192.0.2.1 --file '" + dir + "'");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("Is a directory"), std::string::npos) << o.err;
  // A refused size leaves no file behind.
  const std::string never = dir + "/never.img";
  o = run("target/nvmf-target", "-a 192.0.2.1 --file '" + never + "' --size 100");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(access(never.c_str(), F_OK), 0) << never << " was created";
  // --busy-poll-us with --poll busy is accepted with a warning that it does nothing.
  o = run("target/nvmf-target",
          "-a 192.0.2.1 --ram-size 1m --poll busy --busy-poll-us 5000 --lba-size 7");
  EXPECT_EQ(o.exit_code, 2) << o.err;  // --lba-size stops it before anything listens
  EXPECT_NE(o.err.find("warning: --busy-poll-us is for --poll event"), std::string::npos) << o.err;
}

// Help as a user sees it: stdout and stderr together.
std::string help(const std::string& binary, const std::string& args) {
  const std::string log = tmpdir() + "/help.log";
  int rc = std::system(("'" + runfile(binary) + "' " + args + " > '" + log + "' 2>&1").c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << binary << " " << args;
  return slurp(log);
}

// One vocabulary for both binaries (docs/cli-reference.md): the same option names mean
// the same thing, usage shows the program's name, and help points at no source file.
// The control socket's client: its own usage errors (exit 2), and a socket nobody serves or a
// path no socket can have (exit 1), each named on stderr.
TEST(CliArgs, RpcClientRefusesBadArguments) {
  const Case cases[] = {
      {"rpc", 2, "nvmf-target rpc: method is required"},
      {"rpc nvmf_get_stats '[1]'", 2, "PARAMS must be one JSON object, not '[1]'"},
      {"rpc -t 0 nvmf_get_stats", 2, "--timeout"},
      {"rpc -s /nonexistent-dir/x.sock rpc_get_methods", 1,
       "no nvmf-target listens on /nonexistent-dir/x.sock"},
      {"rpc -s '' rpc_get_methods", 1, "a path of 1 to 107 bytes"},
  };
  for (const Case& c : cases) {
    Outcome o = run("target/nvmf-target", c.args);
    EXPECT_EQ(o.exit_code, c.want_exit) << c.args << ": " << o.err;
    EXPECT_NE(o.err.find(c.names), std::string::npos) << c.args << ": " << o.err;
  }
}

TEST(CliArgs, BothBinariesShareOneVocabulary) {
  const std::string host = help("host/nvmf-host", "--help");
  const std::string target = help("target/nvmf-target", "--help");
  EXPECT_EQ(host.rfind("nvmf-host: ", 0), 0u) << host;
  EXPECT_NE(host.find("Usage: nvmf-host "), std::string::npos) << host;
  EXPECT_NE(target.find("Usage: nvmf-target "), std::string::npos) << target;
  for (const char* opt : {"-a,--traddr", "-s,--trsvcid", "-n,--nqn", "--queue-size",
                          "--max-inline-data", "--poll", "--log-level", "-v,--verbose"}) {
    EXPECT_NE(host.find(opt), std::string::npos) << "nvmf-host --help lacks " << opt;
    EXPECT_NE(target.find(opt), std::string::npos) << "nvmf-target --help lacks " << opt;
  }
  // --json [FILE] in every subcommand that reports, and in the target.
  EXPECT_NE(target.find("--json [FILE]"), std::string::npos) << target;
  for (const char* sub : {"identify", "write", "read", "discover", "bench"}) {
    const std::string h = help("host/nvmf-host", std::string(sub) + " --help");
    EXPECT_NE(h.find("--json [FILE]"), std::string::npos) << sub << ": " << h;
    EXPECT_NE(h.find("--output-format"), std::string::npos) << sub << ": " << h;
  }
  // Hidden aliases are not shown, in any help; nor an "Excludes:" naming them.
  std::vector<std::string> texts = {host, target};
  for (const char* sub : {"identify", "write", "read", "bench", "discover", "conform"}) {
    texts.push_back(help("host/nvmf-host", std::string(sub) + " --help"));
  }
  for (const std::string& text : texts) {
    for (const char* old : {"--poll-mode", "--requested-max-inline-data", "--input", "--output ",
                            "-i,", "-f,", "--fast_io_fail_tmo", "--queues", "Excludes: \n"}) {
      EXPECT_EQ(text.find(old), std::string::npos) << old << " shown in: " << text;
    }
  }
  for (const std::string& text : {host, target}) {
    EXPECT_EQ(text.find(".h)"), std::string::npos) << text;
    EXPECT_EQ(text.find(".cc"), std::string::npos) << text;
    EXPECT_EQ(text.find("bazel-out"), std::string::npos) << text;
  }
}

// The options a --help shows: the names before the first space of each "  -x,--name TYPE  text"
// line; -h,--help (every CLI11 help has it) left out.
std::set<std::string> help_options(const std::string& help_text) {
  std::set<std::string> out;
  std::istringstream lines(help_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  -", 0) != 0) continue;
    std::istringstream names(line.substr(2, line.find(' ', 2) - 2));
    for (std::string name; std::getline(names, name, ',');) {
      if (name != "-h" && name != "--help") out.insert(name);
    }
  }
  return out;
}

// The subcommands a --help lists (the lines after "Subcommands:" up to a blank one).
std::vector<std::string> help_subcommands(const std::string& help_text) {
  std::vector<std::string> out;
  std::istringstream lines(help_text);
  bool in = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == "Subcommands:") {
      in = true;
    } else if (in && line.empty()) {
      break;
    } else if (in) {
      std::istringstream words(line);
      std::string word;
      words >> word;
      out.push_back(word);
    }
  }
  return out;
}

// Every option spelled in `text` ("`-d, --data FILE`" gives -d and --data): one or two dashes
// not inside a word, a letter, then letters, digits, '_' or '-'.
std::set<std::string> options_in(const std::string& text) {
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  };
  std::set<std::string> out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '-' || (i > 0 && word(text[i - 1]))) continue;
    size_t j = i + (i + 1 < text.size() && text[i + 1] == '-' ? 2 : 1);
    if (j >= text.size() || !std::isalpha(static_cast<unsigned char>(text[j]))) continue;
    while (j < text.size() && word(text[j])) ++j;
    out.insert(text.substr(i, j - i));
    i = j;
  }
  return out;
}

// A markdown table row's cells ("\|" inside a cell is not a separator).
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (row[i] == '|') {
      out.push_back(cell);
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return out;
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

// docs/cli-reference.md, section "## Command-line options" (to the next "## " heading or the
// end of the file): one table per binary and per nvmf-host subcommand, under a heading "###
// `nvmf-target`", "### `nvmf-host`", "### `nvmf-host SUB`", must list exactly the options that
// binary's `--help` (or `nvmf-host SUB --help`) shows; every nvmf-host subcommand has its table;
// the shared vocabulary table above them names only options some --help shows.
TEST(CliArgs, ReadmeTablesMatchEveryHelp) {
  const std::string readme = slurp(runfile("docs/cli-reference.md"));
  ASSERT_FALSE(readme.empty()) << "docs/cli-reference.md is missing or empty";
  const size_t start = readme.find("\n## Command-line options\n");
  ASSERT_NE(start, std::string::npos)
      << "docs/cli-reference.md has no Command-line options section";
  const size_t stop = readme.find("\n## ", start + 1);
  std::istringstream lines(readme.substr(start, stop - start));
  std::map<std::string, std::set<std::string>> tables;  // heading -> options in its first column
  std::set<std::string> vocabulary;                     // options in the shared table
  std::string heading;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("### `", 0) == 0) {
      heading = line.substr(5, line.find('`', 5) - 5);
      EXPECT_EQ(tables.count(heading), 0u) << "two tables for " << heading;
      tables[heading];
    } else if (line.rfind("| `", 0) == 0) {
      std::vector<std::string> row = cells(line);
      ASSERT_GE(row.size(), 2u) << line;
      if (heading.empty()) {
        for (const std::string& cell : row) vocabulary.merge(options_in(cell));
      } else {
        std::set<std::string> names = options_in(row[0]);
        EXPECT_FALSE(names.empty()) << heading << ": a row without an option: " << line;
        tables[heading].merge(names);
      }
    }
  }
  const std::string host_help = help("host/nvmf-host", "--help");
  const std::vector<std::string> subcommands = help_subcommands(host_help);
  ASSERT_GE(subcommands.size(), 6u) << host_help;  // identify write read bench discover conform
  std::map<std::string, std::string> helps = {{"nvmf-target", help("target/nvmf-target", "--help")},
                                              {"nvmf-host", host_help}};
  for (const std::string& sub : subcommands) {
    helps["nvmf-host " + sub] = help("host/nvmf-host", sub + " --help");
  }
  std::set<std::string> every_shown;
  for (const auto& [name, text] : helps) {
    const std::set<std::string> shown = help_options(text);
    EXPECT_FALSE(shown.empty()) << name << " --help shows no option: " << text;
    every_shown.insert(shown.begin(), shown.end());
    auto table = tables.find(name);
    if (table == tables.end()) {
      ADD_FAILURE() << "docs/cli-reference.md has no table \"### `" << name
                    << "`\" for: " << join(shown);
      continue;
    }
    std::set<std::string> missing, stale;
    for (const std::string& o : shown) {
      if (table->second.count(o) == 0) missing.insert(o);
    }
    for (const std::string& o : table->second) {
      if (shown.count(o) == 0) stale.insert(o);
    }
    EXPECT_TRUE(missing.empty()) << name << " --help shows, the docs/cli-reference.md table lacks: "
                                 << join(missing);
    EXPECT_TRUE(stale.empty()) << "the docs/cli-reference.md table of " << name
                               << " lists, --help does not show: " << join(stale);
  }
  for (const auto& [name, options] : tables) {
    EXPECT_EQ(helps.count(name), 1u)
        << "docs/cli-reference.md table for " << name << ", which has no --help";
  }
  EXPECT_GE(vocabulary.size(), 10u) << "the shared vocabulary table was not found";
  for (const std::string& o : vocabulary) {
    EXPECT_EQ(every_shown.count(o), 1u) << "the shared table names " << o << ", no --help shows";
  }
}

TEST(CliArgs, HostRefusesBadOptions) {
  const std::string dir = tmpdir();
  const std::string input = dir + "/in.bin";
  std::ofstream(input) << "hello";
  const std::string h = kHost;
  const Case cases[] = {
      {"identify", 2, "nvmf-host: identify: -a,--traddr is required"},
      {"-a 192.0.2.1 identify", 2, "nvmf-host: identify: -n,--nqn is required"},
      {"", 2, "nvmf-host: a subcommand is required"},
      // A bad value is named first, whatever is missing (-a, -n, the subcommand, -d, -l).
      {"--log-level loud identify", 2, "--log-level"},
      {"--log-level loud", 2, "--log-level"},
      {"-v --log-level loud write", 2, "--log-level"},
      {"identify --log-level loud", 2, "--log-level"},
      {"-s abc identify", 2, "--trsvcid"},
      {"-s 0 discover", 2, "--trsvcid"},
      {"-s 4420,abc read", 2, "--trsvcid"},
      {"-s 4420, identify", 2, "path 2: empty"},
      {"-s 4420,4421 identify", 2, "-a,--traddr is required"},
      {"-a 999.1.1.1 identify", 2, "--traddr: "},
      {"-w 1.2.3 identify", 2, "--host-traddr"},
      {"--hostnqn " + std::string(300, 'h') + " identify", 2, "--hostnqn"},
      {"-n " + std::string(300, 'n') + " identify", 2, "--nqn must be at most 223 bytes"},
      {"-n nqn.2014-08.org.nvmexpress.discovery read", 2, "use 'nvmf-host discover'"},
      {"--queue-size 1 identify", 2, "--queue-size"},
      {"--nr-io-queues 0 identify", 2, "--nr-io-queues"},
      {"--timeout-ms 0", 2, "--timeout-ms"},
      {"-k 70000 identify", 2, "--keep-alive-tmo"},
      {"--reconnect-delay 0 identify", 2, "--reconnect-delay"},
      {"--ctrl-loss-tmo -2 identify", 2, "--ctrl-loss-tmo"},
      {"--ack-timeout 32 identify", 2, "--ack-timeout"},
      {"--ack-timeout -1 identify", 2, "--ack-timeout"},
      {"--ack-timeout x identify", 2, "--ack-timeout"},
      {"--fast-io-fail-tmo -2 identify", 2, "--fast-io-fail-tmo"},
      {"--fast_io_fail_tmo x identify", 2, "--fast_io_fail_tmo"},
      {"--max-inline-data x identify", 2, "--max-inline-data"},
      {"--poll fast identify", 2, "--poll"},
      {"--poll-mode fast", 2, "--poll-mode"},
      {"identify --output-format yaml", 2, "--output-format"},
      {"write --segments 0", 2, "--segments"},
      {"write -o 10x", 2, "--offset"},
      {"read -l 10x", 2, "--length"},
      {"read -l 0", 2, "--length is 0"},
      {"read -d x -o 5x", 2, "--offset"},
      {"read -d x -l 512 -o 0xfffffffffffffe00", 2, "overflows 64 bits"},
      {"bench --bs 100", 2, "--bs"},
      {"bench --rw sideways", 2, "--rw"},
      {"bench --size 0", 2, "--size is 0"},
      {"bench --size 10x", 2, "--size"},
      {"bench --iodepth 0", 2, "--iodepth"},
      {"bench --numjobs 0", 2, "--numjobs"},
      {"bench --numjobs 2 --threads 3", 2, "--threads 3 exceeds --numjobs 2"},
      {"bench --threads 65", 2, "--threads"},
      {"bench --runtime 0", 2, "--runtime"},
      {"bench --output r.json", 2, "the report file is --json FILE"},
      {"conform --cases no-such-case", 2, "--cases"},
      {"-x both identify", 2, "--multipath"},
      {"--iopolicy queue-depth identify", 2, "--iopolicy"},
      {"-a 192.0.2.1 -x multipath discover", 2,
       "-x multipath is for identify, write, read and bench"},
      {"-a 192.0.2.1 -n nqn.x -x multipath conform", 2, "-x multipath is for identify"},
      // What is missing, once every value is good.
      {"-a 192.0.2.1 -n nqn.x read -d x", 2, "nvmf-host: read: -l,--length is required"},
      {"-a 192.0.2.1 -n nqn.x read -l 512", 2, "nvmf-host: read: -d,--data FILE is required"},
      {"-a 192.0.2.1 -n nqn.x", 2, "subcommand"},
      {"-a 192.0.2.1 -n '' identify", 2, "--nqn"},
      {"-a 999.1.1.1 -n nqn.x identify", 2, "--traddr"},
      {"-a 192.0.2.1 -n nqn.x -w 1.2.3 identify", 2, "--host-traddr"},
      {"-a 192.0.2.1 -n nqn.x -s abc identify", 2, "--trsvcid"},
      {"-a 192.0.2.1 -n nqn.x -s 0 identify", 2, "--trsvcid"},
      {"-a 192.0.2.1 -n nqn.x -s 65536 identify", 2, "--trsvcid"},
      {"-a 192.0.2.1 -n nqn.x --queue-size 1 identify", 2, "--queue-size"},
      {"-a 192.0.2.1 -n nqn.x --timeout-ms 0 identify", 2, "--timeout-ms"},
      {"-a 192.0.2.1 -n nqn.x --nr-io-queues 0 identify", 2, "--nr-io-queues"},
      {"-a 192.0.2.1 -n nqn.x --poll-mode fast identify", 2, "--poll-mode"},
      {"-a 192.0.2.1 -n nqn.x --poll fast identify", 2, "--poll"},
      {"-a 192.0.2.1 -n nqn.x --log-level loud identify", 2, "--log-level"},
      // An unknown subcommand or option is named, before any missing option is.
      {"frobnicate", 2, "'frobnicate'"},
      {"-a 192.0.2.1 -n nqn.x frobnicate", 2, "'frobnicate'"},
      {"-a 192.0.2.1 -n nqn.x identify --frob", 2, "'--frob'"},
      {"identify --frob", 2, "'--frob'"},
      {"-a 192.0.2.1 -n nqn.x", 2,
       "identify, write, read, bench, discover, conform, ublk or gen-dhchap-key"},
      {"-a 192.0.2.1 -n nqn.x identify --json /nonexistent-dir/i.json", 1, "--json"},
      {"ublk", 2, "nvmf-host: ublk: -a,--traddr is required"},
      {"-a 192.0.2.1 -n nqn.x ublk --max-io-size 1000", 2, "--max-io-size"},
      {"-a 192.0.2.1 -n nqn.x ublk --dev-id -3", 2, "--dev-id"},
      {"-a 192.0.2.1 -n nqn.x ublk --json /nonexistent-dir/u.json", 1, "--json"},
      {"-a 192.0.2.1,192.0.2.2 -n nqn.x -x multipath ublk", 2, "-x multipath is for"},
      {"-a 192.0.2.1 discover --json /nonexistent-dir/d.json", 1, "--json"},
      {"-a 192.0.2.1 -n nqn.x identify --output-format yaml", 2, "--output-format"},
      {"-a 192.0.2.1 -n nqn.2014-08.org.nvmexpress.discovery identify", 2,
       "use 'nvmf-host discover'"},
      {"-a 192.0.2.1 -n nqn.x write", 2, "nvmf-host: write: -d,--data FILE is required"},
      {"write", 2, "nvmf-host: write: -d,--data FILE is required"},
      {"-a 192.0.2.1 -n nqn.x write -d /nonexistent-dir/in", 1, "/nonexistent-dir/in"},
      {"-a 192.0.2.1 -n nqn.x write --data /dev/null", 1, "/dev/null"},
      {"-a 192.0.2.1 -n nqn.x read -d x -l 0", 2, "--length"},
      {"-a 192.0.2.1 -n nqn.x read -d x -l 10x", 2, "--length"},
      {"-a 192.0.2.1 -n nqn.x read -d x -l -1", 2, "--length"},
      {"-a 192.0.2.1 -n nqn.x read -d x -l 512 -l 1024", 2, "--length"},
      {"-a 192.0.2.1 -n nqn.x read -d x -l 0xffffffffffffffff", 2, "--length"},
      {"-a 192.0.2.1 -n nqn.x read -d x -l 512 -o 0xfffffffffffffe00", 2, "--length"},
      {"-a 192.0.2.1 -n nqn.x read --data x -l 512 -o 5x", 2, "--offset"},
      {"-a 192.0.2.1 -n nqn.x read -d x -l 512 --json /nonexistent-dir/r.json", 1, "--json"},
      // The older spellings still work (the same checks answer them), hidden from --help...
      {"-a 192.0.2.1 -n nqn.x write -i /nonexistent-dir/in", 1, "/nonexistent-dir/in"},
      {"-a 192.0.2.1 -n nqn.x write --input /nonexistent-dir/in", 1, "/nonexistent-dir/in"},
      {"-a 192.0.2.1 -n nqn.x read -f x -l 512 -o 5x", 2, "--offset"},
      {"-a 192.0.2.1 -n nqn.x read --output x -l 10x", 2, "--length"},
      {"-a 192.0.2.1 -n nqn.x --fast_io_fail_tmo x identify", 2, "--fast_io_fail_tmo"},
      {"-a 192.0.2.1 -n nqn.x bench --queues 0", 2, "--queues"},
      // ...but not next to the new one.
      {"-a 192.0.2.1 -n nqn.x write -d a -i b", 2, "--data"},
      {"-a 192.0.2.1 -n nqn.x read -d a -f b -l 512", 2, "--data"},
      {"-a 192.0.2.1 -n nqn.x --poll busy --poll-mode busy identify", 2, "--poll"},
      // bench's report file is --json FILE; its old --output (read's data file) is refused.
      {"-a 192.0.2.1 -n nqn.x bench --output r.json", 2, "the report file is --json FILE"},
      {"-a 192.0.2.1 -n nqn.x bench --json /nonexistent-dir/b.json", 1, "--json"},
  };
  for (const Case& c : cases) {
    Outcome o = run("host/nvmf-host", c.args);
    EXPECT_EQ(o.exit_code, c.want_exit) << c.args << ": " << o.err;
    EXPECT_NE(o.err.find(c.names), std::string::npos) << c.args << ": " << o.err;
    EXPECT_EQ(shape_error("nvmf-host", o, c.names), "") << c.args << ": " << o.err;
  }
  // The usage line is the synopsis of the subcommand given, else of nvmf-host.
  for (const char* sub : {"identify", "write", "read", "bench", "discover", "conform", "ublk"}) {
    Outcome o = run("host/nvmf-host", std::string("--log-level loud ") + sub);
    EXPECT_EQ(o.exit_code, 2) << sub << ": " << o.err;
    EXPECT_NE(o.err.find("\nusage: nvmf-host -a ADDR "), std::string::npos) << sub << ": " << o.err;
    EXPECT_NE(o.err.find(std::string("(try nvmf-host ") + sub + " --help)\n"), std::string::npos)
        << sub << ": " << o.err;
  }
  Outcome top = run("host/nvmf-host", "--log-level loud");
  EXPECT_NE(top.err.find("(try nvmf-host --help)\n"), std::string::npos) << top.err;
  for (const std::string& args :
       {h + "write -d '" + dir + "'", h + "write -d '" + input + "' -o 10x",
        h + "write -d '" + input + "' -o -512",
        h + "write -d '" + input + "' -o 0xffffffffffffffff",
        h + "write -d '" + input + "' --json /nonexistent-dir/w.json"}) {
    Outcome o = run("host/nvmf-host", args);
    EXPECT_NE(o.exit_code, 0) << args << ": " << o.err;
    EXPECT_NE(o.exit_code, -1) << args << ": " << o.err;
    EXPECT_EQ(o.err.find("connect"), std::string::npos) << args << ": refused too late: " << o.err;
  }
}

// `conform --list` needs no target; with --json it writes the catalogue as JSON, one entry per
// line of the table, and `--json -` puts only the JSON on stdout.
// Without ublk_drv, `ublk` says so before it connects (192.0.2.1 is unreachable: a connect
// attempt would fail naming it instead).
TEST(CliArgs, UblkWithoutUblkDrvSaysSoBeforeConnecting) {
  if (::access("/dev/ublk-control", F_OK) == 0) GTEST_SKIP() << "ublk_drv is loaded here";
  Outcome o = run("host/nvmf-host", "-a 192.0.2.1 -n nqn.x ublk");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.err,
            "nvmf-host ublk: ublk: UNAVAILABLE: /dev/ublk-control is missing: load ublk_drv "
            "(modprobe ublk_drv; Linux 6.0 or later built with CONFIG_BLK_DEV_UBLK)\n");
}

TEST(CliArgs, ConformListWritesJson) {
  const std::string file = tmpdir() + "/conform-list.json";
  const std::string table = tmpdir() + "/conform-list.txt";
  const std::string bin = "'" + runfile("host/nvmf-host") + "' conform --list";
  ASSERT_EQ(std::system((bin + " --json '" + file + "' > '" + table + "'").c_str()), 0);
  nlohmann::json j = nlohmann::json::parse(slurp(file), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << slurp(file);
  ASSERT_TRUE(j["cases"].is_array());
  ASSERT_GT(j["cases"].size(), 50u);
  EXPECT_EQ(j["count"], j["cases"].size());
  // The table still goes to stdout, ending in "N cases".
  EXPECT_NE(slurp(table).find(std::to_string(j["cases"].size()) + " cases\n"), std::string::npos)
      << slurp(table);
  size_t dangerous = 0;
  for (const nlohmann::json& c : j["cases"]) {
    EXPECT_TRUE(c["id"].is_string() && c["spec"].is_string() && c["level"].is_string()) << c;
    if (c["dangerous"] == true) ++dangerous;
  }
  EXPECT_GE(dangerous, 1u);
  const std::string piped = tmpdir() + "/conform-list-stdout.json";
  ASSERT_EQ(std::system((bin + " --json - > '" + piped + "'").c_str()), 0);
  nlohmann::json k = nlohmann::json::parse(slurp(piped), nullptr, false);
  ASSERT_FALSE(k.is_discarded()) << slurp(piped).substr(0, 200);
  EXPECT_EQ(k, j);
  // A report path that cannot be written: exit 1 naming it, no usage line.
  Outcome bad = run("host/nvmf-host", "conform --list --json /nonexistent-dir/list.json");
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("/nonexistent-dir/list.json"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("usage:"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace nvmf::e2e
