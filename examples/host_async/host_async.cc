// SPDX-License-Identifier: BSD-3-Clause
// host_async: reads a whole namespace through the host library's asynchronous API
// (host/io_queue.h): one thread per I/O queue, each keeping DEPTH reads in flight over its share
// of the namespace, the callbacks counting the bytes.
//
// Usage: host_async -a TRADDR [-s TRSVCID] -n SUBNQN [-w HOST_TRADDR] [--hostnqn NQN]
//                   [--queues N] [--depth D] [--block BYTES]
// Exit status: 0 only when every block of the namespace was read ("host_async: read ... bytes"),
// 1 on an error, 2 on bad arguments.
#include <getopt.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "host/controller.h"
#include "host/io_queue.h"
#include "host/options.h"

namespace {

using nvmf::Status;
using nvmf::host::Controller;
using nvmf::host::HostOptions;
using nvmf::host::IoCompletion;
using nvmf::host::IoQueue;

constexpr char kUsage[] =
    "usage: host_async -a TRADDR [-s TRSVCID] -n SUBNQN [-w HOST_TRADDR] [--hostnqn NQN]\n"
    "                  [--queues N] [--depth D] [--block BYTES]\n"
    "Connects with N I/O queues (default 4) and reads the whole namespace, one thread per\n"
    "queue, D reads of BYTES (default 32 and 131072) in flight on each; prints the bytes read.\n";

int usage_error(const char* what) {
  std::fprintf(stderr, "host_async: %s\n%s", what, kUsage);
  return 2;
}

bool parse_u64(const char* text, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') return false;
  out = v;
  return true;
}

// One queue's reader: blocks [first, end) of the namespace, `depth` reads in flight, each slot
// reading the next block not yet asked for when its read completes.
struct Reader {
  IoQueue* q = nullptr;
  uint64_t next = 0;  // next LBA to ask for
  uint64_t end = 0;
  uint32_t lbas_per_read = 0;
  uint32_t lba_size = 0;
  uint64_t bytes = 0;  // read so far
  std::string error;

  struct Slot {
    Reader* r;
    nvmf::host::DataSegment buf;
    uint32_t lbas;
  };
  std::vector<Slot> slots;

