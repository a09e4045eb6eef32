// HostOptions: everything the host library needs to connect to one NVMe-oF RDMA controller.
#ifndef NVMF_HOST_OPTIONS_H_
#define NVMF_HOST_OPTIONS_H_

#include <cstdint>
#include <string>

namespace nvmf::host {

// How a queue waits for completions.
enum class PollMode {
  kBusy,   // Spin on ibv_poll_cq until the deadline: lowest latency, one CPU per waiter.
  kEvent,  // Arm the CQ and sleep on its completion channel; the better choice under emulation.
};

// "busy" / "event".
const char* poll_mode_name(PollMode mode);

// Connection parameters. The library does no argument parsing: the CLI fills this struct.
struct HostOptions {
  std::string traddr;            // Target IPv4/IPv6 address (required).
  std::string trsvcid = "4420";  // Target port (NVMe-oF RDMA default).
  std::string subnqn;            // Subsystem NQN (required).
  std::string hostnqn;           // Empty: "nqn.2014-08.org.nvmexpress:uuid:<hostid>".
  std::string host_traddr;       // Local source address; empty lets rdma_cm choose.
  uint16_t queue_size = 128;     // I/O queue entries (CM hrqsize; hsqsize = queue_size - 1).
  uint16_t num_io_queues = 1;    // I/O queues to connect (qid 1..N), capped by Set Features.
  // Keep Alive Timeout sent in the admin Connect, in ms. Default 0 (keep-alive disabled), unlike
  // Linux's 5 s default: the library has no keep-alive timer; a caller that sets it must call
  // Controller::keep_alive() more often than that.
  uint32_t kato_ms = 0;
  int timeout_ms = 5000;  // Per command and per CM step (resolve, connect).
  // max_inline_data asked of each QP (IBV_SEND_INLINE capsules). The QP wrapper retries without
  // inline send when the device refuses; 0 never asks.
  uint32_t requested_max_inline_data = 64;
  PollMode poll_mode = PollMode::kEvent;
  int shutdown_timeout_ms = 5000;  // Wait for CSTS.SHST = complete on disconnect().
};

}  // namespace nvmf::host

#endif  // NVMF_HOST_OPTIONS_H_
