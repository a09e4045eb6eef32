// SPDX-License-Identifier: BSD-3-Clause
// Host side of discovery: reads a target's Discovery Log Page (Get Log Page LID 70h) through
// the discovery controller (NQN nqn.2014-08.org.nvmexpress.discovery), like `nvme discover`.
#ifndef NVMF_HOST_DISCOVER_H_
#define NVMF_HOST_DISCOVER_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "host/options.h"
#include "proto/discovery.h"
#include "proto/nvme.h"

namespace nvmf::host {

// One Discovery Log Page entry, decoded (Fabrics 1.1 §5.3; RDMA TSAS per RDMA 1.0 §3.1.2).
struct DiscoveryEntry {
  uint8_t trtype = 0;
  uint8_t adrfam = 0;
  uint8_t subtype = 0;
  uint8_t treq = 0;
  uint16_t portid = 0;
  uint16_t cntlid = 0;
  uint16_t asqsz = 0;
  uint16_t eflags = 0;
  std::string trsvcid;  // trailing NULs and spaces removed
  std::string traddr;
  std::string subnqn;
  uint8_t rdma_qptype = 0;
  uint8_t rdma_prtype = 0;
  uint8_t rdma_cms = 0;
  uint16_t rdma_pkey = 0;
};

// A Discovery Log Page (Base 2.0 §5.16.1.23): the header and its entries.
struct DiscoveryLog {
  uint64_t genctr = 0;  // GENCTR: changes whenever the log changes
  uint64_t numrec = 0;  // NUMREC: entries in the log
  uint16_t recfmt = 0;  // RECFMT: 0 is the only format defined
  std::vector<DiscoveryEntry> entries;
  // The discovery controller's Identify (CNTRLTYPE, SUBNQN, SN/MN/FR).
  proto::IdentifyController identify{};
};

// Decodes a Discovery Log Page: `bytes` holds the 1024-byte header and at least NUMREC
// entries. kInvalidArgument "discovery log: 2048 bytes hold 1 of NUMREC 2 entries" otherwise,
// or for RECFMT other than 0.
Result<DiscoveryLog> parse_discovery_log(std::span<const uint8_t> bytes);

// Connects an admin queue to options.traddr:trsvcid with SUBNQN = the discovery NQN (whatever
// options.subnqn says) and options.hostnqn, KATO 0, enables it, reads the log (Identify
// Controller, then the log header and its entries in reads of at most 4096 bytes, read again
// when GENCTR moved, at most 3 times, as nvme-cli), shuts the controller down and disconnects.
// Errors as Controller::connect, kNvmeError naming the command ("Get Log Page 70h at offset
// 1024: ..."), kInvalidArgument for a log parse_discovery_log() refuses.
Result<DiscoveryLog> discover(const HostOptions& options);

// Names of a Discovery Log entry's TRTYPE, ADRFAM, SUBTYPE, TREQ, RDMA QPTYPE, PRTYPE and CMS
// as nvme-cli prints them (in this order, e.g.: "rdma", "ipv4", "nvme subsystem",
// "not specified", "connected", "not specified", "rdma-cm"); "unrecognized (N)" otherwise.
// Base 2.0 §5.16.1.23; RDMA 1.0 §3.1.2 (TSAS).
std::string trtype_name(uint8_t v);
std::string adrfam_name(uint8_t v);
std::string subtype_name(uint8_t v);
std::string treq_name(uint8_t v);
std::string rdma_qptype_name(uint8_t v);
std::string rdma_prtype_name(uint8_t v);
std::string rdma_cms_name(uint8_t v);

}  // namespace nvmf::host

#endif  // NVMF_HOST_DISCOVER_H_
