// SPDX-License-Identifier: BSD-3-Clause
// RpcServer: the control socket's thread, and rpc_call(), its client.
#include "target/rpc_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <list>
#include <vector>

#include "common/log.h"

namespace nvmf::target {
namespace {

using Clock = std::chrono::steady_clock;

Result<sockaddr_un> socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return Status::invalid_argument("--rpc-socket: a path of 1 to " +
                                    std::to_string(sizeof(addr.sun_path) - 1) + " bytes, not " +
                                    std::to_string(path.size()));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

// 0: connected; otherwise the errno of connect().
int try_connect(int fd, const sockaddr_un& addr) {
  return ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0 ? 0 : errno;
}

struct Client {
  int fd = -1;
  RpcFramer framer;
  std::string out;
  size_t out_sent = 0;
  Clock::time_point last;
  bool close_after_flush = false;
  bool peer_done = false;  // the client shut its side down: answer what it sent, then close
};

}  // namespace

std::string default_rpc_socket_path() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && runtime[0] != '\0') return std::string(runtime) + "/nvmf-target.sock";
  return "/var/tmp/nvmf-target.sock";
}

Result<std::unique_ptr<RpcServer>> RpcServer::start(const RpcServerOptions& options,
                                                    const RpcDispatcher& dispatcher) {
  NVMF_ASSIGN_OR_RETURN(sockaddr_un addr, socket_address(options.path));
  struct stat st {};
  if (::lstat(options.path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Status::invalid_argument("--rpc-socket " + options.path +
                                      " exists and is not a socket");
    }
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0) return Status::from_errno("socket", errno);
    const int err = try_connect(probe, addr);
    ::close(probe);
    if (err == 0) {
      return Status::invalid_argument("--rpc-socket " + options.path +
                                      " is in use by a running process (another nvmf-target?)");
    }
    if (err != ECONNREFUSED) return Status::from_errno("connect", err, options.path);
    // Nobody listens: left by a target that was killed. Taken over.
    if (::unlink(options.path.c_str()) != 0 && errno != ENOENT) {
      return Status::from_errno("unlink", errno, options.path);
    }
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::from_errno("socket", errno);
  // Created 0600: only the target's user may change it. The umask is the process's, set around
  // bind() only (the server starts before the target's threads).
  const mode_t old_mask = ::umask(0177);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  ::umask(old_mask);
  if (bound != 0) {
    ::close(fd);
    return Status::from_errno("bind", bind_errno, options.path);
  }
  if (::listen(fd, 64) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(options.path.c_str());
    return Status::from_errno("listen", err, options.path);
  }
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(options.path.c_str());
    return Status::from_errno("eventfd", err);
  }
  std::unique_ptr<RpcServer> server(new RpcServer(options, dispatcher, fd, wake));
  server->thread_ = std::thread([s = server.get()] { s->serve(); });
  return server;
}

RpcServer::RpcServer(const RpcServerOptions& options, const RpcDispatcher& dispatcher,
                     int listen_fd, int wake_fd)
    : options_(options), dispatcher_(dispatcher), listen_fd_(listen_fd), wake_fd_(wake_fd) {}

RpcServer::~RpcServer() {
  stopping_.store(true, std::memory_order_release);
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(wake_fd_);
  ::unlink(options_.path.c_str());
}

RpcServer::Counts RpcServer::counts() const {
  Counts c;
  c.accepted = accepted_.load(std::memory_order_relaxed);
  c.refused = refused_.load(std::memory_order_relaxed);
  c.closed_error = closed_error_.load(std::memory_order_relaxed);
  c.closed_idle = closed_idle_.load(std::memory_order_relaxed);
  c.closed_slow = closed_slow_.load(std::memory_order_relaxed);
  c.requests = requests_.load(std::memory_order_relaxed);
  return c;
}

