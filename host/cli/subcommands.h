// SPDX-License-Identifier: BSD-3-Clause
// nvmf-host's identify, write, read, discover and gen-dhchap-key subcommands (nvme-cli's names
// and output), as users of the host library. Each cmd_* returns the process exit status: 0,
// 2 (kExitUsage) for a bad argument found once connected (alignment, namespace size), or 1
// (kExitRuntime) with a one-line message on stderr naming the step that failed (the connect,
// the I/O, the disconnect).
#ifndef NVMF_HOST_CLI_SUBCOMMANDS_H_
#define NVMF_HOST_CLI_SUBCOMMANDS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "host/multipath.h"
#include "host/options.h"

namespace nvmf::host {

// Options of the write and read subcommands, as typed.
struct IoArgs {
  std::string file;
  std::string offset = "0";
  std::string length;
  std::string json;       // "" none, "-" stdout, else a path
  uint32_t segments = 1;  // write: separately registered pieces per chunk (host/cli/segments.h)
  // offset and length parsed by check_io_args().
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
};

// Parses -o and (read, when -l was given) -l before anything missing is reported: kInvalidArgument
// naming the option ("--length is 0", "--offset + --length (...) overflows 64 bits").
Status check_io_args(IoArgs& a, bool length_given);

// identify: Identify Controller and the namespace, as text or a --json report ("-": stdout);
// with `multipath` every -a/-s path's ANA state too.
int cmd_identify(const HostOptions& opts, const std::string& json, IoPolicy policy, bool multipath);
// write: the file a.file at byte a.offset_bytes (a partial last LBA padded with zeros), in
// a.segments separately registered pieces per chunk.
int cmd_write(const HostOptions& opts, const IoArgs& a, IoPolicy policy, bool multipath);
// read: a.length_bytes bytes at a.offset_bytes into the file a.file.
int cmd_read(const HostOptions& opts, const IoArgs& a, IoPolicy policy, bool multipath);
// discover: the Discovery Log Page, printed as `nvme discover` does, or a --json report.
int cmd_discover(const HostOptions& opts, const std::string& json);

// nvme-cli's gen-dhchap-key: prints a new DH-HMAC-CHAP secret (host/cli/cli_util.h).
struct GenKeyArgs {
  std::string secret;
  uint32_t key_length = 0;
  uint32_t hmac = 0;
  std::string nqn;
};

// Adds gen-dhchap-key and its options (-s, -l, -m, -n, nvme-cli's) to `app`, filling `a`.
CLI::App* add_gen_dhchap_key_subcommand(CLI::App& app, GenKeyArgs& a);
// Prints the secret (the host NQN from /etc/nvme/hostnqn when -m is given without -n), and
// wipes it from memory; 0, or 2 with the usage error for a bad key, length or hash.
int cmd_gen_dhchap_key(GenKeyArgs& a);

}  // namespace nvmf::host

#endif  // NVMF_HOST_CLI_SUBCOMMANDS_H_
