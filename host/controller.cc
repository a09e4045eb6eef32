// SPDX-License-Identifier: BSD-3-Clause
// The host controller association; see controller.h.
#include "host/controller.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/log.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "host/auth.h"
#include "host/bringup.h"
#include "host/discover.h"
#include "host/keep_alive_schedule.h"
#include "host/log_reads.h"
#include "host/queue.h"

namespace nvmf::host {
namespace {

// Commands one synchronous call keeps in flight at most (bounded by the queue's depth too).
constexpr size_t kMaxPipeline = 32;

// Adds one connection's (or the dropped connections') capsule counters to the totals.
void add_capsules(HostStats& s, const QueueCounters& c) {
  s.capsules_inline += c.capsules_inline;
  s.capsules_by_reference += c.capsules_by_reference;
  s.capsules_with_in_capsule_data += c.capsules_with_in_capsule_data;
}

std::string at_lba(const char* verb, uint64_t slba) {
  return std::string(verb) + " at LBA " + std::to_string(slba);
}

// The commands of one synchronous call (Controller::transfer): each command's callback argument
// is one of `commands`, back on the free stack when it completes.
struct SyncTransfer {
  struct Command {
    SyncTransfer* transfer = nullptr;
    uint64_t slba = 0;
  };
  std::array<Command, kMaxPipeline> commands{};
  std::array<uint8_t, kMaxPipeline> free{};
  size_t n_free = 0;
  uint32_t outstanding = 0;
  bool failed = false;  // the first failed command's status and LBA
  uint16_t status = 0;
  uint64_t slba = 0;

  SyncTransfer() {
    for (size_t i = 0; i < kMaxPipeline; ++i) {
      commands[i].transfer = this;
      free[n_free++] = static_cast<uint8_t>(kMaxPipeline - 1 - i);
    }
  }
  static void done(void* arg, const IoCompletion& c) {
    auto* cmd = static_cast<Command*>(arg);
    SyncTransfer& t = *cmd->transfer;
    --t.outstanding;
    t.free[t.n_free++] = static_cast<uint8_t>(cmd - t.commands.data());
    if (c.status != 0 && !t.failed) {
      t.failed = true;
      t.status = c.status;
      t.slba = cmd->slba;
    }
  }
};

bool is_path_error_status(uint16_t status) {
  return status_sct(status) == proto::kSctPath && status_sc(status) == proto::kScHostPathingError;
}

}  // namespace

// The IoQueueLink of io_queue(): what the recovery thread tells the IoQueues, and the losses
// they report to it.
class Controller::AsyncLink : public IoQueueLink {
 public:
  explicit AsyncLink(size_t queues) : pending(queues) {}
  const std::atomic<uint64_t>& generation() const override { return gen; }
  Update update(size_t index) override {
    std::lock_guard<std::mutex> lock(m);
    Update u;
    u.generation = gen.load(std::memory_order_relaxed);
    u.state = state;
    if (index < pending.size()) u.channel = std::move(pending[index]);
    return u;
  }
  void report_loss(size_t, uint64_t generation, const Status& why) override {
    std::lock_guard<std::mutex> lock(m);
    if (generation != gen.load(std::memory_order_relaxed) || state != LinkState::kLive ||
        loss_requested) {
      return;  // a loss already known, or an older association's
    }
    loss_requested = true;
    loss_why = why;
    cv.notify_all();
  }
  void wait_for_change(uint64_t generation, Deadline deadline) override {
    std::unique_lock<std::mutex> lock(m);
    cv.wait_until(lock, deadline,
                  [&] { return stop || gen.load(std::memory_order_relaxed) != generation; });
  }
  void count_resubmission(size_t) override { resubmitted.fetch_add(1, std::memory_order_relaxed); }
  void channel_dropped(size_t, const IoChannel& channel) override {
    const QueueCounters c = channel.capsule_counters();
    std::lock_guard<std::mutex> lock(m);
    dropped += c;
  }
  // m held: the state and why I/O fails in it (kFailFast, kDeleted).
  void fail_locked(LinkState s, std::string why) {
    fail_why = std::move(why);
    set_locked(s);
  }
  // m held: the new state, told to every IoQueue (the generation moves).
  void set_locked(LinkState s) {
    state = s;
    gen.fetch_add(1, std::memory_order_acq_rel);
    cv.notify_all();
  }

