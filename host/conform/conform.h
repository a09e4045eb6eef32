// SPDX-License-Identifier: BSD-3-Clause
// `nvmf-host conform`: checks an NVMe-oF RDMA target against the specification with a catalogue
// of cases (host/conform/conform_cases.cc), each sending crafted CM requests and capsules through
// RawQueue (host/raw/raw_queue.h) and judging what comes back. This header holds the catalogue's
// types, the verdict logic, the runner and the three report writers (table, JSON, JUnit XML).
//
// Spec references: "Base 2.0" = NVM Express Base Specification 2.0 (Fabrics chapter 6), "NVM
// CS 1.0" = NVM Command Set Specification 1.0, "RDMA 1.0" = NVMe RDMA Transport Specification
// 1.0 (formerly the NVMe-oF 1.1 RDMA binding).
#ifndef NVMF_HOST_CONFORM_CONFORM_H_
#define NVMF_HOST_CONFORM_CONFORM_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "host/auth.h"
#include "host/commands.h"
#include "host/options.h"
#include "host/raw/raw_queue.h"
#include "proto/nvme.h"

namespace nvmf::host::conform {

// must: a "shall" of the specification. should: what Linux and SPDK hosts depend on, or a
// recommendation; a failing should case does not change the exit status.
enum class Level { kMust, kShould };
// kNotApplicable: the target does not offer what the case checks (e.g. MDTS 0, no limit).
// kNotRun: a dangerous case without --include-dangerous.
enum class Verdict { kPass, kFail, kNotApplicable, kNotRun };

const char* level_name(Level l);      // "must", "should"
const char* verdict_name(Verdict v);  // "pass", "FAIL", "n/a", "not run"

// What one case found: the verdict and what came back ("SCT 0h SC 0Fh Data SGL Length
// Invalid DNR", "CM reject STS 05h", "no answer in 1500 ms", ...).
struct Outcome {
  Verdict verdict = Verdict::kFail;
  std::string got;
};
// Outcomes with their verdict; `got` / `why` is what the reports print.
inline Outcome pass(std::string got) { return {Verdict::kPass, std::move(got)}; }
inline Outcome fail(std::string got) { return {Verdict::kFail, std::move(got)}; }
inline Outcome not_applicable(std::string why) { return {Verdict::kNotApplicable, std::move(why)}; }

// One acceptable status: SCT and SC, and whether DNR must be set. Base 2.0 §4.2.3.
struct StatusExpect {
  uint8_t sct = 0;
  uint8_t sc = 0;
  bool dnr = false;
};
// A Generic Command Status (SCT 0h) / Command Specific Status (SCT 1h) expectation.
constexpr StatusExpect generic(uint8_t sc, bool dnr = false) { return {0, sc, dnr}; }
constexpr StatusExpect specific(uint8_t sc, bool dnr = false) { return {1, sc, dnr}; }
inline constexpr StatusExpect kSuccess{0, 0, false};

// True when `status` (CQE status field, phase bit ignored) has the SCT and SC of `e`, and DNR
// when `e.dnr`. More and CRD are ignored.
bool status_matches(uint16_t status, const StatusExpect& e);
// "SCT 0h SC 0Fh Data SGL Length Invalid DNR", "success".
std::string status_text(uint16_t status);
// The same wording for an expectation: "SCT 1h SC 82h Connect Invalid Parameters DNR",
// "success".
std::string expect_text(const StatusExpect& e);
// Pass when `status` matches any of `any_of`; `got` is status_text(status).
Outcome judge_status(uint16_t status, std::initializer_list<StatusExpect> any_of);
Outcome judge_status(uint16_t status, const std::vector<StatusExpect>& any_of);

class Session;
// A case's body: runs against the target through `Session` and judges what came back.
using CaseFn = Outcome (*)(Session&);

// One catalogue entry. Every field but `run` is text for the reports.
struct Case {
  const char* id;     // "sgl.keyed-length-above-nlb"; unique
  const char* group;  // "sgl"
  Level level;
  const char* spec;         // "Base 2.0 §4.3.2"
  const char* description;  // one line
  const char* sends;        // what goes on the wire
  const char* expect;       // the answers that conform, and what the next command must see
  bool dangerous;           // crashes or wedges some targets: only with --include-dangerous
  CaseFn run;
};
// The catalogue, in run order (host/conform/conform_cases.cc).
const std::vector<Case>& catalogue();

// One conform run (nvmf-host conform's options and the connection options it uses).
struct ConformOptions {
  std::string traddr;
  std::string trsvcid = "4420";
  std::string host_traddr;
  std::string subnqn;
  std::string hostnqn;    // empty: the default NQN of a random host id
  int timeout_ms = 1500;  // per command and per CM answer
  bool include_dangerous = false;
  std::vector<std::string> only;  // case ids to run; empty: all
  bool verbose = false;           // one line per case on stderr while running
  // -S/-C: the keys every association authenticates with when Connect sets AUTHREQ.ATR; the
  // authentication cases are not applicable without a host key.
  DhchapSecrets dhchap;
};

// What the preflight association learned about the target; cases read it.
struct TargetFacts {
  uint64_t cap = 0;  // CAP property (Base 2.0 §3.1.3.1)
  uint32_t vs = 0;   // VS property (Base 2.0 §3.1.3.2)
  proto::IdentifyController ctrl{};
  uint32_t nsid = 0;  // first active namespace
  uint64_t nsze = 0;  // LBAs
  uint32_t lba_size = 0;
  uint32_t anagrpid = 0;          // its Identify Namespace ANAGRPID (0: no ANA reporting)
  uint64_t mdts_bytes = 0;        // 0: no limit
  uint32_t in_capsule_bytes = 0;  // IOCCSZ * 16 - 64
  uint16_t mqes_entries = 0;      // CAP.MQES + 1
};

// One queue of an association, or an admin queue with its association.
struct Association {
  std::unique_ptr<RawQueue> admin;
  std::unique_ptr<RawQueue> io;  // qid 1 when asked for
  uint16_t cntlid = 0;
  bool authentication_required = false;  // the admin Connect set AUTHREQ.ATR
  HostId hostid{};
  std::string hostnqn;
};

// The runner's handle for cases: options, target facts and helpers that build associations.
class Session {
 public:
  // Connects nothing yet; picks a random host id and, when options.hostnqn is empty, its
  // default NQN. preflight() fills facts().
  explicit Session(ConformOptions options);
  const ConformOptions& options() const { return options_; }
  const TargetFacts& facts() const { return facts_; }
  int timeout_ms() const { return options_.timeout_ms; }
  // The host NQN and host id of this run.
  const std::string& hostnqn() const { return hostnqn_; }
  const HostId& hostid() const { return hostid_; }

