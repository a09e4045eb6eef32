// SPDX-License-Identifier: BSD-3-Clause
#include "host/conform/conform.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "common/nvme_status.h"
#include "common/sgl.h"
#include "host/auth.h"
#include "host/identify.h"
#include "proto/auth.h"
#include "proto/fabrics.h"

namespace nvmf::host::conform {

const char* level_name(Level l) { return l == Level::kMust ? "must" : "should"; }

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kNotApplicable:
      return "n/a";
    case Verdict::kNotRun:
      return "not run";
  }
  return "?";
}

bool status_matches(uint16_t status, const StatusExpect& e) {
  if (status_sct(status) != e.sct || status_sc(status) != e.sc) return false;
  return !e.dnr || status_dnr(status);
}

namespace {
std::string hex(unsigned v, int width = 2) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%0*Xh", width, v);
  return buf;
}
}  // namespace

std::string status_text(uint16_t status) {
  if (status_is_success(status)) return "success";
  std::string s = "SCT " + std::to_string(status_sct(status)) + "h SC " + hex(status_sc(status)) +
                  " " + std::string(status_code_text(status_sct(status), status_sc(status)));
  if (status_dnr(status)) s += " DNR";
  return s;
}

std::string expect_text(const StatusExpect& e) {
  if (e.sct == 0 && e.sc == 0) return "success";
  std::string s = "SCT " + std::to_string(e.sct) + "h SC " + hex(e.sc) + " " +
                  std::string(status_code_text(e.sct, e.sc));
  if (e.dnr) s += " DNR";
  return s;
}

Outcome judge_status(uint16_t status, const std::vector<StatusExpect>& any_of) {
  for (const StatusExpect& e : any_of) {
    if (status_matches(status, e)) return pass(status_text(status));
  }
  return fail(status_text(status));
}

Outcome judge_status(uint16_t status, std::initializer_list<StatusExpect> any_of) {
  return judge_status(status, std::vector<StatusExpect>(any_of));
}

std::string transport_text(const Status& s) {
  switch (s.code()) {
    case StatusCode::kTimeout:
      return "no answer (" + s.message() + ")";
    case StatusCode::kUnavailable:
      return "connection closed by the target";
    default:
      return s.to_string();
  }
}

// ------------------------------------------------------------------------------ session --

Session::Session(ConformOptions options) : options_(std::move(options)) {
  hostid_ = random_host_id();
  hostnqn_ = options_.hostnqn.empty() ? default_hostnqn(hostid_) : options_.hostnqn;
}

Result<std::unique_ptr<RawQueue>> Session::raw() {
  RawQueueParams p;
  p.traddr = options_.traddr;
  p.trsvcid = options_.trsvcid;
  p.host_traddr = options_.host_traddr;
  p.timeout_ms = std::max(options_.timeout_ms, 1000);
  return RawQueue::create(p);
}

Result<std::unique_ptr<RawQueue>> Session::open(uint16_t qid, uint16_t entries) {
  NVMF_ASSIGN_OR_RETURN(auto q, raw());
  NVMF_RETURN_IF_ERROR(q->open(qid, static_cast<uint16_t>(entries - 1)));
  return q;
}

ConnectSpec Session::connect_spec(uint16_t qid, uint16_t sqsize, uint16_t cntlid) const {
  ConnectSpec s;
  s.qid = qid;
  s.sqsize = sqsize;
  s.cntlid = cntlid;
  s.hostid = hostid_;
  s.subnqn = options_.subnqn;
  s.hostnqn = hostnqn_;
  return s;
}

Result<proto::Cqe> Session::connect(RawQueue& q, const ConnectSpec& spec) {
  return q.run_connect(spec, false, options_.timeout_ms);
}

proto::Sqe Session::sqe(uint8_t opcode, uint32_t nsid) {
  proto::Sqe s{};
  s.opcode = opcode;
  s.flags = proto::kFlagsPsdtSgl;
  s.nsid = nsid;
  encode_null_sgl(s.dptr);
  return s;
}

proto::Sqe Session::keyed_io(RawQueue& q, uint8_t opcode, uint64_t slba, uint32_t nlb,
                             uint32_t length) const {
  proto::Sqe s = sqe(opcode, facts_.nsid);
  s.cdw10 = static_cast<uint32_t>(slba);
  s.cdw11 = static_cast<uint32_t>(slba >> 32);
  s.cdw12 = (nlb - 1) & proto::kRwNlbMask;
  q.set_keyed(s, 0, length);
  return s;
}