  std::mutex m;
  std::condition_variable cv;
  std::atomic<uint64_t> gen{1};
  LinkState state = LinkState::kLive;
  // The connection of each IoQueue on the newest association, until it takes it.
  std::vector<std::unique_ptr<IoChannel>> pending;
  bool loss_requested = false;
  Status loss_why;
  bool stop = false;
  bool fail_fast = false;  // fail_held_io(): a lost association fails its commands at once
  std::string fail_why;    // why commands fail with Host Pathing Error (kFailFast, kDeleted)
  // reset(): asked by the caller, done by the recovery thread (with its result).
  uint64_t resets_requested = 0;
  uint64_t resets_done = 0;
  Status reset_result;
  std::atomic<uint64_t> resubmitted{0};  // commands the IoQueues sent again
  QueueCounters dropped;                 // of the connections the IoQueues dropped
};

const char* controller_state_name(ControllerState state) {
  switch (state) {
    case ControllerState::kNew:
      return "new";
    case ControllerState::kLive:
      return "live";
    case ControllerState::kResetting:
      return "resetting";
    case ControllerState::kConnecting:
      return "connecting";
    case ControllerState::kDeleting:
      return "deleting";
  }
  return "unknown";
}

Controller::Controller(const HostOptions& options)
    : options_(options),
      hostid_(options.hostid ? *options.hostid : random_host_id()),
      pd_(options.pd ? options.pd : std::make_shared<PdHolder>()) {
  hostnqn_ = options.hostnqn.empty() ? default_hostnqn(hostid_) : options.hostnqn;
  paths_ = transport_paths(options);
}

Controller::~Controller() {
  (void)disconnect();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status Controller::start_io_queues() {
  if (io_queues_.empty()) return Status::unavailable("connect: no I/O queue");
  auto link = std::make_unique<AsyncLink>(io_queues_.size());
  // A Keep Alive failed before: the connections are those of a lost association.
  const bool lost = keep_alive_lost_.load(std::memory_order_relaxed);
  if (lost) {
    link->state = LinkState::kReconnecting;
    link->loss_requested = true;
    link->loss_why = Status::unavailable("Keep Alive failed");
  }
  for (size_t i = 0; i < io_queues_.size(); ++i) {
    IoQueue::Params p;
    p.index = i;
    p.nsid = identify_.ns.nsid;
    p.limits = limits_;
    p.command_timeout = std::chrono::milliseconds(options_.timeout_ms);
    async_queues_.push_back(std::make_unique<IoQueue>(
        p, *link, lost ? std::unique_ptr<IoChannel>() : std::move(io_queues_[i])));
  }
  {
    // The connections moved into the IoQueues keep their counters (stats() reads them there);
    // those of a lost association are kept here before they go.
    std::lock_guard<std::mutex> lock(admin_mutex_);  // stats_locked() reads io_queues_
    if (lost) stats_ = stats_locked();
    io_queues_.clear();
  }
  link_ = std::move(link);
  publish_recovery();
  async_.store(link_.get(), std::memory_order_release);
  recovery_thread_ = std::thread([this] { recovery_loop(); });
  // A Keep Alive that failed while the queues were handed over.
  if (!lost && keep_alive_lost_.load(std::memory_order_relaxed)) {
    link_->report_loss(SIZE_MAX, link_->gen.load(std::memory_order_acquire),
                       Status::unavailable("Keep Alive failed"));
  }
  return ok_status();
}

Result<IoQueue*> Controller::io_queue(size_t index) {
  if (index >= async_queues_.size()) {
    return Status::invalid_argument("io_queue " + std::to_string(index) + ": " +
                                    std::to_string(async_queues_.size()) + " I/O queues");
  }
  return async_queues_[index].get();
}

bool Controller::association_lost() const {
  std::lock_guard<std::mutex> lock(link_->m);
  return link_->loss_requested || link_->state != LinkState::kLive;
}

void Controller::drop_association(const Status& why) {
  if (AsyncLink* link = async_.load(std::memory_order_acquire)) {
    link->report_loss(SIZE_MAX, link->gen.load(std::memory_order_acquire), why);
  }
}

void Controller::fail_held_io() {
  AsyncLink* link = async_.load(std::memory_order_acquire);
  if (link == nullptr) return;
  std::lock_guard<std::mutex> lock(link->m);
  link->fail_fast = true;
  if (link->state == LinkState::kReconnecting) {
    link->fail_locked(LinkState::kFailFast, "the program is ending while reconnecting");
  }
}

void Controller::mark_keep_alive_lost(const Status& why) {
  keep_alive_lost_.store(true, std::memory_order_relaxed);
  if (AsyncLink* link = async_.load(std::memory_order_acquire)) {
    link->report_loss(SIZE_MAX, link->gen.load(std::memory_order_acquire), why);
  }
}

void Controller::publish_recovery() {
  std::lock_guard<std::mutex> lock(recovery_snapshot_mutex_);
  recovery_snapshot_ = recovery_;
}

void Controller::recovery_loop() {
  for (;;) {
    bool reset = false;
    {
      std::unique_lock<std::mutex> lock(link_->m);
      link_->cv.wait(lock, [&] {
        return link_->stop || link_->loss_requested ||
               link_->resets_requested != link_->resets_done;
      });
      if (link_->stop) return;
      reset = !link_->loss_requested;
    }
    if (reset) {
      reset_async();
      continue;
    }
    if (recover_async()) continue;
    // Deleted: a reset still asked for cannot be done.
    std::lock_guard<std::mutex> lock(link_->m);
    link_->reset_result = Status::unavailable("reset: the controller was deleted");
    link_->resets_done = link_->resets_requested;
    link_->cv.notify_all();
    return;
  }
}

void Controller::reset_async() {
  AsyncLink& link = *link_;
  {
    // The IoQueues drop their connections at their next look and hold new commands.
    std::lock_guard<std::mutex> lock(link.m);
    for (auto& p : link.pending) p.reset();
    link.set_locked(LinkState::kReconnecting);
  }
  // Linux nvme_rdma_reset_ctrl_work: stop, delete the I/O queues, CC.EN 0, drop the admin
  // queue, then set the controller up again (state connecting) and live.
  set_state(ControllerState::kResetting);
  stop_keep_alive();
  Status st;
  {
    std::lock_guard<std::mutex> lock(admin_mutex_);
    stats_ = stats_locked();
    io_queues_.clear();
    if (admin_ && enabled_) st = disable_controller(*admin_, cc_, cap_);
    admin_.reset();
    enabled_ = false;
  }
  if (!st.ok()) NVMF_LOG(WARN, "host") << "reset: " << st.to_string();
  set_state(ControllerState::kConnecting);
  const NamespaceInfo before = identify_.ns;
  Status up = connect_association();
  if (up.ok() && (identify_.ns.lba_size != before.lba_size || identify_.ns.nsze != before.nsze)) {
    teardown_queues();
    up = Status::io("namespace " + std::to_string(before.nsid) + " changed across the reset");
  }
  if (up.ok() && io_queues_.size() < async_queues_.size()) {
    teardown_queues();
    up = Status::io("the controller has " + std::to_string(io_queues_.size()) +
                    " I/O queues after the reset, the IoQueues " +
                    std::to_string(async_queues_.size()));
  }
  std::vector<std::unique_ptr<Queue>> fresh;
  if (up.ok()) {
    ++recovery_.resets;
    set_state(ControllerState::kLive);
    NVMF_LOG(INFO, "host") << "reset: live again, cntlid " << cntlid_ << " on " << recovery_.path;
    std::lock_guard<std::mutex> lock(admin_mutex_);  // stats_locked() reads io_queues_
    fresh.swap(io_queues_);
  }
  publish_recovery();
  std::lock_guard<std::mutex> lock(link.m);
  if (link.stop) {
    // disconnect() is stopping the controller: the new connections go with `fresh`.
  } else if (up.ok()) {
    for (size_t i = 0; i < link.pending.size(); ++i) link.pending[i] = std::move(fresh[i]);
    link.set_locked(LinkState::kLive);
  } else {
    // Not set up again: a loss, recovered as any other (the next round of recovery_loop()).
    link.loss_requested = true;
    link.loss_why = up;
  }
  link.reset_result = up.annotate("reset");
  link.resets_done = link.resets_requested;
  link.cv.notify_all();
}

bool Controller::recover_async() {
  using Clock = std::chrono::steady_clock;
  AsyncLink& link = *link_;
  Status why;
  {
    std::lock_guard<std::mutex> lock(link.m);
    why = link.loss_why;
    link.loss_requested = false;
    for (auto& p : link.pending) p.reset();  // an association no IoQueue took: gone with it
    link.set_locked(link.fail_fast ? LinkState::kFailFast : LinkState::kReconnecting);
    // A reset asked for meanwhile is not done: the association is being recovered instead.
    if (link.resets_requested != link.resets_done) {
      link.reset_result = Status::unavailable("reset: the association was lost (" +
                                              why.to_string() + "); reconnecting");
      link.resets_done = link.resets_requested;
    }
  }
  // The IoQueues drop their connections when they see the generation move; the target frees
  // the controller once its admin queue goes, and with it the I/O queues.
  begin_loss(why);
  publish_recovery();
  const auto delay = std::chrono::seconds(std::max(1, options_.reconnect_delay_s));
  const Clock::time_point loss_deadline = after_loss(options_.ctrl_loss_tmo_s);
  const Clock::time_point fast_deadline = after_loss(options_.fast_io_fail_tmo_s);
  const NamespaceInfo before = identify_.ns;
  auto give_up = [&](const std::string& message) {
    set_state(ControllerState::kDeleting);
    deleted_by_loss_ = true;
    ++recovery_.path_errors;  // I/O fails from now on (command_status() names why)
    NVMF_LOG(WARN, "host") << message << ": controller deleted";
    publish_recovery();
    std::lock_guard<std::mutex> lock(link.m);
    link.fail_locked(LinkState::kDeleted, "controller deleted: " + message);
    return false;
  };
  if (options_.ctrl_loss_tmo_s == 0) return give_up("ctrl-loss-tmo 0: no reconnect");
  for (;;) {
    Clock::time_point now = Clock::now();
    if (now >= next_attempt_) {
      std::string message;
      Attempt a = attempt_reconnect(before, loss_deadline, delay, message);
      if (a == Attempt::kGiveUp) return give_up(message);
      publish_recovery();
      if (a == Attempt::kRetry) continue;
      std::vector<std::unique_ptr<Queue>> fresh;
      {
        std::lock_guard<std::mutex> lock(admin_mutex_);  // stats_locked() reads io_queues_
        fresh.swap(io_queues_);
      }
      // Each IoQueue takes its new connection and sends its held commands again (none when
      // disconnect() is stopping the controller: the connections go with `fresh`).
      std::lock_guard<std::mutex> lock(link.m);
      if (link.stop) return false;
      for (size_t i = 0; i < link.pending.size(); ++i) link.pending[i] = std::move(fresh[i]);
      link.set_locked(LinkState::kLive);
      return true;
    }
    std::unique_lock<std::mutex> lock(link.m);
    if (now >= fast_deadline && link.state == LinkState::kReconnecting) {
      ++recovery_.path_errors;
      link.fail_locked(LinkState::kFailFast, "fast-io-fail-tmo " +
                                                 std::to_string(options_.fast_io_fail_tmo_s) +
                                                 " s passed while reconnecting");
      publish_recovery();
    }
    const Clock::time_point until = link.state == LinkState::kReconnecting
                                        ? std::min(next_attempt_, fast_deadline)
                                        : next_attempt_;
    link.cv.wait_until(lock, until, [&] { return link.stop; });
    if (link.stop) return false;
  }
}

Result<std::unique_ptr<Controller>> Controller::connect(const HostOptions& options) {
  if (options.traddr.empty()) return Status::invalid_argument("no target address (traddr)");
  if (options.subnqn.empty()) return Status::invalid_argument("no subsystem NQN");
  if (options.num_io_queues < 1) return Status::invalid_argument("num_io_queues must be >= 1");
  std::unique_ptr<Controller> c(new Controller(options));
  for (const TransportPath& p : c->paths_) {
    if (p.traddr.empty()) return Status::invalid_argument("a failover path has no traddr");
  }
  NVMF_RETURN_IF_ERROR(c->connect_round(0));
  c->state_.store(ControllerState::kLive, std::memory_order_release);
  NVMF_RETURN_IF_ERROR(c->start_io_queues());
  return c;
}

Status Controller::connect_round(size_t first) {
  const size_t n = paths_.size();
  Status last = ok_status();
  for (size_t i = 0; i < n; ++i) {
    path_index_ = (first + i) % n;
    const TransportPath& p = paths_[path_index_];
    last = connect_association();
    if (last.ok()) return last;
    if (n > 1) {
      NVMF_LOG(WARN, "host") << "path " << p.traddr << ":" << p.trsvcid
                             << " failed: " << last.to_string();
    }
  }
  return last;
}

Status Controller::connect_association() {
  recovery_.path = paths_[path_index_].traddr + ":" + paths_[path_index_].trsvcid;
  Status st = connect_admin();
  if (st.ok()) st = connect_io_queues();
  if (!st.ok()) {
    teardown_queues();
    return st;
  }
  start_keep_alive();
  return ok_status();
}

void Controller::teardown_queues() {
  stop_keep_alive();
  std::lock_guard<std::mutex> lock(admin_mutex_);
  stats_ = stats_locked();  // keep the queues' capsule counters
  io_queues_.clear();       // each rdma_disconnects, then destroys QP, MRs, CQ, CM id
  admin_.reset();
  enabled_ = false;
}

void Controller::begin_loss(const Status& why) {
  auto now = std::chrono::steady_clock::now();
  set_state(ControllerState::kConnecting);
  lost_at_ = now;
  lost_path_ = path_index_;
  // With another path to go to, the first round starts at once (failover); one path waits.
  next_attempt_ =
      paths_.size() > 1 ? now : now + std::chrono::seconds(std::max(1, options_.reconnect_delay_s));
  if (options_.ctrl_loss_tmo_s >= 0) {
    next_attempt_ = std::min(next_attempt_, now + std::chrono::seconds(options_.ctrl_loss_tmo_s));
  }
  ++recovery_.losses;
  recovery_.last_loss = why.to_string();
  NVMF_LOG(WARN, "host") << "cntlid " << cntlid_ << " on " << recovery_.path
                         << ": association lost (" << why.to_string() << "): "
                         << (paths_.size() > 1
                                 ? "trying the other paths"
                                 : "reconnecting in " +
                                       std::to_string(std::max(1, options_.reconnect_delay_s)) +
                                       " s");
  teardown_queues();
  keep_alive_lost_.store(false, std::memory_order_relaxed);
}

void Controller::set_state(ControllerState state) {
  ControllerState before = state_.exchange(state, std::memory_order_acq_rel);
  if (before != state && before != ControllerState::kNew && options_.on_state_change) {
    options_.on_state_change(controller_state_name(state));
  }
}

Status Controller::reset() {
  if (state() != ControllerState::kLive) {
    return Status::unavailable(std::string("reset: the controller is ") +
                               controller_state_name(state()) + ", not live");
  }
  AsyncLink& link = *link_;
  std::unique_lock<std::mutex> lock(link.m);
  if (link.state != LinkState::kLive || link.loss_requested || link.stop) {
    return Status::unavailable("reset: the association is lost; the controller is reconnecting");
  }
  const uint64_t ticket = ++link.resets_requested;
  link.cv.notify_all();
  link.cv.wait(lock, [&] { return link.stop || link.resets_done >= ticket; });
  if (link.resets_done < ticket) return Status::unavailable("reset: the controller was deleted");
  return link.reset_result;
}

Controller::Clock::time_point Controller::after_loss(int seconds) const {
  return seconds < 0 ? Clock::time_point::max() : lost_at_ + std::chrono::seconds(seconds);
}

Controller::Attempt Controller::attempt_reconnect(const NamespaceInfo& before,
                                                  Clock::time_point loss_deadline,
                                                  std::chrono::seconds delay, std::string& why) {
  ++recovery_.reconnect_attempts;
  Status st = connect_round((path_index_ + 1) % paths_.size());
  if (st.ok() && (identify_.ns.lba_size != before.lba_size || identify_.ns.nsze != before.nsze)) {
    teardown_queues();
    why = "namespace " + std::to_string(before.nsid) +
          " changed across the reconnect (LBA size or size)";
    return Attempt::kGiveUp;
  }
  if (st.ok() && io_queues_.size() < async_queues_.size()) {
    teardown_queues();
    why = "the new association has " + std::to_string(io_queues_.size()) + " I/O queues, the " +
          "IoQueues " + std::to_string(async_queues_.size());
    return Attempt::kGiveUp;
  }
  if (st.ok()) {
    set_state(ControllerState::kLive);
    ++recovery_.reconnects;
    if (path_index_ != lost_path_) ++recovery_.failovers;
    auto outage = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - lost_at_);
    recovery_.longest_outage_ms =
        std::max<uint64_t>(recovery_.longest_outage_ms, static_cast<uint64_t>(outage.count()));
    NVMF_LOG(WARN, "host") << "reconnected after " << outage.count() << " ms (attempt "
                           << recovery_.reconnect_attempts << "), cntlid " << cntlid_ << " on "
                           << recovery_.path;
    return Attempt::kLive;
  }
  NVMF_LOG(WARN, "host") << "reconnect attempt " << recovery_.reconnect_attempts
                         << " failed: " << st.to_string();
  // A Connect answered with DNR (the host is no longer allowed, the subsystem is gone) fails
  // the same way every time: no more attempts (Linux 6.10's nvmf_should_reconnect).
  if (st.nvme_status().has_value() && status_dnr(*st.nvme_status())) {
    why = "the target refused the reconnect with Do Not Retry (" + st.message() + ")";
    return Attempt::kGiveUp;
  }
  const Clock::time_point now = Clock::now();
  if (now >= loss_deadline) {
    why = "ctrl-loss-tmo " + std::to_string(options_.ctrl_loss_tmo_s) +
          " s passed without a reconnect";
    return Attempt::kGiveUp;
  }
  // Every reconnect_delay, and a last attempt when ctrl-loss-tmo runs out (Linux tries
  // ceil(ctrl_loss_tmo / reconnect_delay) times).
  next_attempt_ = std::min(now + delay, loss_deadline);
  return Attempt::kRetry;
}

RecoveryStats Controller::recovery_stats() const {
  AsyncLink* link = async_.load(std::memory_order_acquire);
  if (link == nullptr) return recovery_;
  std::lock_guard<std::mutex> lock(recovery_snapshot_mutex_);
  RecoveryStats r = recovery_snapshot_;
  r.retried_transfers = link->resubmitted.load(std::memory_order_relaxed);
  return r;
}

bool Controller::is_transport_error(const Status& st) {
  return st.code() == StatusCode::kIo || st.code() == StatusCode::kUnavailable ||
         st.code() == StatusCode::kTimeout;
}

void Controller::start_keep_alive() {
  const bool keep_alive = options_.kato_ms != 0 && options_.send_keep_alive;
  if ((!keep_alive && !options_.async_events) || keep_alive_thread_.joinable()) return;
  auto interval = std::chrono::milliseconds(std::max<uint32_t>(1, options_.kato_ms / 2));
  keep_alive_stop_ = false;
  if (!options_.async_events) {
    keep_alive_thread_ = std::thread([this, interval] { keep_alive_loop(interval); });
    return;
  }
  {
    std::lock_guard<std::mutex> lock(admin_mutex_);
    aer_slot_.reset();
    if (Status st = post_aer_locked(); !st.ok()) {
      NVMF_LOG(WARN, "host") << "cntlid " << cntlid_ << ": " << st.to_string();
    }
  }
  keep_alive_thread_ =
      std::thread([this, interval, keep_alive] { admin_loop(interval, keep_alive); });
}

void Controller::stop_keep_alive() {
  if (!keep_alive_thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(keep_alive_mutex_);
    keep_alive_stop_ = true;
  }
  keep_alive_cv_.notify_all();
  wake_admin_thread();
  keep_alive_thread_.join();
}

Status Controller::post_aer_locked() {
  proto::Sqe sqe{};
  sqe.opcode = proto::kAdminAsyncEventRequest;
  sqe.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(sqe.dptr);
  Result<uint16_t> slot = admin_->post(sqe, {});
  if (!slot.ok()) return std::move(slot).status().annotate("Asynchronous Event Request");
  aer_slot_ = *slot;
  return ok_status();
}

void Controller::wake_admin_thread() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void Controller::nudge_admin_thread_locked() {
  if (aer_slot_ && admin_ && admin_->slot_done(*aer_slot_)) wake_admin_thread();
}

void Controller::store_ana_log(AnaLog log) {
  const uint32_t grpid = identify_.ns.anagrpid;
  uint8_t state = proto::kAnaInaccessible;
  for (const AnaGroup& g : log.groups) {
    if (g.grpid == grpid) state = g.state;
  }
  {
    std::lock_guard<std::mutex> lock(ana_mutex_);
    ana_log_ = std::move(log);
  }
  ana_state_.store(state, std::memory_order_release);
  ana_generation_.fetch_add(1, std::memory_order_acq_rel);
}

AnaLog Controller::ana_log() const {
  std::lock_guard<std::mutex> lock(ana_mutex_);
  return ana_log_;
}

Result<AnaLog> Controller::refresh_ana_log() {
  std::lock_guard<std::mutex> lock(admin_mutex_);
  if (!admin_) return Status::unavailable("controller is not connected");
  if (!ana_reporting()) return Status::unavailable("the controller reports no ANA (CMIC bit 3)");
  Result<AnaLog> log = read_ana_log(*admin_, identify_.ctrl);
  nudge_admin_thread_locked();
  if (!log.ok()) return log;
  store_ana_log(*log);
  return log;
}

Result<AsyncEvent> Controller::take_event_locked() {
  AsyncEvent event;
  event.type = 0xFF;
  if (!aer_slot_ || !admin_->slot_done(*aer_slot_)) return event;
  const proto::Cqe cqe = admin_->release_slot(*aer_slot_);
  aer_slot_.reset();
  if (!status_is_success(cqe.status)) {
    // Aborted (a shutdown, the AER limit): no event, and no further request on this queue.
    return cqe_status(cqe, "Asynchronous Event Request");
  }
  async_events_.fetch_add(1, std::memory_order_relaxed);
  event.type = static_cast<uint8_t>(cqe.dw0 & 0x7);
  event.info = static_cast<uint8_t>((cqe.dw0 >> 8) & 0xFF);
  event.log_page = static_cast<uint8_t>((cqe.dw0 >> 16) & 0xFF);
  Status read = ok_status();
  if (event.log_page == proto::kLogAna && ana_reporting()) {
    Result<AnaLog> log = read_ana_log(*admin_, identify_.ctrl);
    if (log.ok()) store_ana_log(*std::move(log));
    read = log.status();
  } else if (event.log_page != 0) {
    // Reading the page (RAE 0) is what enables the event's type again (Base 2.0 §5.2).
    std::array<uint8_t, 4096> page{};
    Result<proto::Cqe> got =
        admin_->run(get_log_page_sqe(event.log_page, page.size(), 0), {}, page, false);
    read = got.ok() ? cqe_status(*got, "Get Log Page") : got.status();
    if (read.ok() && event.log_page == proto::kLogChangedNamespaceList) {
      event.changed_nsids = decode_nsid_list(page);
      Result<std::vector<NamespaceChange>> found =
          rescan_namespaces(*admin_, known_namespaces_, event.changed_nsids);
      if (found.ok()) event.namespaces = *std::move(found);
      read = found.status();
    }
  }
  if (!read.ok()) {
    NVMF_LOG(WARN, "host") << "cntlid " << cntlid_ << ": log page " << int{event.log_page}
                           << " of an asynchronous event: " << read.to_string();
  }
  NVMF_RETURN_IF_ERROR(post_aer_locked());
  return event;
}

// The admin thread with asynchronous events: sleeps on the admin queue's completion and CM
// channels and the wake eventfd, until the next Keep Alive is due (KeepAliveSchedule, as
// keep_alive_loop()). Transport errors report the association lost to the recovery thread, as
// a failed Keep Alive does; the thread then only keeps the Keep Alive schedule (which fails too).
void Controller::admin_loop(std::chrono::milliseconds interval, bool keep_alive) {
  using Clock = std::chrono::steady_clock;
  KeepAliveSchedule schedule(interval, Clock::now());
  bool logged = false;
  bool queue_failed = false;
  auto report = [&](const Status& st) {
    if (is_transport_error(st)) {
      mark_keep_alive_lost(st);
      queue_failed = true;
    }
    if (!logged) {
      NVMF_LOG(WARN, "host") << "cntlid " << cntlid_ << ": " << st.to_string();
      logged = true;
    }
  };
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(keep_alive_mutex_);
      if (keep_alive_stop_) return;
    }
    pollfd fds[3];
    {
      std::lock_guard<std::mutex> lock(admin_mutex_);
      admin_->wait_fds(fds);
    }
    if (queue_failed) fds[0].fd = fds[1].fd = -1;
    fds[2] = {wake_fd_, POLLIN, 0};
    const int timeout = keep_alive ? remaining_ms(schedule.deadline()) : -1;
    if (::poll(fds, 3, timeout) < 0 && errno != EINTR) {
      report(Status::from_errno("poll(admin queue)", errno));
      continue;
    }
    if (fds[2].revents != 0) {
      uint64_t count;
      (void)!::read(wake_fd_, &count, sizeof(count));
    }
    {
      std::lock_guard<std::mutex> lock(keep_alive_mutex_);
      if (keep_alive_stop_) return;
    }
    AsyncEvent event;
    event.type = 0xFF;
    if (!queue_failed) {
      std::lock_guard<std::mutex> lock(admin_mutex_);
      Status st = admin_->after_wait(fds, Clock::now() + std::chrono::hours(1));
      if (st.ok()) st = admin_->poll_completions().status();
      Result<AsyncEvent> taken = st.ok() ? take_event_locked() : Result<AsyncEvent>(st);
      if (taken.ok()) {
        event = *std::move(taken);
      } else {
        report(taken.status());
      }
    }
    if (event.type != 0xFF && options_.on_async_event) options_.on_async_event(event);
    if (!keep_alive || Clock::now() < schedule.deadline()) continue;
    Status st = this->keep_alive();
    schedule.advance(Clock::now());
    if (st.ok()) {
      keep_alives_.fetch_add(1, std::memory_order_relaxed);
    } else {
      keep_alive_failures_.fetch_add(1, std::memory_order_relaxed);
      report(st);
    }
  }
}