void RpcServer::serve() {
  std::list<Client> clients;
  std::vector<pollfd> fds;
  std::vector<Client*> polled;
  std::array<char, 65536> buf;
  Clock::time_point accept_paused_until{};
  auto close_client = [&](std::list<Client>::iterator it) {
    ::close(it->fd);
    return clients.erase(it);
  };
  while (!stopping_.load(std::memory_order_acquire)) {
    fds.clear();
    polled.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    const Clock::time_point now = Clock::now();
    const bool accepting = now >= accept_paused_until;
    fds.push_back({listen_fd_, static_cast<short>(accepting ? POLLIN : 0), 0});
    auto timeout = accepting ? options_.idle_timeout
                             : std::min(options_.idle_timeout,
                                        std::chrono::duration_cast<std::chrono::milliseconds>(
                                            accept_paused_until - now));
    for (Client& c : clients) {
      short events = c.peer_done ? 0 : POLLIN;
      if (c.out_sent < c.out.size()) events |= POLLOUT;
      fds.push_back({c.fd, events, 0});
      polled.push_back(&c);
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          c.last + options_.idle_timeout - now);
      timeout = std::min(timeout, std::max(left, std::chrono::milliseconds(0)));
    }
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()) + 1);
    if (n < 0 && errno != EINTR) {
      NVMF_LOG(ERROR, "target") << "control socket: poll: " << std::strerror(errno);
      break;
    }
    if (stopping_.load(std::memory_order_acquire)) break;
    // Reads, answers, writes.
    for (size_t i = 0; i < polled.size(); ++i) {
      Client& c = *polled[i];
      const short rev = n > 0 ? fds[i + 2].revents : 0;
      if ((rev & (POLLIN | POLLHUP | POLLERR)) != 0 && !c.peer_done) {
        for (;;) {
          const ssize_t got = ::recv(c.fd, buf.data(), buf.size(), MSG_DONTWAIT);
          if (got > 0) {
            c.last = Clock::now();
            c.framer.feed({buf.data(), static_cast<size_t>(got)});
            if (c.framer.pending_bytes() > options_.limits.max_message_bytes + buf.size()) break;
            continue;
          }
          if (got == 0 || (errno != EAGAIN && errno != EINTR)) c.peer_done = true;
          if (got < 0 && errno == EINTR) continue;
          break;
        }
        std::string message;
        while (!c.close_after_flush) {
          const RpcFramer::Next next = c.framer.next(&message);
          if (next == RpcFramer::Next::kNeedMore) break;
          if (next == RpcFramer::Next::kError) {
            c.out += RpcDispatcher::error_response(c.framer.error());
            c.out += '\n';
            c.close_after_flush = true;
            closed_error_.fetch_add(1, std::memory_order_relaxed);
            break;
          }
          std::string answer = dispatcher_.handle(message);
          requests_.fetch_add(1, std::memory_order_relaxed);
          if (!answer.empty()) {
            c.out += answer;
            c.out += '\n';
          }
        }
      }
      if (c.out_sent < c.out.size()) {
        const ssize_t sent = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                                    MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
          c.out_sent += static_cast<size_t>(sent);
          c.last = Clock::now();
          if (c.out_sent == c.out.size()) {
            c.out.clear();
            c.out_sent = 0;
          } else if (c.out_sent > buf.size() && c.out_sent * 2 > c.out.size()) {
            // A client that reads but lags: what it read is dropped, not kept.
            c.out.erase(0, c.out_sent);
            c.out_sent = 0;
          }
        } else if (sent < 0 && errno != EAGAIN && errno != EINTR) {
          c.out.clear();  // the client is gone: nothing more to deliver
          c.out_sent = 0;
          c.peer_done = true;
          c.close_after_flush = true;
        }
      }
    }
    // Closes: done, failed, idle, or not reading its answers.
    const Clock::time_point after = Clock::now();
    for (auto it = clients.begin(); it != clients.end();) {
      const bool flushed = it->out_sent >= it->out.size();
      if (flushed && (it->close_after_flush || it->peer_done)) {
        it = close_client(it);
      } else if (it->out.size() - it->out_sent > options_.max_output_bytes) {
        closed_slow_.fetch_add(1, std::memory_order_relaxed);
        it = close_client(it);
      } else if (after - it->last >= options_.idle_timeout) {
        closed_idle_.fetch_add(1, std::memory_order_relaxed);
        it = close_client(it);
      } else {
        ++it;
      }
    }
    // New clients, after the closes: a client that closed its last connection and opens the
    // next one finds its old place free.
    if (n > 0 && (fds[1].revents & POLLIN) != 0 && Clock::now() >= accept_paused_until) {
      for (;;) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
          // Out of descriptors (EMFILE, ENFILE): the listener stays readable, so it is left
          // alone for a while instead of spinning; other errors concern that one connection.
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
          }
          break;
        }
        if (clients.size() >= options_.max_clients) {
          // Clients whose peer is gone, with nothing left to send, make room first.
          for (auto it = clients.begin(); it != clients.end();) {
            char probe;
            if (it->out_sent >= it->out.size() &&
                ::recv(it->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
              it = close_client(it);
            } else {
              ++it;
            }
          }
        }
        if (clients.size() >= options_.max_clients) {
          const std::string busy =
              RpcDispatcher::error_response(
                  {RpcErrorCode::kInternalError, "too many control socket clients (" +
                                                     std::to_string(options_.max_clients) + ")"}) +
              "\n";
          refused_.fetch_add(1, std::memory_order_relaxed);
          (void)!::send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          ::close(fd);
          continue;
        }
        Client& c = clients.emplace_back();
        c.fd = fd;
        c.framer = RpcFramer(options_.limits);
        c.last = Clock::now();
        accepted_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  for (Client& c : clients) ::close(c.fd);
}

