// SPDX-License-Identifier: BSD-3-Clause
// Multipath I/O following ANA; see multipath.h.
#include "host/multipath.h"

#include <algorithm>

#include "common/log.h"
#include "common/nvme_status.h"
#include "host/ana.h"
#include "host/commands.h"

namespace nvmf::host {
namespace {

using Clock = std::chrono::steady_clock;

// Lower is better; kUnusable: no I/O on that path (inaccessible, persistent loss, change).
constexpr int kUnusable = 9;
int ana_rank(uint8_t state) {
  if (state == proto::kAnaOptimized) return 0;
  if (state == proto::kAnaNonOptimized) return 1;
  return kUnusable;
}

std::optional<uint8_t> path_sc(const Status& st) {
  if (!st.nvme_status()) return std::nullopt;
  if (status_sct(*st.nvme_status()) != proto::kSctPath) return std::nullopt;
  return status_sc(*st.nvme_status());
}

// An ANA path status: the path's ANA log is read again and the call goes elsewhere.
bool is_ana_error(const Status& st) {
  std::optional<uint8_t> sc = path_sc(st);
  return sc && (*sc == proto::kScAnaPersistentLoss || *sc == proto::kScAnaInaccessible ||
                *sc == proto::kScAnaTransition);
}

// Host Pathing Error: the host's own recovery failed the command (the association is lost).
bool is_host_path_error(const Status& st) {
  std::optional<uint8_t> sc = path_sc(st);
  return sc && *sc == proto::kScHostPathingError;
}

// The path is gone (transport failure, Host Pathing Error, any other path status): the call
// goes elsewhere and the path is reconnected.
bool is_lost_path(const Status& st) {
  return Controller::is_transport_error(st) || (path_sc(st) && !is_ana_error(st));
}

// A Controller as a path.
class ControllerPath : public PathIo {
 public:
  ControllerPath(std::unique_ptr<Controller> c, std::string name)
      : c_(std::move(c)), name_(std::move(name)) {}
  Status write(uint64_t slba, std::span<const DataSegment> segments) override {
    return noted(c_->write(slba, segments));
  }
  Status read(uint64_t slba, const DataSegment& segment) override {
    return noted(c_->read(slba, segment));
  }
  Status flush() override { return noted(c_->flush()); }
  bool live() const override { return c_->state() == ControllerState::kLive; }
  uint8_t ana_state() const override { return c_->ana_state(); }
  Status refresh_ana() override {
    return noted(c_->ana_reporting() ? c_->refresh_ana_log().status() : ok_status());
  }
  // The Controller's recovery thread reconnects a lost association (each path has
  // fast_io_fail_tmo 0: its commands fail over at once); this says whether it is live again. A
  // path lost in a way the recovery does not see by itself (the target answered Controller
  // Pathing Error: it freed the controller; the admin queue failed a read of the ANA log) has
  // its association dropped first, so that it reconnects.
  Status reconnect(bool* permanent) override {
    if (drop_.exchange(false)) c_->drop_association(Status::unavailable("path lost"));
    const ControllerState state = c_->state();
    *permanent = state == ControllerState::kDeleting;
    if (state == ControllerState::kLive && !c_->association_lost()) return ok_status();
    return Status::unavailable(std::string("path ") + name_ + ": the controller is " +
                               controller_state_name(state));
  }
  std::string name() const override { return name_; }
  Controller* controller() const { return c_.get(); }

 private:
  // A call that lost the path other than by the recovery's own Host Pathing Error: the
  // association is to be dropped (reconnect()).
  Status noted(Status st) {
    if (is_lost_path(st) && !is_host_path_error(st)) drop_.store(true);
    return st;
  }

  std::unique_ptr<Controller> c_;
  std::string name_;
  std::atomic<bool> drop_{false};
};

}  // namespace

const char* iopolicy_name(IoPolicy policy) {
  return policy == IoPolicy::kRoundRobin ? "round-robin" : "numa";
}

Result<IoPolicy> parse_iopolicy(std::string_view text) {
  if (text == "numa") return IoPolicy::kNuma;
  if (text == "round-robin") return IoPolicy::kRoundRobin;
  return Status::invalid_argument("--iopolicy '" + std::string(text) +
                                  "' is not one of numa, round-robin");
}

void PathEvents::notify() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  cv_.notify_all();
}

bool PathEvents::wait_change(uint64_t seen, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_until(lock, deadline, [&] { return generation() != seen; });
}