// Every `interval` (KATO / 2) until stopped: one Keep Alive, due one interval after the previous
// one was due (KeepAliveSchedule: its round trip does not delay the next). A failure is counted
// and logged once; the next rounds try again (a failed admin queue fails them at once).
void Controller::keep_alive_loop(std::chrono::milliseconds interval) {
  std::unique_lock<std::mutex> lock(keep_alive_mutex_);
  bool logged = false;
  KeepAliveSchedule schedule(interval, std::chrono::steady_clock::now());
  while (
      !keep_alive_cv_.wait_until(lock, schedule.deadline(), [this] { return keep_alive_stop_; })) {
    lock.unlock();
    Status st = keep_alive();
    lock.lock();
    schedule.advance(std::chrono::steady_clock::now());
    if (st.ok()) {
      keep_alives_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    keep_alive_failures_.fetch_add(1, std::memory_order_relaxed);
    if (is_transport_error(st)) mark_keep_alive_lost(st);
    if (!logged) {
      NVMF_LOG(WARN, "host") << "cntlid " << cntlid_ << ": " << st.to_string();
      logged = true;
    }
  }
}

Status Controller::connect_admin() {
  QueueParams params = queue_params(options_, paths_[path_index_], 0, kAdminQueueSize);
  // The admin thread sleeps on the admin queue's completion channel for events.
  if (options_.async_events) params.poll_mode = PollMode::kEvent;
  if (options_.async_events && wake_fd_ < 0) {
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) return Status::from_errno("eventfd (admin thread)", errno);
  }
  NVMF_ASSIGN_OR_RETURN(admin_, Queue::connect(params, pd_->pd));
  NVMF_ASSIGN_OR_RETURN(proto::ConnectData data,
                        connect_data(hostid_, proto::kAdminQueueCntlid, options_.subnqn, hostnqn_));
  bool atr = false;
  NVMF_ASSIGN_OR_RETURN(cntlid_, fabrics_connect(*admin_, 0, kAdminQueueSize, options_.kato_ms,
                                                 data, /*allow_in_capsule=*/false, &atr));
  if (atr) {
    NVMF_RETURN_IF_ERROR(authenticate(*admin_, 0, options_.dhchap, hostnqn_, options_.subnqn));
  } else if (options_.dhchap.ctrl) {
    // The user asked to check the controller: one that does not authenticate is not trusted.
    return Status::rejected(
        "the controller does not ask for authentication (no AUTHREQ.ATR), so it cannot be "
        "checked with --dhchap-ctrl-secret");
  }
  NVMF_ASSIGN_OR_RETURN(cap_, property_get(*admin_, proto::kPropCap, true));
  NVMF_ASSIGN_OR_RETURN(uint64_t vs, property_get(*admin_, proto::kPropVs, false));
  vs_ = static_cast<uint32_t>(vs);
  NVMF_RETURN_IF_ERROR(enable_controller(*admin_, cap_));
  cc_ = kCcEnable;
  enabled_ = true;
  NVMF_ASSIGN_OR_RETURN(identify_, identify_all(*admin_));
  if (options_.async_events) {
    // The notices acted on, as far as OAES offers them (Linux's nvme_enable_aen).
    const uint32_t aec =
        identify_.ctrl.oaes & (proto::kAecNamespaceAttribute | proto::kAecAnaChange);
    if (aec != 0) NVMF_RETURN_IF_ERROR(set_async_event_config(*admin_, aec));
    // What a Namespace Attribute Changed event is compared with (sizes of the first 64).
    NVMF_ASSIGN_OR_RETURN(known_namespaces_, scan_namespaces(*admin_, 64));
  }
  if (ana_reporting()) {
    Result<AnaLog> log = read_ana_log(*admin_, identify_.ctrl);
    if (!log.ok()) return std::move(log).status().annotate("ANA log");
    store_ana_log(*std::move(log));
  } else {
    ana_state_.store(proto::kAnaOptimized, std::memory_order_release);
  }
  return ok_status();
}