  // Asks for the next piece into `s`; false when the share is done.
  bool issue(Slot& s) {
    if (next >= end) return false;
    s.lbas = static_cast<uint32_t>(std::min<uint64_t>(lbas_per_read, end - next));
    nvmf::host::DataSegment d = s.buf;
    d.length = static_cast<size_t>(s.lbas) * lba_size;
    Status st = q->submit_read(next, d, done, &s);
    if (!st.ok()) {
      if (error.empty()) error = st.to_string();
      return false;
    }
    next += s.lbas;
    return true;
  }
  static void done(void* arg, const IoCompletion& c) {
    auto& s = *static_cast<Slot*>(arg);
    Reader& r = *s.r;
    if (c.status != 0) {
      if (r.error.empty())
        r.error = "a read completed with NVMe status " + std::to_string(c.status);
      return;
    }
    r.bytes += static_cast<uint64_t>(s.lbas) * r.lba_size;
    if (r.error.empty()) r.issue(s);
  }
  void run() {
    for (Slot& s : slots) {
      if (!issue(s)) break;
    }
    while (q->outstanding() > 0) {
      nvmf::Result<int> ran = q->process_completions();
      if (!ran.ok()) {
        error = ran.status().to_string();
        return;
      }
      if (*ran == 0) q->wait(std::chrono::steady_clock::now() + std::chrono::seconds(1));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  HostOptions opts;
  uint64_t queues = 4, depth = 32, block = 128 * 1024;
  enum { kHostnqn = 256, kQueues, kDepth, kBlock };
  const option long_options[] = {
      {"traddr", required_argument, nullptr, 'a'},
      {"trsvcid", required_argument, nullptr, 's'},
      {"nqn", required_argument, nullptr, 'n'},
      {"host-traddr", required_argument, nullptr, 'w'},
      {"hostnqn", required_argument, nullptr, kHostnqn},
      {"queues", required_argument, nullptr, kQueues},
      {"depth", required_argument, nullptr, kDepth},
      {"block", required_argument, nullptr, kBlock},
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
      case kQueues:
        if (!parse_u64(optarg, queues) || queues == 0 || queues > 64) {
          return usage_error("--queues: give 1..64");
        }
        break;
      case kDepth:
        if (!parse_u64(optarg, depth) || depth == 0 || depth > 1023) {
          return usage_error("--depth: give 1..1023");
        }
        break;
      case kBlock:
        if (!parse_u64(optarg, block) || block == 0 || block > (16u << 20)) {
          return usage_error("--block: give 1..16777216 bytes");
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
  opts.num_io_queues = static_cast<uint16_t>(queues);
  opts.queue_size = static_cast<uint16_t>(depth + 1);

  auto connected = Controller::connect(opts);
  if (!connected.ok()) {
    std::fprintf(stderr, "host_async: connect: %s\n", connected.status().to_string().c_str());
    return 1;
  }
  Controller& ctrl = **connected;
  const uint32_t lba_size = ctrl.lba_size();
  const uint64_t nsze = ctrl.namespace_info().nsze;
  // Whole LBAs per read, within what one command may move.
  const uint64_t per_read = std::max<uint64_t>(
      1, std::min<uint64_t>(block, ctrl.transfer_limits().max_command_bytes) / lba_size);
  const size_t n = ctrl.num_io_queues();
  std::vector<Reader> readers(n);
  std::vector<nvmf::verbs::RegisteredBuffer> buffers;
  for (size_t i = 0; i < n; ++i) {
    Reader& r = readers[i];
    nvmf::Result<IoQueue*> q = ctrl.io_queue(i);
    if (!q.ok()) {
      std::fprintf(stderr, "host_async: io_queue %zu: %s\n", i, q.status().to_string().c_str());
      return 1;
    }
    r.q = *q;
    r.next = nsze * i / n;
    r.end = nsze * (i + 1) / n;
    r.lbas_per_read = static_cast<uint32_t>(per_read);
    r.lba_size = lba_size;
    const size_t slot_bytes = per_read * lba_size;
    const size_t slots = std::min<size_t>(depth, r.q->depth());
    auto buf = ctrl.allocate_buffer(slot_bytes * slots);
    if (!buf.ok()) {
      std::fprintf(stderr, "host_async: buffer: %s\n", buf.status().to_string().c_str());
      return 1;
    }
    for (size_t j = 0; j < slots; ++j) {
      r.slots.push_back(
          Reader::Slot{&r, nvmf::host::segment_of(*buf, j * slot_bytes, slot_bytes), 0});
    }
    buffers.push_back(std::move(*buf));
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (Reader& r : readers) threads.emplace_back([&r] { r.run(); });
  for (std::thread& t : threads) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  uint64_t total = 0;
  int rc = 0;
  for (size_t i = 0; i < n; ++i) {
    total += readers[i].bytes;
    if (!readers[i].error.empty()) {
      std::fprintf(stderr, "host_async: queue %zu: %s\n", i, readers[i].error.c_str());
      rc = 1;
    }
  }
  Status down = ctrl.disconnect();
  if (rc != 0) return rc;
  if (!down.ok()) {
    std::fprintf(stderr, "host_async: disconnect: %s\n", down.to_string().c_str());
    return 1;
  }
  const uint64_t want = nsze * lba_size;
  std::printf("host_async: read %llu bytes of %llu with %zu queues in %.2f s (%.1f MiB/s)\n",
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(want), n, s,
              static_cast<double>(total) / (1 << 20) / (s > 0 ? s : 1));
  return total == want ? 0 : 1;
}