  // A RawQueue created and not connected.
  Result<std::unique_ptr<RawQueue>> raw();
  // A RawQueue with CM connect for `qid` of `entries` entries (HRQSIZE entries, HSQSIZE
  // entries - 1); kRejected naming the CM event when not established.
  Result<std::unique_ptr<RawQueue>> open(uint16_t qid, uint16_t entries);
  // A Connect command on `q` as `spec` says; returns its CQE.
  Result<proto::Cqe> connect(RawQueue& q, const ConnectSpec& spec);
  // ConnectSpec with this run's subnqn, hostnqn, host id for `qid`/`sqsize`/`cntlid`.
  ConnectSpec connect_spec(uint16_t qid, uint16_t sqsize, uint16_t cntlid) const;
  // Admin queue (32 entries) + Connect (KATO `kato_ms`) [+ DH-HMAC-CHAP when the Connect
  // sets AUTHREQ.ATR and `authenticate`] [+ CC.EN = 1 and CSTS.RDY] [+ I/O queue 1 of
  // `io_entries`, authenticated likewise]. Any refusal is an error naming the step.
  Result<Association> associate(bool enable = true, bool io = true, uint16_t io_entries = 32,
                                uint32_t kato_ms = 0, const std::string& subnqn = {},
                                bool authenticate = true);
  // One DH-HMAC-CHAP transaction on `q` with `secrets` (host/auth.h's authenticate()).
  Status authenticate(RawQueue& q, uint16_t qid, const DhchapSecrets& secrets,
                      const DhchapOffer& offer = {});
  // Authentication Send of `message` (keyed, from the queue's data buffer) / Receive of `al`
  // bytes (keyed, into it): the CQE, and for Receive the bytes in q.data().
  Result<proto::Cqe> auth_send(RawQueue& q, std::span<const uint8_t> message);
  Result<proto::Cqe> auth_receive(RawQueue& q, uint32_t al = 4096);
  // Property Get (`eight` bytes) / Set of 4 bytes on the admin queue.
  Result<proto::Cqe> property_get(RawQueue& admin, uint32_t ofst, bool eight);
  Result<proto::Cqe> property_set(RawQueue& admin, uint32_t ofst, uint32_t value);
  // An SQE with PSDT SGL and a null keyed SGL.
  static proto::Sqe sqe(uint8_t opcode, uint32_t nsid = 0);
  // Read/Write of `nlb` LBAs at `slba` of the test namespace, keyed SGL of `length` bytes at
  // offset 0 of the queue's data buffer.
  proto::Sqe keyed_io(RawQueue& q, uint8_t opcode, uint64_t slba, uint32_t nlb,
                      uint32_t length) const;
  // Runs `sqe` on `q` with this run's timeout.
  Result<proto::Cqe> run(RawQueue& q, const proto::Sqe& sqe, std::span<const uint8_t> data = {});
  // The preflight: one association that reads CAP, VS, Identify Controller, the first active
  // namespace and its Identify Namespace into facts(). Errors name the step.
  Status preflight();
  // True when a fresh association can read one LBA (the target is still usable).
  bool target_usable();