Status Controller::connect_io_queues() {
  NVMF_ASSIGN_OR_RETURN(uint16_t count, set_number_of_queues(*admin_, options_.num_io_queues));
  // Like Linux: clamp to CAP.MQES + 1 and to Identify MAXCMD (when set), with a warning.
  uint32_t mqes = static_cast<uint32_t>(cap_ & proto::kCapMqesMask) + 1;
  uint32_t limit = mqes;
  if (identify_.ctrl.maxcmd != 0) limit = std::min<uint32_t>(limit, identify_.ctrl.maxcmd);
  auto size = static_cast<uint16_t>(std::min<uint32_t>(options_.queue_size, limit));
  if (size != options_.queue_size) {
    NVMF_LOG(WARN, "host") << "I/O queue size " << options_.queue_size << " exceeds CAP.MQES+1 "
                           << mqes << " / MAXCMD " << identify_.ctrl.maxcmd << ": using " << size;
  }
  if (size < 2) {
    return Status::invalid_argument("I/O queue size " + std::to_string(size) + " (asked " +
                                    std::to_string(options_.queue_size) + ", CAP.MQES allows " +
                                    std::to_string(mqes) + ") is below 2");
  }
  NVMF_ASSIGN_OR_RETURN(proto::ConnectData data,
                        connect_data(hostid_, cntlid_, options_.subnqn, hostnqn_));
  for (uint16_t qid = 1; qid <= count; ++qid) {
    NVMF_ASSIGN_OR_RETURN(
        std::unique_ptr<Queue> q,
        Queue::connect(queue_params(options_, paths_[path_index_], qid, size), pd_->pd));
    q->set_in_capsule_policy(host_in_capsule_policy(identify_.ctrl, q->granted_max_send_sge()));
    bool atr = false;
    NVMF_RETURN_IF_ERROR(
        fabrics_connect(*q, qid, size, 0, data, /*allow_in_capsule=*/true, &atr).status());
    if (atr) {
      NVMF_RETURN_IF_ERROR(authenticate(*q, qid, options_.dhchap, hostnqn_, options_.subnqn));
    }
    io_queues_.push_back(std::move(q));
  }
  io_queue_size_ = size;
  io_queue_slots_ = io_queues_.front()->num_slots();
  limits_.lba_size = identify_.ns.lba_size;
  limits_.max_command_bytes = max_command_bytes(
      mdts_bytes(identify_.ctrl.mdts, cap_mpsmin_bytes(cap_)), identify_.ns.lba_size);
  limits_.in_capsule = io_queues_.front()->in_capsule_policy();
  return ok_status();
}

