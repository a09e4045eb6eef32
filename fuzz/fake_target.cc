// SPDX-License-Identifier: BSD-3-Clause
// FakeTarget: the port and subsystems the fuzzers connect to.
#include "fuzz/fake_target.h"

#include "proto/fabrics.h"
#include "target/discovery.h"

namespace nvmf::fuzz {

namespace {
constexpr uint32_t kInCapsuleBytes = 8192;
}  // namespace

FakeTarget::FakeTarget() {
  // One namespace for every input (no mmap per input); what it holds never steers a command.
  static target::Namespace* const shared =
      std::move(target::Namespace::create_ram(64 * 1024, 512)).value().release();
  ns = shared;
  target::SubsystemConfig d;
  d.nqn = proto::kDiscoveryNqn;
  d.discovery = true;
  d.admin_queue_size = 8;
  d.io_queue_size = 16;
  d.mdts = 2;
  discovery = std::make_unique<target::Subsystem>(d, registry);
  target::SubsystemConfig n;
  n.nqn = kFuzzSubnqn;
  n.max_io_queues = 2;
  n.admin_queue_size = 8;
  n.io_queue_size = 16;
  n.mdts = 2;
  n.allow_any_host = false;
  n.allowed_hosts = {kAllowedHost};
  nvm = std::make_unique<target::Subsystem>(n, *ns, registry);
  target::DiscoveryAddress a;
  a.traddr = "10.99.0.1";
  a.trsvcid = "4420";
  port = std::make_unique<target::Port>(a, *discovery);
  port->link(*nvm);
  nvm->set_in_capsule_data_size(kInCapsuleBytes);
}

FakeTarget::~FakeTarget() {
  // Queues are gone by now (their owner destroys them first). The port unlinks its subsystems.
  port.reset();
  nvm.reset();
  discovery.reset();
}

target::CmLimits FakeTarget::cm_limits() const {
  const auto& c = nvm->config();
  return target::CmLimits{c.max_io_queues, c.admin_queue_size, c.io_queue_size};
}

}  // namespace nvmf::fuzz