// ------------------------------------------------------------------------------- client --

Result<std::string> rpc_call(const std::string& path, const std::string& request,
                             std::chrono::milliseconds timeout) {
  NVMF_ASSIGN_OR_RETURN(sockaddr_un addr, socket_address(path));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::from_errno("socket", errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (int err = try_connect(fd, addr); err != 0) {
    if (err == ENOENT || err == ECONNREFUSED) {
      return Status::unavailable("no nvmf-target listens on " + path + " (" + std::strerror(err) +
                                 ")");
    }
    return Status::from_errno("connect", err, path);
  }
  const Clock::time_point deadline = Clock::now() + timeout;
  auto wait_for = [&](short events) -> Status {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (n == 0)
      return Status::timeout("no answer from " + path + " within " +
                             std::to_string(timeout.count()) + " ms");
    if (n < 0) return Status::from_errno("poll", errno);
    return ok_status();
  };
  size_t sent = 0;
  while (sent < request.size()) {
    NVMF_RETURN_IF_ERROR(wait_for(POLLOUT));
    const ssize_t n =
        ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return Status::from_errno("send", errno, path);
    if (n > 0) sent += static_cast<size_t>(n);
  }
  RpcLimits limits;
  limits.max_message_bytes = size_t{256} << 20;  // an answer may be large (stats of many queues)
  limits.max_depth = 64;
  RpcFramer framer(limits);
  std::array<char, 65536> buf;
  std::string answer;
  for (;;) {
    switch (framer.next(&answer)) {
      case RpcFramer::Next::kMessage:
        return answer;
      case RpcFramer::Next::kError:
        return Status::io("unreadable answer from " + path + ": " + framer.error().message);
      case RpcFramer::Next::kNeedMore:
        break;
    }
    NVMF_RETURN_IF_ERROR(wait_for(POLLIN));
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n == 0) return Status::io(path + " closed the connection before answering");
    if (n < 0 && errno != EAGAIN && errno != EINTR) return Status::from_errno("recv", errno, path);
    if (n > 0) framer.feed({buf.data(), static_cast<size_t>(n)});
  }
}

}  // namespace nvmf::target