Result<verbs::RegisteredBuffer> Controller::register_buffer(void* addr, size_t length) {
  if (!pd_->pd) return Status::unavailable("controller is not connected");
  return verbs::RegisteredBuffer::register_memory(
      pd_->pd->get(), addr, length,
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
      "caller I/O buffer", pd_);
}

Result<verbs::RegisteredBuffer> Controller::allocate_buffer(size_t bytes) {
  if (!pd_->pd) return Status::unavailable("controller is not connected");
  return verbs::RegisteredBuffer::create(
      pd_->pd->get(), bytes, 4096,
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, "I/O buffer", pd_);
}

DataSegment segment_of(const verbs::RegisteredBuffer& buffer, size_t offset, size_t length) {
  return DataSegment{buffer.data() + offset, length, buffer.lkey(), buffer.rkey()};
}

Status Controller::command_status(uint16_t status, const std::string& what) const {
  if (status_is_success(status)) return ok_status();
  if (!is_path_error_status(status)) {
    proto::Cqe cqe{};
    cqe.status = status;
    return cqe_status(cqe, what);
  }
  std::string why;
  if (AsyncLink* link = async_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(link->m);
    why = link->fail_why;
  }
  if (why.empty()) why = "the association is lost";
  std::string last;
  {
    std::lock_guard<std::mutex> lock(recovery_snapshot_mutex_);
    last = recovery_snapshot_.last_loss;
  }
  return Status::nvme_error(make_status(proto::kSctPath, proto::kScHostPathingError),
                            what + ": Host Pathing Error: " + why + " (last loss: " + last + ")");
}

