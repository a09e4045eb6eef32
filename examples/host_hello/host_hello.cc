// SPDX-License-Identifier: BSD-3-Clause
// host_hello: connects with the host library, identifies, writes blocks, reads them back,
// compares and disconnects: the smallest useful program on //host:host_lib.
//
// Usage: host_hello -a TRADDR [-s TRSVCID] -n SUBNQN [-w HOST_TRADDR] [--hostnqn NQN]
//                   [--lba SLBA] [--blocks N]
// Exit status: 0 only when the blocks read back are the blocks written ("host_hello: ... match"),
// 1 on a mismatch or an error, 2 on bad arguments.
#include <getopt.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "common/status.h"
#include "host/controller.h"
#include "host/identify.h"
#include "host/options.h"

namespace {

using nvmf::Status;
using nvmf::host::Controller;
using nvmf::host::HostOptions;

constexpr char kUsage[] =
    "usage: host_hello -a TRADDR [-s TRSVCID] -n SUBNQN [-w HOST_TRADDR] [--hostnqn NQN]\n"
    "                  [--lba SLBA] [--blocks N]\n"
    "Connects to the NVMe-oF RDMA subsystem SUBNQN at TRADDR:TRSVCID (default 4420), prints\n"
    "what Identify says, writes N blocks (default 8) of a fresh pattern at SLBA (default 0),\n"
    "reads them back, compares and disconnects. Exit 0 only when they match.\n";

int usage_error(const char* what) {
  std::fprintf(stderr, "host_hello: %s\n%s", what, kUsage);
  return 2;
}

int fail(const char* step, const Status& st) {
  std::fprintf(stderr, "host_hello: %s: %s\n", step, st.to_string().c_str());
  return 1;
}

// Byte i of the pattern: a run-specific nonce mixed with the byte's position, so that data left
// on the namespace by an earlier run (or zeroes) never compares equal.
void fill_pattern(uint8_t* p, size_t n, uint64_t nonce, uint64_t first_byte) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t word = nonce ^ ((first_byte + i) * 0x9E3779B97F4A7C15ull);
    std::memcpy(p + i, &word, std::min<size_t>(8, n - i));
  }
}

bool parse_u64(const char* text, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  HostOptions opts;
  uint64_t slba = 0, blocks = 8;
  enum { kHostnqn = 256, kLba, kBlocks };
  const option long_options[] = {
      {"traddr", required_argument, nullptr, 'a'},
      {"trsvcid", required_argument, nullptr, 's'},
      {"nqn", required_argument, nullptr, 'n'},
      {"host-traddr", required_argument, nullptr, 'w'},
      {"hostnqn", required_argument, nullptr, kHostnqn},
      {"lba", required_argument, nullptr, kLba},
      {"blocks", required_argument, nullptr, kBlocks},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  for (int c; (c = getopt_long(argc, argv, "a:s:n:w:h", long_options, nullptr)) != -1;) {
    switch (c) {
      case 'a':
        opts.traddr = optarg;
        break;
      case 's':
        opts.trsvcid = optarg;
        break;
      case 'n':
        opts.subnqn = optarg;
        break;
      case 'w':
        opts.host_traddr = optarg;
        break;
      case kHostnqn:
        opts.hostnqn = optarg;
        break;
      case kLba:
        if (!parse_u64(optarg, slba)) return usage_error("--lba: not a block number");
        break;
      case kBlocks:
        if (!parse_u64(optarg, blocks) || blocks == 0 || blocks > 4096) {
          return usage_error("--blocks: give 1..4096");
        }
        break;
      case 'h':
        std::fputs(kUsage, stdout);
        return 0;
      default:
        return usage_error("unknown option");
    }
  }
  if (optind != argc) return usage_error("unexpected argument");
  if (opts.traddr.empty() || opts.subnqn.empty()) return usage_error("-a and -n are required");

  // 1. Connect: admin queue, Fabrics Connect, enable, Identify, I/O queue.
  auto connected = Controller::connect(opts);
  if (!connected.ok()) return fail("connect", connected.status());
  Controller& ctrl = **connected;

  // 2. What Identify said.
  const auto& id = ctrl.identify_controller();
  const auto& ns = ctrl.namespace_info();
  std::printf("host_hello: connected to %s at %s:%s as %s (cntlid %u)\n", opts.subnqn.c_str(),
              opts.traddr.c_str(), opts.trsvcid.c_str(), ctrl.hostnqn().c_str(), id.cntlid);
  std::printf("host_hello: model \"%s\", serial \"%s\"; namespace %u: %llu blocks of %u bytes\n",
              nvmf::host::trim_ascii(id.mn, sizeof(id.mn)).c_str(),
              nvmf::host::trim_ascii(id.sn, sizeof(id.sn)).c_str(), ns.nsid,
              static_cast<unsigned long long>(ns.nsze), ns.lba_size);
  if (slba >= ns.nsze || blocks > ns.nsze - slba) {
    std::fprintf(stderr, "host_hello: blocks %llu..%llu are beyond the namespace (%llu blocks)\n",
                 static_cast<unsigned long long>(slba),
                 static_cast<unsigned long long>(slba + blocks - 1),
                 static_cast<unsigned long long>(ns.nsze));
    (void)ctrl.disconnect();  // the range error is what is reported
    return 1;
  }

  // 3. Write the pattern from one registered buffer, read it into another.
  const size_t bytes = blocks * ns.lba_size;
  auto out = ctrl.allocate_buffer(bytes);
  if (!out.ok()) return fail("allocate the write buffer", out.status());
  auto in = ctrl.allocate_buffer(bytes);
  if (!in.ok()) return fail("allocate the read buffer", in.status());
  const uint64_t nonce = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  fill_pattern(out->data(), bytes, nonce, slba * ns.lba_size);
  const nvmf::host::DataSegment segment = nvmf::host::segment_of(*out);
  if (Status st = ctrl.write(slba, {&segment, 1}); !st.ok()) return fail("write", st);
  // With a volatile write cache (VWC bit 0) the data is durable only after a flush.
  if ((id.vwc & 1) != 0) {
    if (Status st = ctrl.flush(); !st.ok()) return fail("flush", st);
  }
  if (Status st = ctrl.read(slba, nvmf::host::segment_of(*in)); !st.ok()) return fail("read", st);

  // 4. Compare, then disconnect (CC.SHN normal shutdown, queues torn down).
  size_t first_bad = bytes;
  for (size_t i = 0; i < bytes; ++i) {
    if (in->data()[i] != out->data()[i]) {
      first_bad = i;
      break;
    }
  }
  Status down = ctrl.disconnect();
  if (first_bad != bytes) {
    std::printf(
        "host_hello: MISMATCH: read back %zu bytes at LBA %llu, first difference at byte %zu "
        "(wrote 0x%02x, read 0x%02x)\n",
        bytes, static_cast<unsigned long long>(slba), first_bad, out->data()[first_bad],
        in->data()[first_bad]);
    return 1;
  }
  if (!down.ok()) return fail("disconnect", down);
  std::printf("host_hello: wrote and read back %llu blocks (%zu bytes) at LBA %llu: match\n",
              static_cast<unsigned long long>(blocks), bytes,
              static_cast<unsigned long long>(slba));
  return 0;
}
