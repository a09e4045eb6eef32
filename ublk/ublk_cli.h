// SPDX-License-Identifier: BSD-3-Clause
// The `nvmf-host ublk` subcommand: the namespace as /dev/ublkbN until SIGINT or SIGTERM, or
// until ctrl_loss_tmo removes the controller (ublk/ublk_device.h does the work).
#ifndef NVMF_UBLK_UBLK_CLI_H_
#define NVMF_UBLK_UBLK_CLI_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "host/options.h"

namespace nvmf::ublk {

// The ublk options as typed (the names of ublksrv's `ublk add`: -n is the device number there,
// --dev-id here, -n being the NQN).
struct UblkArgs {
  int dev_id = -1;                    // --dev-id N: /dev/ublkbN; -1: the kernel picks
  uint32_t max_io_size = 128 * 1024;  // --max-io-size BYTES: the most one request carries
  std::string json;                   // --json [FILE]: counters at the end ("-": stdout)
};

// Adds the `ublk` subcommand to `app`; the values land in `args`.
CLI::App* add_ublk_subcommand(CLI::App& app, UblkArgs& args);

// The bytes the ublk tag buffers register: queues x (queue_size - 1) tags x max_io_size.
uint64_t ublk_buffer_bytes(uint32_t queues, uint32_t queue_size, uint32_t max_io_size);

// Connects with `opts` (I/O queues: --nr-io-queues, tags per queue: --queue-size - 1), adds and
// starts the ublk device, prints "nvmf-host ublk: /dev/ublkbN ready: ..." on stdout, serves
// until SIGINT/SIGTERM (exit 0) or until the controller is deleted by ctrl_loss_tmo or a
// queue fails (exit 1), then removes the device and disconnects. Errors as one line on stderr.
int cmd_ublk(const host::HostOptions& opts, const UblkArgs& args);

}  // namespace nvmf::ublk

#endif  // NVMF_UBLK_UBLK_CLI_H_