// Keeps up to kMaxPipeline commands in flight on io_queue(0); `submit` plans and submits the
// next command. Waits for all before returning the first error. No allocation on success.
template <typename Submit>
Status Controller::transfer(const char* verb, Submit&& submit) {
  if (state() == ControllerState::kDeleting && !deleted_by_loss_) {
    return Status::unavailable(std::string(verb) + ": controller is not connected");
  }
  // "Write at LBA 8: ..." for reads and writes, "Flush: ..." for a flush.
  const bool per_lba = std::string_view(verb) != "Flush";
  auto where = [&](uint64_t lba) { return per_lba ? at_lba(verb, lba) : std::string(verb); };
  IoQueue& q = *async_queues_.front();
  SyncTransfer t;
  const size_t window = std::min<size_t>(kMaxPipeline, q.depth());
  Status first_error;
  bool planning = true;
  while (planning || t.outstanding > 0) {
    while (planning && first_error.ok() && !t.failed && t.outstanding < window) {
      SyncTransfer::Command* cmd = &t.commands[t.free[--t.n_free]];
      Result<bool> more = submit(q, cmd->slba, &SyncTransfer::done, cmd);
      if (!more.ok()) {
        t.free[t.n_free++] = static_cast<uint8_t>(cmd - t.commands.data());
        const Status& st = more.status();
        first_error = st.nvme_status() && is_path_error_status(*st.nvme_status())
                          ? command_status(*st.nvme_status(), where(cmd->slba))
                          : Status(st).annotate(where(cmd->slba));
        break;
      }
      ++t.outstanding;
      planning = *more;
    }
    if (!first_error.ok() || t.failed) planning = false;
    if (t.outstanding == 0) break;
    // The callbacks point into `t`: every accepted command completes before this returns.
    Result<int> n = q.process_completions();
    if (!n.ok() && first_error.ok()) first_error = std::move(n).status().annotate(verb);
    if ((!n.ok() || *n == 0) && t.outstanding > 0) q.wait(Deadline::max());
  }
  if (first_error.ok() && t.failed) return command_status(t.status, where(t.slba));
  return first_error;
}