Result<proto::Cqe> Session::run(RawQueue& q, const proto::Sqe& s, std::span<const uint8_t> data) {
  return q.run(s, data, options_.timeout_ms);
}

Result<proto::Cqe> Session::property_get(RawQueue& admin, uint32_t ofst, bool eight) {
  proto::Sqe s = property_get_sqe(ofst, eight);
  s.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(s.dptr);
  return run(admin, s);
}

Result<proto::Cqe> Session::property_set(RawQueue& admin, uint32_t ofst, uint32_t value) {
  proto::Sqe s = property_set_sqe(ofst, value);
  s.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(s.dptr);
  return run(admin, s);
}

namespace {
Status expect_success(const Result<proto::Cqe>& c, const std::string& step) {
  if (!c.ok()) return Status(c.status().code(), step + ": " + c.status().message());
  if (!status_is_success(c->status)) {
    return Status::nvme_error(c->status, step + ": " + status_text(c->status));
  }
  return ok_status();
}
}  // namespace

namespace {
// host/auth.h's transaction over a RawQueue: data out and in through its keyed buffer.
class RawChannel : public CommandChannel {
 public:
  RawChannel(RawQueue& q, int timeout_ms) : q_(q), timeout_ms_(timeout_ms) {}
  Result<proto::Cqe> run(const proto::Sqe& sqe, std::span<const uint8_t> data_out,
                         std::span<uint8_t> data_in, bool /*allow_in_capsule*/) override {
    proto::Sqe s = sqe;
    if (!data_out.empty()) {
      std::memcpy(q_.data(), data_out.data(), data_out.size());
      q_.set_keyed(s, 0, static_cast<uint32_t>(data_out.size()));
    } else if (!data_in.empty()) {
      std::memset(q_.data(), 0, data_in.size());
      q_.set_keyed(s, 0, static_cast<uint32_t>(data_in.size()));
    } else {
      s.flags = proto::kFlagsPsdtSgl;
      encode_null_sgl(s.dptr);
    }
    auto c = q_.run(s, {}, timeout_ms_);
    if (c.ok() && !data_in.empty()) std::memcpy(data_in.data(), q_.data(), data_in.size());
    return c;
  }

 private:
  RawQueue& q_;
  int timeout_ms_;
};
}  // namespace

Status Session::authenticate(RawQueue& q, uint16_t qid, const DhchapSecrets& secrets,
                             const DhchapOffer& offer) {
  RawChannel ch(q, options_.timeout_ms);
  return host::authenticate(ch, qid, secrets, hostnqn_, options_.subnqn, offer);
}

Result<proto::Cqe> Session::auth_send(RawQueue& q, std::span<const uint8_t> message) {
  proto::Sqe s = auth_send_sqe(static_cast<uint32_t>(message.size()));
  std::memcpy(q.data(), message.data(), message.size());
  q.set_keyed(s, 0, static_cast<uint32_t>(message.size()));
  return run(q, s);
}

Result<proto::Cqe> Session::auth_receive(RawQueue& q, uint32_t al) {
  proto::Sqe s = auth_receive_sqe(al);
  std::memset(q.data(), 0, al);
  q.set_keyed(s, 0, al);
  return run(q, s);
}

