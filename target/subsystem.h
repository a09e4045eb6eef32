// Subsystem: the one NVM subsystem this target serves: its NQN, namespace 1, its controllers,
// and the settings every controller reports.
#ifndef NVMF_TARGET_SUBSYSTEM_H_
#define NVMF_TARGET_SUBSYSTEM_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "target/controller.h"
#include "target/namespace.h"
#include "target/stats_registry.h"

namespace nvmf::target {

// Fixed settings, decided when the target starts.
struct SubsystemConfig {
  std::string nqn;
  uint16_t max_io_queues = 4;
  uint32_t admin_queue_size = 32;  // entries
  uint32_t io_queue_size = 128;    // entries, CAP.MQES + 1
  uint8_t mdts = 5;                // 2^5 * 4 KiB = 128 KiB per command
  uint32_t version = 0x00010300;   // VS 1.3
  uint16_t kas = 1;                // 100 ms units
  uint8_t aerl = 3;                // 4 Async Event Requests held, 0-based
  std::string serial;              // empty: derived from the NQN
  std::string model = "nvmf-rdma target";
  std::string firmware = "0.1";

  // 4 KiB << mdts.
  uint32_t max_transfer_bytes() const { return 4096u << mdts; }
};

// Owns the controllers. Event-loop thread only (the StatsRegistry it reports to is
// thread-safe).
class Subsystem {
 public:
  // `ns` and `registry` must outlive the subsystem.
  Subsystem(SubsystemConfig config, Namespace& ns, StatsRegistry& registry);
  ~Subsystem();
  Subsystem(const Subsystem&) = delete;
  Subsystem& operator=(const Subsystem&) = delete;

  const SubsystemConfig& config() const { return config_; }
  Namespace& ns() { return ns_; }
  StatsRegistry& registry() { return registry_; }
  const std::string& serial() const { return serial_; }
  const std::array<uint8_t, 16>& nguid() const { return nguid_; }

  // The effective in-capsule data size (bytes) every I/O queue offers and Identify reports;
  // set once the device is known (resolve_inline_data_size).
  uint32_t in_capsule_data_size() const { return in_capsule_data_size_; }
  void set_in_capsule_data_size(uint32_t bytes) { in_capsule_data_size_ = bytes; }

  // A new controller with the lowest free CNTLID in 1..FFEFh; null when all are taken.
  Controller* create_controller(const std::string& hostnqn, const std::array<uint8_t, 16>& hostid,
                                uint32_t kato_ms);
  Controller* find_controller(uint16_t cntlid) const;
  // Frees a controller: each of its I/O queues is detached and asked to disconnect; logs one
  // line. `reason` goes into that line.
  void free_controller(uint16_t cntlid, std::string_view reason);
  size_t controller_count() const { return controllers_.size(); }

 private:
  SubsystemConfig config_;
  Namespace& ns_;
  StatsRegistry& registry_;
  std::string serial_;
  std::array<uint8_t, 16> nguid_;
  uint32_t in_capsule_data_size_ = 0;
  std::map<uint16_t, std::unique_ptr<Controller>> controllers_;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_SUBSYSTEM_H_