Status Controller::write(uint64_t slba, std::span<const DataSegment> segments) {
  // Planned with io_queue(0)'s limits: its thread's (the recovery thread writes limits_).
  const TransferLimits& limits = async_queues_.front()->limits();
  NVMF_RETURN_IF_ERROR(check_write_plan(segments, limits));  // nothing sent if it cannot be
  const uint64_t total = total_bytes(segments);
  TransferCursor cursor;
  return transfer(
      "Write", [&](IoQueue& q, uint64_t& lba, IoCallback cb, void* arg) -> Result<bool> {
        lba = slba + cursor.done / limits.lba_size;
        TransferCursor next = cursor;
        NVMF_ASSIGN_OR_RETURN(CommandPlan plan, next_write_command(segments, next, limits));
        NVMF_RETURN_IF_ERROR(q.submit_write_command(lba, plan, cb, arg));
        cursor = next;
        const bool in_capsule = plan.path == WritePath::kInCapsule;
        ++(in_capsule ? io_stats_.writes_in_capsule : io_stats_.writes_keyed);
        (in_capsule ? io_stats_.bytes_in_capsule : io_stats_.bytes_keyed) += plan.bytes;
        return cursor.done < total;
      });
}

Status Controller::read(uint64_t slba, const DataSegment& segment) {
  const TransferLimits& limits = async_queues_.front()->limits();
  NVMF_RETURN_IF_ERROR(validate_transfer(std::span<const DataSegment>(&segment, 1), limits));
  TransferCursor cursor;
  return transfer("Read", [&](IoQueue& q, uint64_t& lba, IoCallback cb, void* arg) -> Result<bool> {
    lba = slba + cursor.done / limits.lba_size;
    TransferCursor next = cursor;
    const CommandPlan plan = next_read_command(segment, next, limits);
    const DataSegment piece{static_cast<uint8_t*>(segment.addr) + cursor.done, plan.bytes,
                            segment.lkey, segment.rkey};
    NVMF_RETURN_IF_ERROR(q.submit_read(lba, piece, cb, arg));
    cursor = next;
    ++io_stats_.reads;
    io_stats_.bytes_read += plan.bytes;
    return cursor.done < segment.length;
  });
}