Result<Association> Session::associate(bool enable, bool io, uint16_t io_entries, uint32_t kato_ms,
                                       const std::string& subnqn, bool authenticate) {
  Association a;
  a.hostid = hostid_;
  a.hostnqn = hostnqn_;
  NVMF_ASSIGN_OR_RETURN(a.admin, open(0, kAdminQueueSize));
  ConnectSpec spec = connect_spec(0, kAdminQueueSize - 1, proto::kAdminQueueCntlid);
  spec.kato_ms = kato_ms;
  if (!subnqn.empty()) spec.subnqn = subnqn;
  auto c = connect(*a.admin, spec);
  NVMF_RETURN_IF_ERROR(expect_success(c, "admin Connect"));
  a.cntlid = static_cast<uint16_t>(c->dw0 & proto::kConnectRespCntlidMask);
  a.authentication_required = (c->dw0 & proto::kConnectRespAuthreqAtr) != 0;
  if (a.authentication_required && authenticate) {
    NVMF_RETURN_IF_ERROR(this->authenticate(*a.admin, 0, options_.dhchap));
  }
  if (enable) {
    NVMF_RETURN_IF_ERROR(
        expect_success(property_set(*a.admin, proto::kPropCc, kCcEnable), "Property Set CC"));
    uint32_t to_ms = facts_.cap != 0 ? cap_timeout_ms(facts_.cap) : 15000;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(to_ms);
    for (;;) {
      auto st = property_get(*a.admin, proto::kPropCsts, false);
      NVMF_RETURN_IF_ERROR(expect_success(st, "Property Get CSTS"));
      if (st->dw0 & proto::kCstsRdy) break;
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::timeout("CSTS.RDY not set within CAP.TO");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (io) {
    NVMF_ASSIGN_OR_RETURN(a.io, open(1, io_entries));
    auto ic = connect(*a.io, connect_spec(1, static_cast<uint16_t>(io_entries - 1), a.cntlid));
    NVMF_RETURN_IF_ERROR(expect_success(ic, "I/O Connect"));
    if ((ic->dw0 & proto::kConnectRespAuthreqAtr) != 0 && authenticate) {
      NVMF_RETURN_IF_ERROR(this->authenticate(*a.io, 1, options_.dhchap));
    }
  }
  return a;
}

Status Session::preflight() {
  NVMF_ASSIGN_OR_RETURN(Association a, associate(true, false));
  auto cap = property_get(*a.admin, proto::kPropCap, true);
  NVMF_RETURN_IF_ERROR(expect_success(cap, "Property Get CAP"));
  facts_.cap = cap->dw0 | (uint64_t{cap->dw1} << 32);
  facts_.mqes_entries = static_cast<uint16_t>((facts_.cap & proto::kCapMqesMask) + 1);
  auto vs = property_get(*a.admin, proto::kPropVs, false);
  NVMF_RETURN_IF_ERROR(expect_success(vs, "Property Get VS"));
  facts_.vs = vs->dw0;
  proto::Sqe id = identify_sqe(proto::kCnsController, 0);
  a.admin->set_keyed(id, 0, proto::kIdentifyDataSize);
  NVMF_RETURN_IF_ERROR(expect_success(run(*a.admin, id), "Identify Controller"));
  std::memcpy(&facts_.ctrl, a.admin->data(), sizeof(facts_.ctrl));
  proto::Sqe list = identify_sqe(proto::kCnsActiveNamespaceList, 0);
  a.admin->set_keyed(list, 0, proto::kIdentifyDataSize);
  NVMF_RETURN_IF_ERROR(expect_success(run(*a.admin, list), "Identify Active Namespace List"));
  NVMF_ASSIGN_OR_RETURN(facts_.nsid, first_active_nsid({a.admin->data(), 4096}));
  proto::Sqe ns = identify_sqe(proto::kCnsNamespace, facts_.nsid);
  a.admin->set_keyed(ns, 0, proto::kIdentifyDataSize);
  NVMF_RETURN_IF_ERROR(expect_success(run(*a.admin, ns), "Identify Namespace"));
  proto::IdentifyNamespace nsd;
  std::memcpy(&nsd, a.admin->data(), sizeof(nsd));
  NVMF_ASSIGN_OR_RETURN(NamespaceInfo info, decode_namespace(facts_.nsid, nsd));
  facts_.nsze = info.nsze;
  facts_.lba_size = info.lba_size;
  facts_.anagrpid = nsd.anagrpid;
  facts_.mdts_bytes = mdts_bytes(facts_.ctrl.mdts, cap_mpsmin_bytes(facts_.cap));
  facts_.in_capsule_bytes = facts_.ctrl.ioccsz > 4 ? facts_.ctrl.ioccsz * 16 - 64 : 0;
  if (facts_.nsze < 64) return Status::invalid_argument("namespace below 64 LBAs");
  return ok_status();
}

bool Session::target_usable() {
  auto a = associate(true, true, 32);
  if (!a.ok()) return false;
  auto c = run(*a->io, keyed_io(*a->io, proto::kNvmRead, 0, 1, facts_.lba_size));
  return c.ok() && status_is_success(c->status);
}

// ------------------------------------------------------------------------------- runner --

Result<std::vector<const Case*>> select_cases(const std::vector<Case>& all,
                                              const std::vector<std::string>& only) {
  std::vector<const Case*> out;
  if (only.empty()) {
    for (const Case& c : all) out.push_back(&c);
    return out;
  }
  std::set<std::string> want(only.begin(), only.end());
  for (const std::string& id : want) {
    bool found = std::any_of(all.begin(), all.end(), [&](const Case& c) { return c.id == id; });
    if (!found) return Status::not_found("no case '" + id + "' (see --list)");
  }
  for (const Case& c : all) {
    if (want.count(c.id)) out.push_back(&c);
  }
  return out;
}

Result<RunReport> run(const ConformOptions& options) {
  NVMF_ASSIGN_OR_RETURN(std::vector<const Case*> cases, select_cases(catalogue(), options.only));
  Session session(options);
  auto t0 = std::chrono::steady_clock::now();
  Status pre = session.preflight();
  if (!pre.ok()) return Status(pre.code(), "preflight: " + pre.message());
  RunReport r;
  r.traddr = options.traddr;
  r.trsvcid = options.trsvcid;
  r.subnqn = options.subnqn;
  r.model = trim_ascii(session.facts().ctrl.mn, sizeof(session.facts().ctrl.mn));
  r.firmware = trim_ascii(session.facts().ctrl.fr, sizeof(session.facts().ctrl.fr));
  r.ioccsz = session.facts().ctrl.ioccsz;
  r.in_capsule_bytes = session.facts().in_capsule_bytes;
  for (const Case* c : cases) {
    CaseReport cr;
    cr.c = c;
    if (!r.unusable_after.empty()) {
      cr.outcome = fail("target unusable since " + r.unusable_after);
      r.cases.push_back(cr);
      continue;
    }
    if (c->dangerous && !options.include_dangerous) {
      cr.outcome = {Verdict::kNotRun, "dangerous: needs --include-dangerous"};
      r.cases.push_back(cr);
      continue;
    }
    auto c0 = std::chrono::steady_clock::now();
    cr.outcome = c->run(session);
    cr.ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
    if (options.verbose) {
      std::cerr << "conform: " << c->id << ": " << verdict_name(cr.outcome.verdict) << " ("
                << cr.outcome.got << ", " << static_cast<int>(cr.ms) << " ms)\n";
    }
    if (cr.outcome.verdict == Verdict::kFail || c->dangerous) {
      bool ok = false;
      for (int i = 0; i < 5 && !ok; ++i) {
        ok = session.target_usable();
        if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      }
      if (!ok) {
        r.unusable_after = c->id;
        cr.outcome.got += "; afterwards the target no longer serves a new association";
        if (cr.outcome.verdict == Verdict::kPass) cr.outcome.verdict = Verdict::kFail;
      }
    }
    r.cases.push_back(cr);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Counts count(const RunReport& r) {
  Counts n;
  for (const CaseReport& c : r.cases) {
    switch (c.outcome.verdict) {
      case Verdict::kPass:
        ++n.pass;
        break;
      case Verdict::kFail:
        ++n.fail;
        ++(c.c->level == Level::kMust ? n.must_fail : n.should_fail);
        break;
      case Verdict::kNotApplicable:
        ++n.not_applicable;
        break;
      case Verdict::kNotRun:
        ++n.not_run;
        break;
    }
  }
  return n;
}

int exit_code(const RunReport& r) { return count(r).must_fail == 0 ? 0 : 1; }

namespace {
std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}
}  // namespace

std::string table_text(const RunReport& r) {
  size_t wid = 2;
  for (const CaseReport& c : r.cases) wid = std::max(wid, std::strlen(c.c->id));
  std::ostringstream o;
  o << pad("id", wid) << "  level   verdict  got  |  expected\n";
  for (const CaseReport& c : r.cases) {
    o << pad(c.c->id, wid) << "  " << pad(level_name(c.c->level), 6) << "  "
      << pad(verdict_name(c.outcome.verdict), 7) << "  " << c.outcome.got << "  |  " << c.c->expect
      << "\n";
  }
  Counts n = count(r);
  o << "conform: " << r.cases.size() << " cases against " << r.subnqn << " at " << r.traddr << ":"
    << r.trsvcid << " (" << r.model << " " << r.firmware << ", IOCCSZ " << r.ioccsz
    << "): " << n.pass << " pass, " << n.fail << " FAIL (" << n.must_fail << " must, "
    << n.should_fail << " should), " << n.not_applicable << " n/a, " << n.not_run << " not run; "
    << static_cast<int>(r.seconds + 0.5) << " s\n";
  return o.str();
}

nlohmann::json to_json(const RunReport& r) {
  nlohmann::json j;
  j["target"] = {{"traddr", r.traddr},
                 {"trsvcid", r.trsvcid},
                 {"subnqn", r.subnqn},
                 {"model", r.model},
                 {"firmware", r.firmware},
                 {"ioccsz", r.ioccsz},
                 {"in_capsule_bytes", r.in_capsule_bytes}};
  Counts n = count(r);
  j["summary"] = {{"cases", r.cases.size()},
                  {"pass", n.pass},
                  {"fail", n.fail},
                  {"must_fail", n.must_fail},
                  {"should_fail", n.should_fail},
                  {"not_applicable", n.not_applicable},
                  {"not_run", n.not_run},
                  {"seconds", r.seconds},
                  {"unusable_after", r.unusable_after},
                  {"exit_code", exit_code(r)}};
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseReport& c : r.cases) {
    cases.push_back({{"id", c.c->id},
                     {"group", c.c->group},
                     {"level", level_name(c.c->level)},
                     {"spec", c.c->spec},
                     {"description", c.c->description},
                     {"sends", c.c->sends},
                     {"expect", c.c->expect},
                     {"dangerous", c.c->dangerous},
                     {"verdict", verdict_name(c.outcome.verdict)},
                     {"got", c.outcome.got},
                     {"ms", c.ms}});
  }
  j["cases"] = cases;
  return j;
}

namespace {
std::string xml_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') {
          o += '?';
        } else {
          o += ch;
        }
    }
  }
  return o;
}
}  // namespace