 private:
  ConformOptions options_;
  TargetFacts facts_;
  HostId hostid_{};
  std::string hostnqn_;
};

// "got" text for a failed transport step: "no answer in 1500 ms", "connection lost: ...".
std::string transport_text(const Status& s);

// One case as it ran: its catalogue entry, what it found, how long it took (ms, wall clock).
struct CaseReport {
  const Case* c = nullptr;
  Outcome outcome;
  double ms = 0;
};

// A whole run: the target (address, subsystem, what Identify said) and every selected case.
struct RunReport {
  std::string traddr, trsvcid, subnqn;
  std::string model, firmware;    // from Identify Controller, trimmed
  uint32_t ioccsz = 0;            // 16-byte units, as Identify Controller has it
  uint32_t in_capsule_bytes = 0;  // IOCCSZ * 16 - 64
  std::vector<CaseReport> cases;
  double seconds = 0;  // the whole run, preflight included
  // After a case whose target did not serve a new association any more: that case's id.
  std::string unusable_after;
};

// Cases selected by `only` (empty: all). kNotFound naming the first unknown id.
Result<std::vector<const Case*>> select_cases(const std::vector<Case>& all,
                                              const std::vector<std::string>& only);
// Runs preflight, then each selected case in catalogue order (dangerous ones only with
// include_dangerous). After a failing or dangerous case, checks the target is still usable
// (retrying for a few seconds); if not, the remaining cases are failed with "target unusable".
Result<RunReport> run(const ConformOptions& options);

// 0 when every must case that ran passed (n/a and not run do not count), 1 otherwise.
int exit_code(const RunReport& r);
// Cases per verdict; must_fail + should_fail == fail.
struct Counts {
  int pass = 0, fail = 0, not_applicable = 0, not_run = 0, must_fail = 0, should_fail = 0;
};
// The verdicts of `r` counted (the summary line of table_text() and to_json()).
Counts count(const RunReport& r);
// The stdout table: id, level, verdict, what came back, what was expected; then a summary.
std::string table_text(const RunReport& r);
// {"target": {...}, "summary": {...}, "cases": [{id, group, level, spec, description, sends,
// expect, dangerous, verdict, got, ms}]}.
nlohmann::json to_json(const RunReport& r);
// JUnit XML: one <testsuite name=`suite`>, one <testcase classname="conform.<group>"
// name="<id>"> per case; a must FAIL -> <failure message="got">expected</failure>; a should
// FAIL -> <system-out> naming it (like exit_code(), it does not fail the run); n/a and not run
// -> <skipped message="..."/>.
std::string junit_xml(const RunReport& r, const std::string& suite);
// The catalogue as a table (--list).
std::string list_text(const std::vector<Case>& all);
// The catalogue as JSON (--list --json): {"cases": [{id, group, level, spec, description,
// sends, expect, dangerous}], "count": N}, the case fields named as in to_json().
nlohmann::json list_json(const std::vector<Case>& all);

}  // namespace nvmf::host::conform

#endif  // NVMF_HOST_CONFORM_CONFORM_H_