Multipath::Multipath(std::vector<std::unique_ptr<PathIo>> paths, IoPolicy policy, Timing timing,
                     std::shared_ptr<PathEvents> events)
    : policy_(policy), timing_(timing), events_(std::move(events)) {
  for (auto& io : paths) {
    auto p = std::make_unique<Path>();
    p->stats.path = io->name();
    p->io = std::move(io);
    paths_.push_back(std::move(p));
  }
  thread_ = std::thread([this] { path_thread(); });
}

Multipath::~Multipath() { stop(); }

void Multipath::stop() {
  {
    std::lock_guard<std::mutex> lock(thread_mutex_);
    stop_ = true;
  }
  thread_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int Multipath::choose() {
  int best = kUnusable;
  for (const auto& p : paths_) {
    if (p->down.load(std::memory_order_acquire) || !p->io->live()) continue;
    best = std::min(best, ana_rank(p->io->ana_state()));
  }
  if (best == kUnusable) return -1;
  const size_t n = paths_.size();
  const size_t from = policy_ == IoPolicy::kRoundRobin ? next_ : 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (from + k) % n;
    const Path& p = *paths_[i];
    if (p.down.load(std::memory_order_acquire) || !p.io->live()) continue;
    if (ana_rank(p.io->ana_state()) != best) continue;
    next_ = (i + 1) % n;
    return static_cast<int>(i);
  }
  return -1;
}

void Multipath::mark_down(Path& p) {
  p.down.store(true, std::memory_order_release);
  thread_cv_.notify_all();
}

template <typename Call>
Status Multipath::run(Op op, uint64_t bytes, Call&& call) {
  // No allocation, lock or clock read unless a path fails or none is usable.
  Clock::time_point start{};
  Status last = ok_status();  // the last path's error
  size_t failures = 0;        // since the last wait
  for (;;) {
    const uint64_t seen = events_->generation();
    const int i = failures < 2 * paths_.size() ? choose() : -1;
    if (i < 0) {
      if (start == Clock::time_point{}) start = Clock::now();
      if (last.ok()) {
        last = Status::nvme_error(make_status(proto::kSctPath, proto::kScHostPathingError),
                                  "Host Pathing Error: no usable path");
      }
      bool reconnecting = false;
      for (const auto& p : paths_) {
        reconnecting |= p->down.load(std::memory_order_acquire) && !p->dead.load();
      }
      const std::chrono::milliseconds bound = reconnecting ? timing_.hold : timing_.anatt;
      const Clock::time_point deadline =
          bound.count() < 0 ? Clock::time_point::max() : start + bound;
      if (Clock::now() >= deadline || !events_->wait_change(seen, deadline)) return last;
      failures = 0;
      continue;
    }
    Path& p = *paths_[i];
    Status st = call(*p.io);
    if (st.ok()) {
      switch (op) {
        case Op::kWrite:
          ++p.stats.writes;
          p.stats.bytes_written += bytes;
          break;
        case Op::kRead:
          ++p.stats.reads;
          p.stats.bytes_read += bytes;
          break;
        case Op::kFlush:
          ++p.stats.flushes;
          break;
      }
      return st;
    }
    if (start == Clock::time_point{}) start = Clock::now();
    if (is_ana_error(st)) {
      ++p.stats.ana_errors;
      last = st;
      ++failures;
      if (Status r = p.io->refresh_ana(); !r.ok()) {
        NVMF_LOG(WARN, "host") << "path " << p.stats.path << ": " << r.to_string();
        if (is_lost_path(r)) mark_down(p);
      }
      continue;
    }
    if (is_lost_path(st)) {
      ++p.stats.path_errors;
      last = st;
      ++failures;
      NVMF_LOG(WARN, "host") << "path " << p.stats.path << " lost (" << st.to_string()
                             << "): I/O goes to the other paths while it reconnects";
      mark_down(p);
      continue;
    }
    return st;
  }
}

Status Multipath::write(uint64_t slba, std::span<const DataSegment> segments) {
  return run(Op::kWrite, total_bytes(segments),
             [&](PathIo& io) { return io.write(slba, segments); });
}

Status Multipath::read(uint64_t slba, const DataSegment& segment) {
  return run(Op::kRead, segment.length, [&](PathIo& io) { return io.read(slba, segment); });
}

Status Multipath::flush() {
  return run(Op::kFlush, 0, [&](PathIo& io) { return io.flush(); });
}

std::vector<PathStats> Multipath::path_stats() const {
  std::vector<PathStats> out;
  for (const auto& p : paths_) {
    PathStats s = p->stats;
    s.live = !p->down.load(std::memory_order_acquire) && p->io->live();
    s.ana_state = ana_state_text(p->io->ana_state());
    s.reconnects = p->reconnects.load(std::memory_order_relaxed);
    out.push_back(std::move(s));
  }
  return out;
}