std::string junit_xml(const RunReport& r, const std::string& suite) {
  Counts n = count(r);
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\""
    << xml_escape(suite) << "\" tests=\"" << r.cases.size() << "\" failures=\"" << n.fail
    << "\" skipped=\"" << n.not_applicable + n.not_run << "\" time=\"" << r.seconds << "\">\n";
  for (const CaseReport& c : r.cases) {
    o << "<testcase classname=\"conform." << xml_escape(c.c->group) << "\" name=\""
      << xml_escape(c.c->id) << "\" time=\"" << c.ms / 1000.0 << "\">";
    switch (c.outcome.verdict) {
      case Verdict::kPass:
        break;
      case Verdict::kFail:
        // Must and should alike: a test report's failure is what its name says. (The exit
        // status counts must findings only: a conformance verdict for the command line.)
        o << "<failure message=\"" << xml_escape(c.outcome.got) << "\">"
          << xml_escape(std::string(c.c->level == Level::kMust ? "must (" : "should (") +
                        c.c->spec + "): expected " + c.c->expect)
          << "</failure>";
        break;
      case Verdict::kNotApplicable:
      case Verdict::kNotRun:
        o << "<skipped message=\"" << xml_escape(c.outcome.got) << "\"/>";
        break;
    }
    o << "</testcase>\n";
  }
  o << "</testsuite>\n</testsuites>\n";
  return o.str();
}

std::string list_text(const std::vector<Case>& all) {
  size_t wid = 2;
  for (const Case& c : all) wid = std::max(wid, std::strlen(c.id));
  std::ostringstream o;
  for (const Case& c : all) {
    o << pad(c.id, wid) << "  " << pad(level_name(c.level), 6) << "  "
      << pad(c.dangerous ? "dangerous" : "", 9) << "  " << c.spec << ": " << c.description << "\n";
  }
  o << all.size() << " cases\n";
  return o.str();
}

nlohmann::json list_json(const std::vector<Case>& all) {
  nlohmann::json cases = nlohmann::json::array();
  for (const Case& c : all) {
    cases.push_back({{"id", c.id},
                     {"group", c.group},
                     {"level", level_name(c.level)},
                     {"spec", c.spec},
                     {"description", c.description},
                     {"sends", c.sends},
                     {"expect", c.expect},
                     {"dangerous", c.dangerous}});
  }
  return {{"cases", std::move(cases)}, {"count", all.size()}};
}

}  // namespace nvmf::host::conform
