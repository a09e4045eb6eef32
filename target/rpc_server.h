// SPDX-License-Identifier: BSD-3-Clause
// RpcServer: the target's control socket. A Unix stream socket served by its own thread (never
// a poll group's: nothing a client does reaches the I/O path except through the thread-safe
// calls its methods make), speaking JSON-RPC 2.0 as target/rpc.h frames it, SPDK's way: one
// JSON object per request, one JSON object and a newline per answer.
//
// Limits, so that no client can disturb another or the target: at most max_clients connected
// (the next one gets an error answer and is closed); a request over RpcLimits is answered with
// an error and its connection closed; a client that stops in the middle of a request, or sends
// nothing at all, for idle_timeout is closed; a client that does not read its answers has at
// most max_output_bytes queued for it before it is closed.
#ifndef NVMF_TARGET_RPC_SERVER_H_
#define NVMF_TARGET_RPC_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "target/rpc.h"

namespace nvmf::target {

struct RpcServerOptions {
  std::string path;           // the socket's path (at most 107 bytes)
  uint32_t max_clients = 64;  // connected at once
  std::chrono::milliseconds idle_timeout{10000};
  size_t max_output_bytes = size_t{64} << 20;  // answers queued for one client
  RpcLimits limits;
};

// The path used when none is given: $XDG_RUNTIME_DIR/nvmf-target.sock when XDG_RUNTIME_DIR is
// set, else /var/tmp/nvmf-target.sock (SPDK's default is /var/tmp/spdk.sock).
std::string default_rpc_socket_path();

class RpcServer {
 public:
  // Creates the socket at options.path (mode 0600) and starts serving `dispatcher` (which must
  // outlive the server). A path that exists is taken over only when it is a socket nobody
  // listens on (a target that was killed left it); otherwise kInvalidArgument: "in use by a
  // running process" or "exists and is not a socket". System call errors name the call.
  static Result<std::unique_ptr<RpcServer>> start(const RpcServerOptions& options,
                                                  const RpcDispatcher& dispatcher);
  // Stops the thread, closes every client and removes the socket file.
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  const std::string& path() const { return options_.path; }
  // Counters, for tests and the log: clients accepted, refused (over max_clients), closed for
  // an error, for idleness or for not reading; requests answered.
  struct Counts {
    uint64_t accepted = 0, refused = 0, closed_error = 0, closed_idle = 0, closed_slow = 0;
    uint64_t requests = 0;
  };
  Counts counts() const;

 private:
  RpcServer(const RpcServerOptions& options, const RpcDispatcher& dispatcher, int listen_fd,
            int wake_fd);
  void serve();

  RpcServerOptions options_;
  const RpcDispatcher& dispatcher_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: the destructor wakes the thread
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> accepted_{0}, refused_{0}, closed_error_{0}, closed_idle_{0},
      closed_slow_{0}, requests_{0};
  std::thread thread_;
};

// The client side (`nvmf-target rpc`): connects to `path`, sends `request` (one JSON object)
// and returns the answer's text (without its newline). Errors: kUnavailable when nothing
// listens at `path`, kTimeout after `timeout` without a whole answer, kIo otherwise.
Result<std::string> rpc_call(const std::string& path, const std::string& request,
                             std::chrono::milliseconds timeout);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_RPC_SERVER_H_