// Once a second, and when a path is marked down: one reconnect attempt (when the path's own
// reconnect_delay says one is due) on every path that is down and has not given up.
void Multipath::path_thread() {
  std::unique_lock<std::mutex> lock(thread_mutex_);
  while (!stop_) {
    thread_cv_.wait_for(lock, std::chrono::seconds(1));
    if (stop_) return;
    lock.unlock();
    for (const auto& p : paths_) {
      if (!p->down.load(std::memory_order_acquire) || p->dead.load()) continue;
      bool permanent = false;
      Status st = p->io->reconnect(&permanent);
      if (st.ok()) {
        p->reconnects.fetch_add(1, std::memory_order_relaxed);
        p->down.store(false, std::memory_order_release);
        NVMF_LOG(INFO, "host") << "path " << p->stats.path << " live again";
        events_->notify();
      } else if (permanent) {
        p->dead.store(true);
        NVMF_LOG(WARN, "host") << "path " << p->stats.path << " given up: " << st.to_string();
        events_->notify();
      }
    }
    lock.lock();
  }
}

Result<std::unique_ptr<MultipathController>> MultipathController::connect(
    const HostOptions& options, IoPolicy policy) {
  std::unique_ptr<MultipathController> m(new MultipathController());
  m->events_ = std::make_shared<PathEvents>();
  HostOptions base = options;
  base.failover_paths.clear();
  base.hostid = options.hostid ? *options.hostid : random_host_id();
  if (base.hostnqn.empty()) base.hostnqn = default_hostnqn(*base.hostid);
  base.pd = options.pd ? options.pd : std::make_shared<PdHolder>();
  base.async_events = true;
  base.fast_io_fail_tmo_s = 0;
  std::shared_ptr<PathEvents> events = m->events_;
  auto user_event = options.on_async_event;
  base.on_async_event = [events, user_event](const AsyncEvent& e) {
    events->notify();
    if (user_event) user_event(e);
  };
  std::vector<std::unique_ptr<PathIo>> paths;
  uint8_t anatt = 0;
  for (const TransportPath& tp : transport_paths(options)) {
    HostOptions o = base;
    o.traddr = tp.traddr;
    o.trsvcid = tp.trsvcid;
    const std::string name = tp.traddr + ":" + tp.trsvcid;
    Result<std::unique_ptr<Controller>> c = Controller::connect(o);
    if (!c.ok()) return std::move(c).status().annotate("path " + name);
    if (!m->controllers_.empty()) {
      const NamespaceInfo& a = m->controllers_.front()->namespace_info();
      const NamespaceInfo& b = (*c)->namespace_info();
      if (a.nsid != b.nsid || a.nsze != b.nsze || a.lba_size != b.lba_size) {
        return Status::invalid_argument("path " + name + " shows namespace " +
                                        std::to_string(b.nsid) + " of " + std::to_string(b.nsze) +
                                        " LBAs of " + std::to_string(b.lba_size) +
                                        " bytes, not the first path's");
      }
    }
    anatt = std::max(anatt, (*c)->identify_controller().anatt);
    m->controllers_.push_back(c->get());
    paths.push_back(std::make_unique<ControllerPath>(*std::move(c), name));
  }
  Multipath::Timing timing;
  timing.anatt = std::chrono::seconds(std::max<int>(1, anatt));
  const int hold =
      options.fast_io_fail_tmo_s >= 0 ? options.fast_io_fail_tmo_s : options.ctrl_loss_tmo_s;
  timing.hold = hold < 0 ? std::chrono::milliseconds(-1) : std::chrono::seconds(hold);
  m->engine_ = std::make_unique<Multipath>(std::move(paths), policy, timing, m->events_);
  return m;
}

MultipathController::~MultipathController() { (void)disconnect(); }

Result<verbs::RegisteredBuffer> MultipathController::allocate_buffer(size_t bytes) {
  return controllers_.front()->allocate_buffer(bytes);
}

Result<verbs::RegisteredBuffer> MultipathController::register_buffer(void* addr, size_t length) {
  return controllers_.front()->register_buffer(addr, length);
}

Status MultipathController::disconnect() {
  Status first = ok_status();
  if (!engine_) return first;
  engine_->stop();  // the path thread no longer reconnects a path being disconnected here
  for (Controller* c : controllers_) {
    Status st = c->disconnect();
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

}  // namespace nvmf::host