Status Controller::flush() {
  return transfer("Flush",
                  [&](IoQueue& q, uint64_t& lba, IoCallback cb, void* arg) -> Result<bool> {
                    lba = 0;
                    NVMF_RETURN_IF_ERROR(q.submit_flush(cb, arg));
                    ++io_stats_.flushes;
                    return false;
                  });
}

Status Controller::keep_alive() {
  std::lock_guard<std::mutex> lock(admin_mutex_);
  if (!admin_) return Status::unavailable("controller is not connected");
  Status st = host::keep_alive(*admin_);
  nudge_admin_thread_locked();
  return st;
}

Status Controller::disconnect() {
  set_state(ControllerState::kDeleting);
  if (link_) {
    {
      std::lock_guard<std::mutex> lock(link_->m);
      link_->stop = true;
      for (auto& p : link_->pending) p.reset();
      link_->set_locked(LinkState::kDeleted);
    }
    if (recovery_thread_.joinable()) recovery_thread_.join();
    {
      std::lock_guard<std::mutex> lock(link_->m);
      for (auto& p : link_->pending) p.reset();  // a reconnect that ended while stopping
      if (link_->state != LinkState::kDeleted)
        link_->fail_locked(LinkState::kDeleted, "disconnected");
    }
    set_state(ControllerState::kDeleting);
    // The callers' threads are done with the IoQueues: their connections go before the
    // shutdown, as Linux deletes the I/O queues first.
    for (auto& q : async_queues_) q->close();
  }
  stop_keep_alive();
  std::lock_guard<std::mutex> lock(admin_mutex_);
  if (!admin_) return ok_status();
  Status st;
  if (enabled_) {
    st = shutdown_controller(*admin_, cc_, options_.shutdown_timeout_ms);
    enabled_ = false;
  }
  stats_ = stats_locked();  // keep the queues' capsule counters
  io_queues_.clear();       // each rdma_disconnects, then destroys QP, MRs, CQ, CM id
  admin_.reset();
  if (!st.ok()) NVMF_LOG(WARN, "host") << "disconnect: " << st.to_string();
  return st;
}

Result<proto::Cqe> Controller::submit_admin_raw(const proto::Sqe& sqe,
                                                std::span<const Piece> pieces) {
  std::lock_guard<std::mutex> admin_lock(admin_mutex_);
  if (!admin_) return Status::invalid_argument("no queue 0");
  NVMF_ASSIGN_OR_RETURN(uint16_t slot, admin_->post(sqe, pieces));
  Result<proto::Cqe> cqe = admin_->wait(slot, admin_->deadline());
  nudge_admin_thread_locked();
  return cqe;
}

template <typename Fn>
void Controller::for_each_io_connection(Fn&& fn) const {
  for (const auto& q : async_queues_) {
    if (const auto* c = dynamic_cast<const Queue*>(q->channel())) fn(*c);
  }
}

Negotiation Controller::negotiation() const {
  std::lock_guard<std::mutex> lock(admin_mutex_);
  Negotiation n;
  const proto::IdentifyController& id = identify_.ctrl;
  n.cntlid = cntlid_;
  n.ioccsz = id.ioccsz;
  n.iorcsz = id.iorcsz;
  n.icdoff = id.icdoff;
  n.sgls = id.sgls;
  n.msdbd = id.msdbd;
  n.in_capsule_data_size = in_capsule_size_from_ioccsz(id.ioccsz);
  n.in_capsule_enabled = limits_.in_capsule.enabled;
  n.in_capsule_why_off = limits_.in_capsule.why_off;
  n.max_in_capsule_segments = limits_.in_capsule.max_segments;
  n.mdts_bytes = mdts_bytes(id.mdts, cap_mpsmin_bytes(cap_));
  n.max_command_bytes = limits_.max_command_bytes;
  n.num_io_queues = static_cast<uint16_t>(num_io_queues());
  n.io_queue_size = io_queue_size_;
  auto add = [&](const Queue& q) {
    n.queues.push_back(
        QueueInlineSend{q.qid(), options_.requested_max_inline_data, q.granted_max_inline_data(),
                        q.inline_fallback(), q.usable_max_inline_data(),
                        q.counters().capsules_inline, q.counters().capsules_by_reference,
                        q.counters().capsules_with_in_capsule_data, q.ack_timeout()});
  };
  if (admin_) add(*admin_);
  for_each_io_connection(add);
  n.min_granted_max_inline_data = n.queues.empty() ? 0 : UINT32_MAX;
  for (const auto& q : n.queues) {
    n.min_granted_max_inline_data = std::min(n.min_granted_max_inline_data, q.granted);
  }
  return n;
}

HostStats Controller::stats() const {
  std::lock_guard<std::mutex> lock(admin_mutex_);
  HostStats s = stats_locked();
  s.writes_in_capsule = io_stats_.writes_in_capsule;
  s.writes_keyed = io_stats_.writes_keyed;
  s.bytes_in_capsule = io_stats_.bytes_in_capsule;
  s.bytes_keyed = io_stats_.bytes_keyed;
  s.reads = io_stats_.reads;
  s.bytes_read = io_stats_.bytes_read;
  s.flushes = io_stats_.flushes;
  for_each_io_connection([&](const Queue& q) { add_capsules(s, q.counters()); });
  // The connections the IoQueues dropped (losses, resets, disconnect()).
  std::lock_guard<std::mutex> dropped_lock(link_->m);
  add_capsules(s, link_->dropped);
  return s;
}

HostStats Controller::stats_locked() const {
  HostStats s = stats_;
  s.keep_alives = keep_alives_.load(std::memory_order_relaxed);
  s.keep_alive_failures = keep_alive_failures_.load(std::memory_order_relaxed);
  if (admin_) add_capsules(s, admin_->counters());
  for (const auto& q : io_queues_) add_capsules(s, q->counters());
  return s;
}

}  // namespace nvmf::host
