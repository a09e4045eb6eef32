// Target: options validation, assembly of namespace + subsystem + event loop, and the API.
#include "target/target.h"

#include <string>

#include "common/log.h"
#include "target/counters.h"
#include "target/event_loop.h"
#include "target/namespace.h"
#include "target/stats_registry.h"
#include "target/subsystem.h"

namespace nvmf::target {
namespace {

Status bad(const std::string& message) { return Status::invalid_argument(message); }

Result<std::unique_ptr<Namespace>> open_namespace(const TargetOptions& o) {
  if (!o.file_path.empty()) return Namespace::open_file(o.file_path, o.file_size, o.lba_size);
  return Namespace::create_ram(o.ram_size, o.lba_size);
}

}  // namespace

Status validate_options(const TargetOptions& o) {
  if (o.traddr.empty()) return bad("--traddr is required");
  if (o.subnqn.empty() || o.subnqn.size() > 223) {
    return bad("--nqn must be 1..223 bytes, got " + std::to_string(o.subnqn.size()));
  }
  if (o.file_path.empty() == (o.ram_size == 0)) {
    return bad("give exactly one namespace backing: --file PATH or --ram-size BYTES");
  }
  if (o.file_path.empty() && o.file_size != 0) return bad("--size needs --file");
  if (!valid_lba_size(o.lba_size)) {
    return bad("--lba-size " + std::to_string(o.lba_size) + " is not 512 or 4096");
  }
  if (o.inline_data_size < -1) {
    return bad("--inline-data-size " + std::to_string(o.inline_data_size) +
               " (use -1 for one page, 0 for off, or a byte count)");
  }
  if (o.max_queue_size < 2 || o.max_queue_size > 1024) {
    return bad("--queue-size " + std::to_string(o.max_queue_size) + " is not in 2..1024");
  }
  if (o.max_io_queues < 1 || o.max_io_queues > 64) {
    return bad("max_io_queues " + std::to_string(o.max_io_queues) + " is not in 1..64");
  }
  if (o.mdts < 1 || o.mdts > 8) return bad("mdts " + std::to_string(o.mdts) + " is not in 1..8");
  return ok_status();
}

Target::Target() = default;

Target::~Target() {
  loop_.reset();  // queues first: they detach from controllers owned by the subsystem
  subsystem_.reset();
}

Result<std::unique_ptr<Target>> Target::create(const TargetOptions& options) {
  NVMF_RETURN_IF_ERROR(validate_options(options));
  std::unique_ptr<Target> t(new Target());
  NVMF_ASSIGN_OR_RETURN(t->ns_, open_namespace(options));
  t->registry_ = std::make_unique<StatsRegistry>();
  t->statuses_ = std::make_unique<StatusCounters>();
  SubsystemConfig cfg;
  cfg.nqn = options.subnqn;
  cfg.max_io_queues = options.max_io_queues;
  cfg.io_queue_size = options.max_queue_size;
  cfg.mdts = options.mdts;
  t->subsystem_ = std::make_unique<Subsystem>(cfg, *t->ns_, *t->registry_);
  NegotiationStats pending;
  pending.configured_inline_data_size = options.inline_data_size;
  pending.mdts = cfg.mdts;
  pending.max_transfer_bytes = cfg.max_transfer_bytes();
  t->registry_->set_negotiation(pending);
  NVMF_ASSIGN_OR_RETURN(t->loop_, EventLoop::create(options, *t->subsystem_, *t->statuses_));
  NVMF_LOG(INFO, "target") << "subsystem " << cfg.nqn << ": namespace 1 on " << t->ns_->describe()
                           << ", " << t->ns_->num_lbas() << " LBAs of " << t->ns_->lba_size()
                           << " bytes";
  return t;
}

Status Target::run() { return loop_->run(); }

void Target::stop() { loop_->stop(); }

TargetStats Target::stats() const { return registry_->snapshot(*statuses_); }

uint16_t Target::port() const { return loop_->port(); }

std::string Target::listen_address() const { return loop_->listen_address(); }

}  // namespace nvmf::target
