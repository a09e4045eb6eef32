// SPDX-License-Identifier: BSD-3-Clause
// The `nvmf-host conform` catalogue: one small function per case and one table row with its
// id, level, spec section, what it sends and which answers conform. Every case builds its own
// association (or bare queues) and drops them when it returns, so the target starts each case
// without this run's earlier controllers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "common/dhchap.h"
#include "common/nvme_status.h"
#include "common/sgl.h"
#include "host/ana.h"
#include "host/auth.h"
#include "host/conform/conform.h"
#include "proto/auth.h"
#include "proto/discovery.h"
#include "proto/fabrics.h"

namespace nvmf::host::conform {
namespace {

using proto::Cqe;
using proto::Sqe;

// A failed setup step (the target refused what every case needs) fails the case.
#define CONFORM_SETUP(var, expr)                                                      \
  auto var##_result = (expr);                                                         \
  if (!var##_result.ok()) return fail("setup: " + var##_result.status().to_string()); \
  auto& var = *var##_result
// A command whose answer the case judges: no answer (timeout, connection closed) fails.
#define CONFORM_ANSWER(var, expr)                                             \
  auto var##_result = (expr);                                                 \
  if (!var##_result.ok()) return fail(transport_text(var##_result.status())); \
  const Cqe& var = *var##_result

constexpr StatusExpect kInvalidOpcode = generic(proto::kScInvalidOpcode);
constexpr StatusExpect kInvalidField = generic(proto::kScInvalidField);
constexpr StatusExpect kSequenceError = generic(proto::kScCommandSequenceError);
constexpr StatusExpect kSglLength = generic(proto::kScDataSglLengthInvalid);
constexpr StatusExpect kSglType = generic(proto::kScSglDescriptorTypeInvalid);
constexpr StatusExpect kSglOffset = generic(proto::kScSglOffsetInvalid);
constexpr StatusExpect kLbaRange = generic(proto::kScLbaOutOfRange);
constexpr StatusExpect kInvalidNs = generic(proto::kScInvalidNamespaceOrFormat);
constexpr StatusExpect kConnectInvalid = specific(proto::kScConnectInvalidParameters);
constexpr StatusExpect kConnectInvalidHost = specific(proto::kScConnectInvalidHost);
constexpr StatusExpect kIncompatibleFormat = specific(proto::kScIncompatibleFormat);

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%llXh", static_cast<unsigned long long>(v));
  return buf;
}

std::string cm_text(const CmOutcome& o) {
  if (o.rejected) {
    char sts[8];
    std::snprintf(sts, sizeof(sts), "%02Xh", o.reject.sts);
    return o.reject_has_nvme_data ? std::string("CM reject STS ") + sts
                                  : "CM reject without NVMe-oF reject data";
  }
  if (o.established) return "CM accepted";
  return o.event;
}

// The CM request `priv` must be rejected with STS `sts`, or (when `connect` is given) accepted
// and the Connect it describes refused with `connect_any`.
Outcome cm_reject_or_refused(Session& s, const proto::CmRequestPrivateData& priv, uint16_t sts,
                             const ConnectSpec* connect,
                             std::initializer_list<StatusExpect> connect_any) {
  CONFORM_SETUP(q, s.raw());
  auto o = q->connect(cm_bytes(priv));
  if (!o.ok()) return fail(transport_text(o.status()));
  if (o->rejected) {
    return o->reject_has_nvme_data && o->reject.sts == sts ? pass(cm_text(*o)) : fail(cm_text(*o));
  }
  if (!o->established || connect == nullptr) return fail(cm_text(*o));
  CONFORM_ANSWER(c, s.connect(*q, *connect));
  Outcome r = judge_status(c.status, connect_any);
  r.got = "CM accepted, Connect: " + r.got;
  return r;
}

// ------------------------------------------------------------------------------ cm --

Outcome cm_recfmt_nonzero(Session& s) {
  auto p = cm_request(0, kAdminQueueSize, kAdminQueueSize - 1);
  p.recfmt = 1;
  return cm_reject_or_refused(s, p, proto::kCmRejectInvalidRecfmt, nullptr, {});
}

Outcome cm_admin_hsqsize_huge(Session& s) {
  auto spec = s.connect_spec(0, 0xFFFE, proto::kAdminQueueCntlid);
  return cm_reject_or_refused(s, cm_request(0, 0xFFFF, 0xFFFE), proto::kCmRejectInvalidHsqsize,
                              &spec, {kConnectInvalid});
}

Outcome cm_io_hsqsize_huge(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  auto spec = s.connect_spec(1, 0xFFFF, a.cntlid);
  return cm_reject_or_refused(s, cm_request(1, 0xFFFF, 0xFFFF), proto::kCmRejectInvalidHsqsize,
                              &spec, {kConnectInvalid});
}

Outcome cm_hsqsize_zero(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  auto spec = s.connect_spec(1, 0, a.cntlid);
  return cm_reject_or_refused(s, cm_request(1, 1, 0), proto::kCmRejectInvalidHsqsize, &spec,
                              {kConnectInvalid});
}

Outcome cm_hrqsize_zero(Session& s) {
  CONFORM_SETUP(q, s.raw());
  auto o = q->connect(cm_bytes(cm_request(0, 0, kAdminQueueSize - 1)));
  if (!o.ok()) return fail(transport_text(o.status()));
  if (o->rejected) {
    return o->reject_has_nvme_data && o->reject.sts == proto::kCmRejectInvalidHrqsize
               ? pass(cm_text(*o))
               : fail(cm_text(*o));
  }
  if (!o->established) return fail(cm_text(*o));
  auto c = s.connect(*q, s.connect_spec(0, kAdminQueueSize - 1, proto::kAdminQueueCntlid));
  if (!c.ok()) return fail("CM accepted, Connect: " + transport_text(c.status()));
  return pass("CM accepted, Connect answered: " + status_text(c->status));
}

Outcome cm_qid_huge(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  auto spec = s.connect_spec(0xFFFF, 31, a.cntlid);
  return cm_reject_or_refused(s, cm_request(0xFFFF, 32, 31), proto::kCmRejectInvalidQid, &spec,
                              {kConnectInvalid});
}

Outcome cm_no_read_resources(Session& s) {
  CONFORM_SETUP(q, s.raw());
  auto o = q->connect(cm_bytes(cm_request(0, kAdminQueueSize, kAdminQueueSize - 1)), 0, 0);
  if (!o.ok()) return fail(transport_text(o.status()));
  if (o->rejected) {
    return o->reject_has_nvme_data && o->reject.sts == proto::kCmRejectInvalidIrd
               ? pass(cm_text(*o))
               : fail(cm_text(*o));
  }
  if (!o->established) return fail(cm_text(*o));
  // Accepted: the keyed Connect data needs an RDMA READ the target may not issue.
  auto c = s.connect(*q, s.connect_spec(0, kAdminQueueSize - 1, proto::kAdminQueueCntlid));
  if (!c.ok()) return fail("CM accepted, Connect: " + transport_text(c.status()));
  return pass("CM accepted, Connect answered: " + status_text(c->status));
}

// ------------------------------------------------------------------------- connect --

Outcome connect_admin(Session& s) {
  CONFORM_SETUP(q, s.open(0, kAdminQueueSize));
  CONFORM_ANSWER(c, s.connect(*q, s.connect_spec(0, kAdminQueueSize - 1, 0xFFFF)));
  Outcome r = judge_status(c.status, {kSuccess});
  uint16_t cntlid = static_cast<uint16_t>(c.dw0);
  if (r.verdict == Verdict::kPass) {
    r.got += ", CNTLID " + hex(cntlid);
    if (cntlid == 0xFFFF || cntlid > 0xFFEF) r.verdict = Verdict::kFail;
  }
  return r;
}

// An admin Connect changed by `edit` must be refused with one of `any`.
template <typename Edit>
Outcome admin_connect_refused(Session& s, Edit edit, std::initializer_list<StatusExpect> any) {
  CONFORM_SETUP(q, s.open(0, kAdminQueueSize));
  ConnectSpec spec = s.connect_spec(0, kAdminQueueSize - 1, 0xFFFF);
  edit(spec);
  CONFORM_ANSWER(c, s.connect(*q, spec));
  Outcome r = judge_status(c.status, any);
  if (!status_is_success(c.status)) r.got += ", DW0 " + hex(c.dw0);
  return r;
}

// An I/O Connect (qid 1, 32 entries) of a live controller, changed by `edit`, must be refused.
template <typename Edit>
Outcome io_connect_refused(Session& s, Edit edit, std::initializer_list<StatusExpect> any,
                           uint16_t cm_entries = 32, uint16_t cm_qid = 1) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_SETUP(q, s.open(cm_qid, cm_entries));
  ConnectSpec spec = s.connect_spec(1, 31, a.cntlid);
  edit(spec, a);
  CONFORM_ANSWER(c, s.connect(*q, spec));
  Outcome r = judge_status(c.status, any);
  if (!status_is_success(c.status)) r.got += ", DW0 " + hex(c.dw0);
  return r;
}

// An I/O Connect to a controller the host has not enabled (CC.EN 0): the host enables the
// controller before it creates I/O queues (Base 2.0 §3.5.1); SPDK refuses it.
Outcome connect_io_before_enable(Session& s) {
  CONFORM_SETUP(a, s.associate(false, false));
  CONFORM_SETUP(q, s.open(1, 32));
  CONFORM_ANSWER(c, s.connect(*q, s.connect_spec(1, 31, a.cntlid)));
  Outcome r = judge_status(c.status, {kConnectInvalid, kSequenceError});
  if (!status_is_success(c.status)) r.got += ", DW0 " + hex(c.dw0);
  return r;
}

Outcome connect_admin_sqsize_zero(Session& s) {
  return admin_connect_refused(s, [](ConnectSpec& c) { c.sqsize = 0; }, {kConnectInvalid});
}

Outcome connect_unknown_subnqn(Session& s) {
  return admin_connect_refused(
      s, [](ConnectSpec& c) { c.subnqn = "nqn.2014-08.org.example:conform-no-such-subsystem"; },
      {kConnectInvalid});
}

Outcome connect_subnqn_unterminated(Session& s) {
  return admin_connect_refused(s, [](ConnectSpec& c) { c.subnqn_unterminated = true; },
                               {kConnectInvalid});
}

Outcome connect_hostnqn_unterminated(Session& s) {
  return admin_connect_refused(s, [](ConnectSpec& c) { c.hostnqn_unterminated = true; },
                               {kConnectInvalid, kConnectInvalidHost});
}

Outcome connect_hostnqn_empty(Session& s) {
  return admin_connect_refused(s, [](ConnectSpec& c) { c.hostnqn.clear(); },
                               {kConnectInvalid, kConnectInvalidHost});
}

Outcome connect_recfmt_nonzero(Session& s) {
  return admin_connect_refused(s, [](ConnectSpec& c) { c.recfmt = 1; }, {kIncompatibleFormat});
}

Outcome connect_data_short(Session& s) {
  return admin_connect_refused(s, [](ConnectSpec& c) { c.data_length = 512; },
                               {kSglLength, kConnectInvalid});
}

Outcome connect_io_unknown_cntlid(Session& s) {
  return io_connect_refused(s,
                            [](ConnectSpec& c, Association& a) {
                              c.cntlid =
                                  static_cast<uint16_t>(a.cntlid == 0x7FF0 ? 0x7FF1 : 0x7FF0);
                            },
                            {kConnectInvalid});
}

Outcome connect_io_cntlid_ffff(Session& s) {
  return io_connect_refused(s, [](ConnectSpec& c, Association&) { c.cntlid = 0xFFFF; },
                            {kConnectInvalid});
}

Outcome connect_io_other_hostnqn(Session& s) {
  return io_connect_refused(
      s,
      [](ConnectSpec& c, Association&) {
        c.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-00000000c0f0";
      },
      {kConnectInvalid, kConnectInvalidHost});
}

Outcome connect_io_other_hostid(Session& s) {
  return io_connect_refused(s, [](ConnectSpec& c, Association&) { c.hostid[0] ^= 0xFF; },
                            {kConnectInvalid});
}

Outcome connect_io_sqsize_above_cm(Session& s) {
  return io_connect_refused(s, [](ConnectSpec& c, Association&) { c.sqsize = 63; },
                            {kConnectInvalid});
}

Outcome connect_qid_differs_from_cm(Session& s) {
  return io_connect_refused(
      s, [](ConnectSpec& c, Association&) { c.qid = 2; }, {kConnectInvalid}, 32, 1);
}

Outcome connect_io_qid_above_granted(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  Sqe nq = set_num_queues_sqe(1);
  nq.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(nq.dptr);
  CONFORM_ANSWER(g, s.run(*a.admin, nq));
  if (!status_is_success(g.status))
    return fail("Set Features Number of Queues: " + status_text(g.status));
  uint32_t granted = granted_num_queues(g.dw0);
  if (granted >= 0xFFFE) return not_applicable("65534 or more I/O queues granted");
  uint16_t qid = static_cast<uint16_t>(granted + 1);
  CONFORM_SETUP(q, s.raw());
  auto o = q->connect(cm_bytes(cm_request(qid, 32, 31)));
  if (!o.ok()) return fail(transport_text(o.status()));
  std::string head = "qid " + std::to_string(qid) + " (" + std::to_string(granted) + " granted): ";
  if (o->rejected) {
    Outcome r = o->reject_has_nvme_data && o->reject.sts == proto::kCmRejectInvalidQid
                    ? pass(cm_text(*o))
                    : fail(cm_text(*o));
    r.got = head + r.got;
    return r;
  }
  CONFORM_ANSWER(c, s.connect(*q, s.connect_spec(qid, 31, a.cntlid)));
  Outcome r = judge_status(c.status, {kConnectInvalid});
  r.got = head + r.got;
  return r;
}

// A second Connect on a connected queue: Command Sequence Error; the queue keeps working.
Outcome connect_second(Session& s, bool io) {
  CONFORM_SETUP(a, s.associate(true, io));
  RawQueue& q = io ? *a.io : *a.admin;
  ConnectSpec spec = s.connect_spec(io ? 1 : 0, 31, io ? a.cntlid : 0xFFFF);
  CONFORM_ANSWER(c, s.connect(q, spec));
  Outcome r = judge_status(c.status, {generic(proto::kScCommandSequenceError, true)});
  if (io) {
    auto rd = s.run(q, s.keyed_io(q, proto::kNvmRead, 0, 1, s.facts().lba_size));
    if (!rd.ok() || !status_is_success(rd->status)) {
      r.verdict = Verdict::kFail;
      r.got +=
          "; then a Read: " + (rd.ok() ? status_text(rd->status) : transport_text(rd.status()));
    }
  } else {
    auto pg = s.property_get(q, proto::kPropCsts, false);
    if (!pg.ok() || !status_is_success(pg->status)) {
      r.verdict = Verdict::kFail;
      r.got += "; then Property Get: " +
               (pg.ok() ? status_text(pg->status) : transport_text(pg.status()));
    }
  }
  return r;
}
Outcome connect_second_admin(Session& s) { return connect_second(s, false); }
Outcome connect_second_io(Session& s) { return connect_second(s, true); }

Outcome connect_live_qid(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  CONFORM_SETUP(q, s.open(1, 32));
  CONFORM_ANSWER(c, s.connect(*q, s.connect_spec(1, 31, a.cntlid)));
  Outcome r = judge_status(c.status, {kSequenceError, kConnectInvalid});
  q.reset();
  auto rd = s.run(*a.io, s.keyed_io(*a.io, proto::kNvmRead, 0, 1, s.facts().lba_size));
  if (!rd.ok() || !status_is_success(rd->status)) {
    r.verdict = Verdict::kFail;
    r.got += "; then a Read on the live qid 1: " +
             (rd.ok() ? status_text(rd->status) : transport_text(rd.status()));
  }
  return r;
}

Outcome connect_command_before_connect_admin(Session& s) {
  CONFORM_SETUP(q, s.open(0, kAdminQueueSize));
  CONFORM_ANSWER(c, s.property_get(*q, proto::kPropCap, true));
  return judge_status(c.status, {kSequenceError});
}

Outcome connect_command_before_connect_io(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));  // the controller qid 1 would belong to
  (void)a;
  CONFORM_SETUP(q, s.open(1, 32));
  CONFORM_ANSWER(c, s.run(*q, s.keyed_io(*q, proto::kNvmRead, 0, 1, s.facts().lba_size)));
  return judge_status(c.status, {kSequenceError});
}

// ------------------------------------------------------------------------ property --

Outcome prop_cap(Session& s) {
  CONFORM_SETUP(a, s.associate(false, false));
  CONFORM_ANSWER(c, s.property_get(*a.admin, proto::kPropCap, true));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  uint64_t cap = c.dw0 | (uint64_t{c.dw1} << 32);
  std::string got = "CAP " + hex(cap);
  bool ok = (cap & proto::kCapMqesMask) >= 1 && (cap & proto::kCapCqr) != 0 &&
            (cap & proto::kCapToMask) != 0;
  return ok ? pass(got) : fail(got);
}

Outcome prop_vs(Session& s) {
  CONFORM_SETUP(a, s.associate(false, false));
  CONFORM_ANSWER(c, s.property_get(*a.admin, proto::kPropVs, false));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  uint32_t vs = c.dw0, ver = s.facts().ctrl.ver;
  std::string got = "VS " + hex(vs) + ", Identify VER " + hex(ver);
  bool ok = vs >= proto::make_version(1, 2, 1) && (ver == 0 || ver == vs);
  return ok ? pass(got) : fail(got);
}

Outcome prop_cc_readback(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, s.property_get(*a.admin, proto::kPropCc, false));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  std::string got = "CC " + hex(c.dw0);
  return c.dw0 == kCcEnable ? pass(got) : fail(got);
}

Outcome prop_csts_ready(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, s.property_get(*a.admin, proto::kPropCsts, false));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  std::string got = "CSTS " + hex(c.dw0);
  return (c.dw0 & (proto::kCstsRdy | proto::kCstsCfs)) == proto::kCstsRdy ? pass(got) : fail(got);
}

// Polls CSTS until (CSTS & mask) == want, for up to `ms`; returns the last CSTS or an error.
Result<uint32_t> wait_csts(Session& s, RawQueue& admin, uint32_t mask, uint32_t want, int ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    NVMF_ASSIGN_OR_RETURN(Cqe c, s.property_get(admin, proto::kPropCsts, false));
    if (!status_is_success(c.status)) {
      return Status::nvme_error(c.status, "Property Get CSTS: " + status_text(c.status));
    }
    if ((c.dw0 & mask) == want || std::chrono::steady_clock::now() > deadline) return c.dw0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Outcome prop_reset(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  CONFORM_ANSWER(c, s.property_set(*a.admin, proto::kPropCc, 0));
  if (!status_is_success(c.status)) return fail("Property Set CC 0: " + status_text(c.status));
  auto st =
      wait_csts(s, *a.admin, proto::kCstsRdy, 0, static_cast<int>(cap_timeout_ms(s.facts().cap)));
  if (!st.ok()) return fail(transport_text(st.status()));
  std::string got = "CSTS " + hex(*st);
  if (*st & proto::kCstsRdy) return fail(got + " (RDY still 1 after CAP.TO)");
  auto rd = s.run(*a.io, s.keyed_io(*a.io, proto::kNvmRead, 0, 1, s.facts().lba_size));
  if (rd.ok() && status_is_success(rd->status)) return fail(got + "; a Read then succeeded");
  got += "; then a Read: " + (rd.ok() ? status_text(rd->status) : transport_text(rd.status()));
  return pass(got);
}

Outcome prop_shutdown(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, s.property_set(*a.admin, proto::kPropCc, cc_with_normal_shutdown(kCcEnable)));
  if (!status_is_success(c.status)) return fail("Property Set CC.SHN: " + status_text(c.status));
  uint32_t want = proto::kShstComplete << proto::kCstsShstShift;
  auto st = wait_csts(s, *a.admin, proto::kCstsShstMask, want, 10000);
  if (!st.ok()) return fail(transport_text(st.status()));
  std::string got = "CSTS " + hex(*st);
  return (*st & proto::kCstsShstMask) == want ? pass(got) : fail(got + " (SHST not 10b in 10 s)");
}

Outcome prop_get_reserved(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, s.property_get(*a.admin, 0x100, false));
  return judge_status(c.status, {kInvalidField});
}

// Property Get of VS with ATTRIB.SIZE 2 (reserved: 0 is 4 bytes, 1 is 8 bytes).
Outcome prop_get_reserved_size(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  Sqe g = property_get_sqe(proto::kPropVs, false);
  reinterpret_cast<proto::PropertyGetCommand&>(g).attrib = 2;
  g.flags = proto::kFlagsPsdtSgl;
  encode_null_sgl(g.dptr);
  CONFORM_ANSWER(c, s.run(*a.admin, g));
  Outcome r = judge_status(c.status, {kInvalidField});
  if (status_is_success(c.status)) r.got += ", DW0 " + hex(c.dw0);
  return r;
}

Outcome prop_set_read_only(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, s.property_set(*a.admin, proto::kPropCsts, 0));
  auto st = s.property_get(*a.admin, proto::kPropCsts, false);
  if (!st.ok()) return fail(transport_text(st.status()));
  std::string got = status_text(c.status) + ", CSTS then " + hex(st->dw0);
  if (!(st->dw0 & proto::kCstsRdy)) return fail(got);
  return status_matches(c.status, kInvalidField) || status_is_success(c.status) ? pass(got)
                                                                                : fail(got);
}

Outcome prop_cc_bad_iosqes(Session& s) {
  CONFORM_SETUP(a, s.associate(false, false));
  uint32_t cc = (kCcEnable & ~proto::kCcIosqesMask) | (5u << proto::kCcIosqesShift);
  CONFORM_ANSWER(c, s.property_set(*a.admin, proto::kPropCc, cc));
  if (!status_is_success(c.status)) return pass("Property Set refused: " + status_text(c.status));
  auto st = wait_csts(s, *a.admin, proto::kCstsRdy, proto::kCstsRdy, 1000);
  if (!st.ok()) return fail(transport_text(st.status()));
  std::string got = "Property Set success, CSTS " + hex(*st);
  return (*st & proto::kCstsRdy) ? fail(got) : pass(got);
}

Outcome prop_on_io_queue(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  CONFORM_ANSWER(c, s.property_get(*a.io, proto::kPropCap, true));
  return judge_status(c.status, {kInvalidOpcode, kInvalidField});
}

Outcome fabrics_fctype_reserved(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  Sqe f = Session::sqe(proto::kOpcodeFabrics);
  reinterpret_cast<proto::FabricsCommand*>(&f)->fctype = 0x7C;
  CONFORM_ANSWER(c, s.run(*a.admin, f));
  return judge_status(c.status, {kInvalidOpcode, kInvalidField});
}

// ------------------------------------------------------------------------ identify --

Result<Cqe> identify(Session& s, RawQueue& q, uint8_t cns, uint32_t nsid, uint32_t len = 4096) {
  Sqe id = identify_sqe(cns, nsid);
  q.set_keyed(id, 0, len);
  std::memset(q.data(), 0xA5, 4096);
  return s.run(q, id);
}

Outcome identify_controller(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsController, 0));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  proto::IdentifyController id;
  std::memcpy(&id, a.admin->data(), sizeof(id));
  std::string subnqn(id.subnqn, strnlen(id.subnqn, sizeof(id.subnqn)));
  std::string got = "CNTRLTYPE " + std::to_string(id.cntrltype) + ", SUBNQN " + subnqn;
  bool ok = subnqn == s.options().subnqn &&
            (id.cntrltype == proto::kCntrltypeIo || (id.cntrltype == 0 && id.ver < 0x10400));
  return ok ? pass(got) : fail(got);
}

Outcome identify_fabrics_fields(Session& s) {
  const auto& id = s.facts().ctrl;
  std::string got = "IOCCSZ " + std::to_string(id.ioccsz) + ", IORCSZ " +
                    std::to_string(id.iorcsz) + ", MSDBD " + std::to_string(id.msdbd) + ", KAS " +
                    std::to_string(id.kas);
  return id.ioccsz >= 4 && id.iorcsz == 1 && id.msdbd >= 1 && id.kas != 0 ? pass(got) : fail(got);
}

Outcome identify_sgls(Session& s) {
  const auto& id = s.facts().ctrl;
  std::string got = "SGLS " + hex(id.sgls) + ", IOCCSZ " + std::to_string(id.ioccsz);
  bool ok = (id.sgls & proto::kSglsSupportMask) != 0 && (id.sgls & proto::kSglsKeyedDataBlock) &&
            (id.ioccsz <= 4 || (id.sgls & proto::kSglsOffset));
  return ok ? pass(got) : fail(got);
}

Outcome identify_icdoff(Session& s) {
  uint16_t icdoff = s.facts().ctrl.icdoff;
  std::string got = "ICDOFF " + std::to_string(icdoff);
  return icdoff == 0 ? pass(got) : fail(got);
}

Outcome identify_namespace(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsNamespace, s.facts().nsid));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  proto::IdentifyNamespace ns;
  std::memcpy(&ns, a.admin->data(), sizeof(ns));
  std::string got = "NSZE " + std::to_string(ns.nsze) + ", NCAP " + std::to_string(ns.ncap) +
                    ", NUSE " + std::to_string(ns.nuse) + ", FLBAS " + std::to_string(ns.flbas) +
                    ", NLBAF " + std::to_string(ns.nlbaf);
  bool ok = ns.nsze > 0 && ns.ncap <= ns.nsze && ns.nuse <= ns.ncap &&
            (ns.flbas & proto::kFlbasFormatMask) <= ns.nlbaf;
  return ok ? pass(got) : fail(got);
}

Outcome identify_namespace_invalid(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsNamespace, 0xFFFFFFFE));
  return judge_status(c.status, {kInvalidNs});
}

Outcome identify_active_list(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsActiveNamespaceList, 0));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  uint32_t list[1024];
  std::memcpy(list, a.admin->data(), sizeof(list));
  bool found = false, ascending = true, zero_tail = true;
  size_t n = 0;
  while (n < 1024 && list[n] != 0) {
    if (n > 0 && list[n] <= list[n - 1]) ascending = false;
    if (list[n] == s.facts().nsid) found = true;
    ++n;
  }
  for (size_t i = n; i < 1024; ++i) zero_tail = zero_tail && list[i] == 0;
  std::string got = std::to_string(n) + " NSIDs, first " + std::to_string(list[0]);
  return found && ascending && zero_tail ? pass(got)
                                         : fail(got + (ascending ? "" : ", not ascending"));
}

// CNS 02h lists the active NSIDs greater than the NSID given: from the last active one, none.
Outcome identify_active_list_after_last(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(all, identify(s, *a.admin, proto::kCnsActiveNamespaceList, 0));
  if (!status_is_success(all.status)) return fail("from NSID 0: " + status_text(all.status));
  uint32_t list[1024];
  std::memcpy(list, a.admin->data(), sizeof(list));
  uint32_t last = 0;
  for (size_t n = 0; n < 1024 && list[n] != 0; ++n) last = list[n];
  if (last == 0) return fail("no active NSID from NSID 0");
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsActiveNamespaceList, last));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  uint32_t first = 0;
  std::memcpy(&first, a.admin->data(), sizeof(first));
  std::string got = "from NSID " + std::to_string(last) + ": first " + std::to_string(first);
  return first == 0 ? pass(got) : fail(got);
}

// CNS 02h with NSID FFFFFFFEh or FFFFFFFFh: Invalid Namespace or Format (Base 2.0 §5.17.2.2).
Outcome identify_active_list_nsid_fffffffe(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsActiveNamespaceList, 0xFFFFFFFE));
  return judge_status(c.status, {kInvalidNs});
}

Outcome identify_ns_descriptors(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsNamespaceIdDescriptorList, s.facts().nsid));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  const uint8_t* d = a.admin->data();
  size_t off = 0;
  int count = 0;
  std::string got;
  while (off + 4 <= 4096 && d[off] != 0) {
    uint8_t nidt = d[off], nidl = d[off + 1];
    uint8_t want = nidt == 1 ? 8 : nidt == 2 || nidt == 3 ? 16 : nidt == 4 ? 1 : 0;
    got += (got.empty() ? "" : ", ") +
           ("NIDT " + std::to_string(nidt) + " NIDL " + std::to_string(nidl));
    if (want == 0 || nidl != want) return fail(got + " (malformed)");
    off += 4 + nidl;
    ++count;
  }
  if (count == 0) return fail("no descriptor");
  return pass(got);
}

Outcome identify_cns_reserved(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, identify(s, *a.admin, 0xFF, 0));
  return judge_status(c.status, {kInvalidField});
}

Outcome identify_sgl_short(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsController, 0, 512));
  return judge_status(c.status, {kSglLength});
}

// ------------------------------------------------------------------------ features --

Sqe get_features(uint8_t fid) {
  Sqe f = Session::sqe(proto::kAdminGetFeatures);
  f.cdw10 = fid;
  return f;
}
Sqe set_features(uint8_t fid, uint32_t value) {
  Sqe f = Session::sqe(proto::kAdminSetFeatures);
  f.cdw10 = fid;
  f.cdw11 = value;
  return f;
}

Outcome features_number_of_queues(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(set, s.run(*a.admin, set_features(proto::kFeatureNumberOfQueues, 0x00030003)));
  if (!status_is_success(set.status)) return fail("Set: " + status_text(set.status));
  CONFORM_ANSWER(get, s.run(*a.admin, get_features(proto::kFeatureNumberOfQueues)));
  if (!status_is_success(get.status)) return fail("Get: " + status_text(get.status));
  std::string got = "Set DW0 " + hex(set.dw0) + ", Get DW0 " + hex(get.dw0);
  return set.dw0 == get.dw0 ? pass(got) : fail(got);
}

Outcome features_number_of_queues_after_io(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  CONFORM_ANSWER(c, s.run(*a.admin, set_features(proto::kFeatureNumberOfQueues, 0x00030003)));
  return judge_status(c.status, {kSequenceError});
}

Outcome features_kato(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false, 32, 5000));
  CONFORM_ANSWER(c, s.run(*a.admin, get_features(proto::kFeatureKeepAliveTimer)));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  uint32_t gran = std::max<uint32_t>(1, s.facts().ctrl.kas) * 100;
  std::string got = "KATO " + std::to_string(c.dw0) + " ms";
  return c.dw0 >= 5000 && c.dw0 < 5000 + gran ? pass(got) : fail(got);
}

Outcome features_reserved_fid(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, s.run(*a.admin, get_features(0x00)));
  return judge_status(c.status, {kInvalidField});
}

Outcome features_async_event_config(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, s.run(*a.admin, set_features(proto::kFeatureAsyncEventConfig, 0)));
  return judge_status(c.status, {kSuccess});
}

// ------------------------------------------------------------------------------ log --

// Get Log Page of `bytes` (a multiple of 4) at `offset`, keyed into the data buffer.
Sqe get_log(RawQueue& q, uint8_t lid, uint32_t bytes, uint64_t offset, uint32_t nsid) {
  Sqe g = Session::sqe(proto::kAdminGetLogPage, nsid);
  uint32_t numd = bytes / 4 - 1;
  g.cdw10 = lid | ((numd & 0xFFFF) << 16);
  g.cdw11 = numd >> 16;
  g.cdw12 = static_cast<uint32_t>(offset);
  g.cdw13 = static_cast<uint32_t>(offset >> 32);
  q.set_keyed(g, 0, bytes);
  return g;
}

Outcome log_page(Session& s, uint8_t lid, uint32_t bytes, uint64_t offset,
                 std::initializer_list<StatusExpect> any) {
  CONFORM_SETUP(a, s.associate(true, false));
  CONFORM_ANSWER(c, s.run(*a.admin, get_log(*a.admin, lid, bytes, offset, 0xFFFFFFFF)));
  return judge_status(c.status, any);
}
Outcome log_error_information(Session& s) { return log_page(s, 0x01, 64, 0, {kSuccess}); }
Outcome log_smart(Session& s) { return log_page(s, 0x02, 512, 0, {kSuccess}); }
Outcome log_reserved_lid(Session& s) {
  return log_page(s, 0x7F, 512, 0, {specific(proto::kScInvalidLogPage)});
}
Outcome log_offset_not_dword(Session& s) { return log_page(s, 0x02, 64, 2, {kInvalidField}); }
Outcome log_offset_past_end(Session& s) { return log_page(s, 0x02, 64, 4096, {kInvalidField}); }

// The discovery log's offset past its end: the same rule as any log page (Base 2.0 §5.16).
Outcome log_discovery_offset_past_end(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false, 32, 0, proto::kDiscoveryNqn));
  CONFORM_ANSWER(h, s.run(*a.admin, get_log(*a.admin, 0x70, 1024, 0, 0)));
  if (!status_is_success(h.status)) return fail("header: " + status_text(h.status));
  uint64_t numrec;
  std::memcpy(&numrec, a.admin->data() + 8, 8);
  if (numrec > 64) return not_applicable("NUMREC " + std::to_string(numrec) + ", above 64");
  const uint64_t beyond = 1024 * (numrec + 1) + 4096;  // past the header and every entry
  CONFORM_ANSWER(c, s.run(*a.admin, get_log(*a.admin, 0x70, 1024, beyond, 0)));
  Outcome r = judge_status(c.status, {kInvalidField});
  r.got = "NUMREC " + std::to_string(numrec) + ", LPO " + std::to_string(beyond) + ": " + r.got;
  return r;
}

Outcome log_discovery_partial(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false, 32, 0, proto::kDiscoveryNqn));
  CONFORM_ANSWER(h, s.run(*a.admin, get_log(*a.admin, 0x70, 1024, 0, 0)));
  if (!status_is_success(h.status)) return fail("header: " + status_text(h.status));
  uint64_t genctr, numrec;
  std::memcpy(&genctr, a.admin->data(), 8);
  std::memcpy(&numrec, a.admin->data() + 8, 8);
  std::string got = "NUMREC " + std::to_string(numrec);
  if (numrec == 0) return fail(got + " (this subsystem not listed)");
  if (numrec > 64) return not_applicable(got + ", above 64");
  uint32_t total = static_cast<uint32_t>(1024 * (numrec + 1));
  CONFORM_ANSWER(all, s.run(*a.admin, get_log(*a.admin, 0x70, total, 0, 0)));
  if (!status_is_success(all.status)) return fail(got + ", whole log: " + status_text(all.status));
  std::vector<uint8_t> whole(a.admin->data(), a.admin->data() + total);
  // Each entry alone, at its offset: the bytes must be those of the whole read.
  for (uint64_t e = 0; e < numrec; ++e) {
    CONFORM_ANSWER(one, s.run(*a.admin, get_log(*a.admin, 0x70, 1024, 1024 * (e + 1), 0)));
    if (!status_is_success(one.status)) {
      return fail(got + ", entry " + std::to_string(e) + ": " + status_text(one.status));
    }
    if (std::memcmp(a.admin->data(), whole.data() + 1024 * (e + 1), 1024) != 0) {
      return fail(got + ", entry " + std::to_string(e) + " read alone differs");
    }
  }
  uint64_t genctr2;
  std::memcpy(&genctr2, whole.data(), 8);
  if (genctr2 != genctr) return fail(got + ", GENCTR changed");
  return pass(got + ", every entry read alone equals the whole read");
}

// ----------------------------------------------------------------------------- ana --

// ANA reporting (CMIC bit 3) or why the ANA cases do not apply.
std::optional<Outcome> ana_not_reported(const Session& s) {
  if ((s.facts().ctrl.cmic & proto::kCmicAna) == 0) {
    return not_applicable("CMIC bit 3 clear: the controller reports no ANA");
  }
  return std::nullopt;
}

// The ANA log page read whole (Linux's size, at most the data buffer), decoded.
Result<AnaLog> read_ana_log(Session& s, RawQueue& admin, uint32_t extra_cdw10,
                            std::vector<uint8_t>* raw = nullptr) {
  // Linux's size, within MDTS and the queue's data buffer.
  uint64_t want = std::min<uint64_t>(ana_log_bytes(s.facts().ctrl), 256 * 1024);
  if (s.facts().mdts_bytes != 0) want = std::min(want, s.facts().mdts_bytes);
  const auto bytes = static_cast<uint32_t>((want + 3) / 4 * 4);
  Sqe g = get_log(admin, proto::kLogAna, bytes, 0, 0xFFFFFFFF);
  g.cdw10 |= extra_cdw10;
  NVMF_ASSIGN_OR_RETURN(proto::Cqe c, s.run(admin, g));
  if (!status_is_success(c.status)) return Status::io("Get Log Page 0Ch: " + status_text(c.status));
  std::span<const uint8_t> log(admin.data(), bytes);
  if (raw != nullptr) raw->assign(log.begin(), log.end());
  return decode_ana_log(log, s.facts().ctrl.anagrpmax);
}

std::string ana_log_text(const AnaLog& log) {
  std::string t = "change count " + std::to_string(log.change_count) + ", groups";
  for (const AnaGroup& g : log.groups) {
    t += " " + std::to_string(g.grpid) + ":" + ana_state_text(g.state) + "(" +
         std::to_string(g.nsids.size()) + ")";
  }
  return t;
}

Outcome ana_identify(Session& s) {
  if (auto na = ana_not_reported(s)) return *na;
  const proto::IdentifyController& id = s.facts().ctrl;
  char got[200];
  std::snprintf(got, sizeof(got),
                "ANATT %u s, ANACAP %02Xh, ANAGRPMAX %u, NANAGRPID %u, OAES bit 11 %u, NSID %u in "
                "ANAGRPID %u",
                id.anatt, id.anacap, id.anagrpmax, id.nanagrpid, (id.oaes >> 11) & 1,
                s.facts().nsid, s.facts().anagrpid);
  const bool ok = id.anatt > 0 && (id.anacap & 0x1F) != 0 && id.nanagrpid >= 1 &&
                  id.nanagrpid <= id.anagrpmax && (id.oaes & proto::kAecAnaChange) != 0 &&
                  s.facts().anagrpid >= 1 && s.facts().anagrpid <= id.anagrpmax;
  return ok ? pass(got) : fail(got);
}

Outcome ana_log(Session& s) {
  if (auto na = ana_not_reported(s)) return *na;
  CONFORM_SETUP(a, s.associate(true, false));
  Result<AnaLog> log = read_ana_log(s, *a.admin, 0);
  if (!log.ok()) return fail(log.status().message());
  std::string got = ana_log_text(*log);
  const AnaGroup* g = log->group_of_nsid(s.facts().nsid);
  if (g == nullptr) return fail(got + "; NSID " + std::to_string(s.facts().nsid) + " in none");
  got += "; NSID " + std::to_string(s.facts().nsid) + " in group " + std::to_string(g->grpid);
  if (g->grpid != s.facts().anagrpid) {
    return fail(got + ", Identify Namespace says " + std::to_string(s.facts().anagrpid));
  }
  for (const AnaGroup& each : log->groups) {
    if (each.change_count > log->change_count) {
      return fail(got + "; group " + std::to_string(each.grpid) +
                  "'s change count above the log's");
    }
  }
  return pass(got);
}

Outcome ana_log_rgo(Session& s) {
  if (auto na = ana_not_reported(s)) return *na;
  CONFORM_SETUP(a, s.associate(true, false));
  Result<AnaLog> whole = read_ana_log(s, *a.admin, 0);
  if (!whole.ok()) return fail("without RGO: " + whole.status().message());
  Result<AnaLog> rgo = read_ana_log(s, *a.admin, proto::kAnaLogRgo);
  if (!rgo.ok()) return fail("with RGO: " + rgo.status().message());
  std::string got = "RGO: " + ana_log_text(*rgo);
  if (rgo->groups.size() != whole->groups.size()) return fail(got + "; other groups than without");
  for (size_t i = 0; i < rgo->groups.size(); ++i) {
    const AnaGroup& r = rgo->groups[i];
    if (!r.nsids.empty()) return fail(got + "; group " + std::to_string(r.grpid) + " lists NSIDs");
    if (r.grpid != whole->groups[i].grpid || r.state != whole->groups[i].state) {
      return fail(got + "; group " + std::to_string(r.grpid) + " differs from the whole log");
    }
  }
  return pass(got);
}

Outcome ana_log_offset(Session& s) {
  if (auto na = ana_not_reported(s)) return *na;
  CONFORM_SETUP(a, s.associate(true, false));
  std::vector<uint8_t> whole;
  Result<AnaLog> log = read_ana_log(s, *a.admin, 0, &whole);
  if (!log.ok()) return fail(log.status().message());
  CONFORM_ANSWER(c, s.run(*a.admin, get_log(*a.admin, proto::kLogAna, 32, 16, 0xFFFFFFFF)));
  if (!status_is_success(c.status)) return fail("LPO 16: " + status_text(c.status));
  if (std::memcmp(a.admin->data(), whole.data() + 16, 32) != 0) {
    return fail("LPO 16, 32 bytes: not bytes 16..47 of the whole log (the first descriptor)");
  }
  return pass("LPO 16, 32 bytes: the first descriptor, as in the whole log");
}

// I/O to a namespace whose group this port presents inaccessible, lost or changing: the path
// status, without DNR, so that a host retries on another path.
Outcome ana_path_status(Session& s) {
  if (auto na = ana_not_reported(s)) return *na;
  CONFORM_SETUP(a, s.associate(true, true));
  Result<AnaLog> log = read_ana_log(s, *a.admin, 0);
  if (!log.ok()) return fail(log.status().message());
  for (const AnaGroup& g : log->groups) {
    uint8_t sc = 0;
    if (g.state == proto::kAnaInaccessible) sc = proto::kScAnaInaccessible;
    if (g.state == proto::kAnaPersistentLoss) sc = proto::kScAnaPersistentLoss;
    if (g.state == proto::kAnaChange) sc = proto::kScAnaTransition;
    if (sc == 0 || g.nsids.empty()) continue;
    Sqe r = s.keyed_io(*a.io, proto::kNvmRead, 0, 1, s.facts().lba_size);
    r.nsid = g.nsids.front();
    CONFORM_ANSWER(c, s.run(*a.io, r));
    Outcome o = judge_status(c.status, {StatusExpect{proto::kSctPath, sc, false}});
    if ((c.status & proto::kStatusDnr) != 0) o = fail(o.got);
    o.got = "Read of NSID " + std::to_string(r.nsid) + " (group " + std::to_string(g.grpid) + ", " +
            ana_state_text(g.state) + "): " + o.got;
    return o;
  }
  return not_applicable("no group with a namespace is inaccessible, lost or changing here");
}

// ----------------------------------------------------------------------- keepalive --

Outcome keepalive_command(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false, 32, 5000));
  CONFORM_ANSWER(c, s.run(*a.admin, Session::sqe(proto::kAdminKeepAlive)));
  return judge_status(c.status, {kSuccess});
}

Outcome keepalive_expiry(Session& s) {
  auto t0 = std::chrono::steady_clock::now();
  CONFORM_SETUP(a, s.associate(true, false, 32, 1000));
  bool gone = a.admin->wait_disconnected(2 * 1000 + 2000);
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  if (!gone) return fail("still connected after " + std::to_string(ms) + " ms");
  return pass("disconnected after " + std::to_string(ms) + " ms");
}

Outcome keepalive_traffic(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false, 32, 1000));
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(3000);
  int sent = 0;
  while (std::chrono::steady_clock::now() < end) {
    CONFORM_ANSWER(c, s.run(*a.admin, Session::sqe(proto::kAdminKeepAlive)));
    if (!status_is_success(c.status)) return fail("Keep Alive: " + status_text(c.status));
    ++sent;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  CONFORM_ANSWER(c, s.property_get(*a.admin, proto::kPropCsts, false));
  std::string got = std::to_string(sent) + " Keep Alives in 3 s, then " + status_text(c.status);
  return status_is_success(c.status) ? pass(got) : fail(got);
}

// ----------------------------------------------------------------------------- sgl --

// A Read of one LBA on the I/O queue with SGL1 changed by `edit`, judged against `any`.
template <typename Edit>
Outcome io_read_edited(Session& s, Edit edit, std::initializer_list<StatusExpect> any) {
  CONFORM_SETUP(a, s.associate(true, true));
  Sqe r = s.keyed_io(*a.io, proto::kNvmRead, 0, 1, s.facts().lba_size);
  edit(r);
  CONFORM_ANSWER(c, s.run(*a.io, r));
  return judge_status(c.status, any);
}

Outcome sgl_psdt_prp(Session& s) {
  return io_read_edited(s, [](Sqe& r) { r.flags = proto::kFlagsPsdtPrp; }, {kInvalidField});
}
Outcome sgl_fused(Session& s) {
  if (s.facts().ctrl.fuses & 1) return not_applicable("FUSES bit 0 set");
  return io_read_edited(s, [](Sqe& r) { r.flags |= 0x01; }, {kInvalidField});
}
Outcome sgl_type(Session& s, uint8_t id, std::initializer_list<StatusExpect> any) {
  return io_read_edited(
      s, [id](Sqe& r) { r.dptr.id = id; }, any);
}
Outcome sgl_segment(Session& s) { return sgl_type(s, 0x20, {kSglType}); }
Outcome sgl_last_segment(Session& s) { return sgl_type(s, 0x30, {kSglType}); }
Outcome sgl_bit_bucket(Session& s) {
  if (s.facts().ctrl.sgls & proto::kSglsBitBucket) return not_applicable("SGLS bit 16 set");
  return sgl_type(s, 0x10, {kSglType});
}
Outcome sgl_vendor(Session& s) { return sgl_type(s, 0xF0, {kSglType}); }
Outcome sgl_keyed_subtype_reserved(Session& s) {
  return sgl_type(s, 0x41, {kSglType, kInvalidField});
}
Outcome sgl_data_block_address(Session& s) { return sgl_type(s, 0x00, {kSglType, kInvalidField}); }
Outcome sgl_in_capsule_on_read(Session& s) {
  return io_read_edited(s, [&](Sqe& r) { encode_in_capsule_sgl(r.dptr, 0, s.facts().lba_size); },
                        {kInvalidField, kSglType, kSglLength});
}

Outcome keyed_read(Session& s, uint32_t nlb, uint32_t length,
                   std::initializer_list<StatusExpect> any) {
  CONFORM_SETUP(a, s.associate(true, true));
  CONFORM_ANSWER(c, s.run(*a.io, s.keyed_io(*a.io, proto::kNvmRead, 0, nlb, length)));
  return judge_status(c.status, any);
}
Outcome sgl_keyed_above_nlb(Session& s) {
  return keyed_read(s, 1, 2 * s.facts().lba_size, {kSglLength});
}
Outcome sgl_keyed_below_nlb(Session& s) {
  return keyed_read(s, 2, s.facts().lba_size, {kSglLength});
}
Outcome sgl_keyed_zero(Session& s) { return keyed_read(s, 1, 0, {kSglLength}); }

constexpr uint64_t kMaxTestBytes = RawQueue::kDataBytes - 8192;  // 1 MiB

Outcome sgl_keyed_at_mdts(Session& s) {
  uint64_t bytes = s.facts().mdts_bytes == 0 ? kMaxTestBytes : s.facts().mdts_bytes;
  bytes = std::min<uint64_t>({bytes, kMaxTestBytes, s.facts().nsze * s.facts().lba_size});
  uint32_t nlb = static_cast<uint32_t>(std::min<uint64_t>(bytes / s.facts().lba_size, 65536));
  Outcome r = keyed_read(s, nlb, nlb * s.facts().lba_size, {kSuccess});
  r.got = std::to_string(nlb * s.facts().lba_size) + " bytes: " + r.got;
  return r;
}

Outcome sgl_keyed_above_mdts(Session& s) {
  uint64_t mdts = s.facts().mdts_bytes;
  if (mdts == 0) return not_applicable("MDTS 0 (no limit)");
  if (mdts > kMaxTestBytes) return not_applicable("MDTS above 1 MiB");
  uint32_t nlb = static_cast<uint32_t>(mdts / s.facts().lba_size + 1);
  if (nlb > s.facts().nsze || nlb > 65536) return not_applicable("namespace below MDTS");
  Outcome r = keyed_read(s, nlb, nlb * s.facts().lba_size, {kInvalidField});
  r.got = std::to_string(nlb * s.facts().lba_size) + " bytes: " + r.got;
  return r;
}

Outcome sgl_keyed_bad_rkey(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  Sqe r = s.keyed_io(*a.io, proto::kNvmRead, 0, 1, s.facts().lba_size);
  uint32_t key;
  std::memcpy(&key, &r.dptr.keyed.key, 4);
  key ^= 0x5A5A00;
  std::memcpy(&r.dptr.keyed.key, &key, 4);
  auto c = s.run(*a.io, r);
  std::string got = c.ok() ? status_text(c->status) : transport_text(c.status());
  if (c.ok() && status_is_success(c->status)) return fail(got);
  a.io.reset();
  a.admin.reset();
  if (!s.target_usable()) return fail(got + "; then no new association");
  return pass(got + "; a new association then works");
}

// In-capsule writes. The capsule carries `sent` bytes after the SQE; the SGL (id 01h) says
// `offset` and `length`; the Write covers `nlb` LBAs at LBA 16.
Result<Cqe> in_capsule_write(Session& s, RawQueue& q, uint64_t offset, uint32_t length,
                             uint32_t nlb, uint32_t sent) {
  Sqe w = Session::sqe(proto::kNvmWrite, s.facts().nsid);
  w.cdw10 = 16;
  w.cdw12 = nlb - 1;
  w.dptr = {};
  w.dptr.addr = offset;
  w.dptr.unkeyed.length = length;
  w.dptr.id = proto::kSglIdDataBlockOffset;
  std::vector<uint8_t> data(sent, 0x3C);
  return s.run(q, w, data);
}

// The statuses that refuse an in-capsule SGL the capsule cannot back.
std::initializer_list<StatusExpect> kInCapsuleRefusals = {kSglLength, kSglOffset, kSglType};

Outcome sgl_in_capsule_write(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  uint32_t lba = s.facts().lba_size, icsz = s.facts().in_capsule_bytes;
  if (icsz < lba) {
    CONFORM_ANSWER(c, in_capsule_write(s, *a.io, 0, lba, 1, 0));
    Outcome r = judge_status(c.status, kInCapsuleRefusals);
    r.got = "IOCCSZ " + std::to_string(s.facts().ctrl.ioccsz) + ", in-capsule " +
            std::to_string(lba) + " bytes: " + r.got;
    return r;
  }
  uint32_t bytes = std::min<uint32_t>(icsz, 4096) / lba * lba;
  Sqe w = Session::sqe(proto::kNvmWrite, s.facts().nsid);
  w.cdw10 = 16;
  w.cdw12 = bytes / lba - 1;
  encode_in_capsule_sgl(w.dptr, 0, bytes);
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  CONFORM_ANSWER(c, s.run(*a.io, w, data));
  if (!status_is_success(c.status)) return fail("Write: " + status_text(c.status));
  std::memset(a.io->data(), 0, bytes);
  CONFORM_ANSWER(rd, s.run(*a.io, s.keyed_io(*a.io, proto::kNvmRead, 16, bytes / lba, bytes)));
  if (!status_is_success(rd.status)) return fail("Read: " + status_text(rd.status));
  if (std::memcmp(a.io->data(), data.data(), bytes) != 0) return fail("read back differs");
  return pass(std::to_string(bytes) + " bytes in-capsule, read back equal");
}

Outcome sgl_in_capsule_above_ioccsz(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  uint32_t lba = s.facts().lba_size, icsz = s.facts().in_capsule_bytes;
  uint32_t length = (icsz / lba + 1) * lba;
  uint32_t sent = std::min<uint32_t>(icsz, RawQueue::kSendSlotBytes - 64);
  CONFORM_ANSWER(c, in_capsule_write(s, *a.io, 0, length, length / lba, sent));
  Outcome r = judge_status(c.status, kInCapsuleRefusals);
  r.got = "SGL " + std::to_string(length) + " bytes, " + std::to_string(sent) + " sent: " + r.got;
  return r;
}

Outcome sgl_in_capsule_longer_than_sent(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  uint32_t lba = s.facts().lba_size, icsz = s.facts().in_capsule_bytes;
  if (icsz > 0 && icsz < 2 * lba) return not_applicable("in-capsule size below 2 LBAs");
  CONFORM_ANSWER(c, in_capsule_write(s, *a.io, 0, 2 * lba, 2, icsz == 0 ? 0 : lba));
  Outcome r = judge_status(c.status, kInCapsuleRefusals);
  r.got = "SGL " + std::to_string(2 * lba) + " bytes, " + std::to_string(icsz == 0 ? 0 : lba) +
          " sent: " + r.got;
  return r;
}

Outcome sgl_in_capsule_offset_beyond(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  uint32_t lba = s.facts().lba_size, icsz = s.facts().in_capsule_bytes;
  uint32_t sent = icsz >= lba ? lba : 0;
  CONFORM_ANSWER(c, in_capsule_write(s, *a.io, icsz, lba, 1, sent));
  Outcome r = judge_status(c.status, kInCapsuleRefusals);
  r.got = "offset " + std::to_string(icsz) + ": " + r.got;
  return r;
}

Outcome sgl_in_capsule_offset_wrap(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  uint32_t lba = s.facts().lba_size, icsz = s.facts().in_capsule_bytes;
  uint32_t sent = icsz >= lba ? lba : 0;
  CONFORM_ANSWER(c, in_capsule_write(s, *a.io, ~uint64_t{0} - 255, lba, 1, sent));
  Outcome r = judge_status(c.status, kInCapsuleRefusals);
  r.got = "offset FFFFFFFFFFFFFF00h: " + r.got;
  return r;
}

// ------------------------------------------------------------------------------ io --

Outcome io_write_read_back(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  uint32_t lba = s.facts().lba_size, bytes = 8 * lba;
  for (uint32_t i = 0; i < bytes; ++i) a.io->data()[i] = static_cast<uint8_t>(i * 13 + 5);
  std::vector<uint8_t> want(a.io->data(), a.io->data() + bytes);
  CONFORM_ANSWER(w, s.run(*a.io, s.keyed_io(*a.io, proto::kNvmWrite, 8, 8, bytes)));
  if (!status_is_success(w.status)) return fail("Write: " + status_text(w.status));
  std::memset(a.io->data(), 0, bytes);
  CONFORM_ANSWER(r, s.run(*a.io, s.keyed_io(*a.io, proto::kNvmRead, 8, 8, bytes)));
  if (!status_is_success(r.status)) return fail("Read: " + status_text(r.status));
  if (std::memcmp(a.io->data(), want.data(), bytes) != 0) return fail("read back differs");
  return pass(std::to_string(bytes) + " bytes written and read back equal");
}

Outcome io_range(Session& s, uint8_t opcode, uint64_t slba, uint32_t nlb) {
  CONFORM_SETUP(a, s.associate(true, true));
  CONFORM_ANSWER(c, s.run(*a.io, s.keyed_io(*a.io, opcode, slba, nlb, nlb * s.facts().lba_size)));
  return judge_status(c.status, {kLbaRange});
}
Outcome io_read_past_end(Session& s) { return io_range(s, proto::kNvmRead, s.facts().nsze, 1); }
Outcome io_read_straddling_end(Session& s) {
  return io_range(s, proto::kNvmRead, s.facts().nsze - 1, 2);
}
Outcome io_read_slba_wraps(Session& s) { return io_range(s, proto::kNvmRead, ~uint64_t{0}, 2); }
Outcome io_write_past_end(Session& s) { return io_range(s, proto::kNvmWrite, s.facts().nsze, 1); }

Outcome io_fua_write(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  Sqe w = s.keyed_io(*a.io, proto::kNvmWrite, 24, 1, s.facts().lba_size);
  w.cdw12 |= 1u << 30;  // FUA
  CONFORM_ANSWER(c, s.run(*a.io, w));
  return judge_status(c.status, {kSuccess});
}

Outcome io_flush(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  CONFORM_ANSWER(c, s.run(*a.io, Session::sqe(proto::kNvmFlush, s.facts().nsid)));
  return judge_status(c.status, {kSuccess});
}

Outcome io_flush_broadcast(Session& s) {
  CONFORM_SETUP(a, s.associate(true, true));
  CONFORM_ANSWER(c, s.run(*a.io, Session::sqe(proto::kNvmFlush, 0xFFFFFFFF)));
  uint8_t bits = (s.facts().ctrl.vwc >> 1) & 3;
  Outcome r = bits == 3   ? judge_status(c.status, {kSuccess})
              : bits == 2 ? judge_status(c.status, {kInvalidNs})
                          : judge_status(c.status, {kSuccess, kInvalidNs});
  r.got = "VWC " + hex(s.facts().ctrl.vwc) + ": " + r.got;
  return r;
}

Outcome io_opcode(Session& s, bool admin_queue, uint8_t opcode, uint32_t nsid) {
  CONFORM_SETUP(a, s.associate(true, !admin_queue));
  RawQueue& q = admin_queue ? *a.admin : *a.io;
  CONFORM_ANSWER(c, s.run(q, Session::sqe(opcode, nsid)));
  return judge_status(c.status, {kInvalidOpcode});
}
Outcome io_reserved_opcode(Session& s) { return io_opcode(s, false, 0x7E, s.facts().nsid); }
Outcome io_admin_opcode(Session& s) {
  return io_opcode(s, false, proto::kAdminIdentify, s.facts().nsid);
}
Outcome admin_vendor_opcode(Session& s) { return io_opcode(s, true, 0xC5, 0); }

Outcome io_nsid(Session& s, uint32_t nsid) {
  CONFORM_SETUP(a, s.associate(true, true));
  Sqe r = s.keyed_io(*a.io, proto::kNvmRead, 0, 1, s.facts().lba_size);
  r.nsid = nsid;
  CONFORM_ANSWER(c, s.run(*a.io, r));
  return judge_status(c.status, {kInvalidNs});
}
Outcome io_nsid_zero(Session& s) { return io_nsid(s, 0); }
Outcome io_nsid_broadcast(Session& s) { return io_nsid(s, 0xFFFFFFFF); }
Outcome io_nsid_invalid(Session& s) { return io_nsid(s, 0xFFFFFFFE); }

// ------------------------------------------------------------------------------ aer --

Outcome aer_limit(Session& s) {
  uint32_t held = s.facts().ctrl.aerl + 1u;
  if (held + 1 > RawQueue::kSlots - 2 || held + 1 > kAdminQueueSize - 2) {
    return not_applicable("AERL " + std::to_string(s.facts().ctrl.aerl) + " above the queue");
  }
  CONFORM_SETUP(a, s.associate(true, false));
  for (uint32_t i = 0; i <= held; ++i) {
    Sqe e = Session::sqe(proto::kAdminAsyncEventRequest);
    e.cid = static_cast<uint16_t>(0x100 + i);
    Status st = a.admin->send(e);
    if (!st.ok()) return fail("send: " + st.to_string());
  }
  CONFORM_ANSWER(c, a.admin->next_cqe(s.timeout_ms()));
  std::string got = "AERL " + std::to_string(s.facts().ctrl.aerl) + ": CID " + hex(c.cid) + " " +
                    status_text(c.status);
  bool ok = c.cid == 0x100 + held &&
            status_matches(c.status, specific(proto::kScAsyncEventRequestLimitExceeded));
  return ok ? pass(got) : fail(got);
}

// ----------------------------------------------------------------------------- sqhd --

// A queue of 4 entries: SQHD must be (n + 1) mod 4 after the n-th command (Connect is n = 0).
Outcome sqhd_wraps(Session& s, bool io) {
  std::optional<Association> a;
  if (io) {
    auto r = s.associate(true, false);
    if (!r.ok()) return fail("setup: " + r.status().to_string());
    a.emplace(std::move(*r));
  }
  CONFORM_SETUP(q, s.open(io ? 1 : 0, 4));
  CONFORM_ANSWER(c, s.connect(*q, s.connect_spec(io ? 1 : 0, 3, io ? a->cntlid : 0xFFFF)));
  if (!status_is_success(c.status)) return fail("Connect: " + status_text(c.status));
  std::string got = std::to_string(c.sqhd);
  bool ok = c.sqhd == 1;
  for (int n = 1; n <= 9; ++n) {
    Result<Cqe> r = io ? s.run(*q, Session::sqe(proto::kNvmFlush, s.facts().nsid))
                       : s.property_get(*q, proto::kPropCap, true);
    if (!r.ok()) return fail("SQHD " + got + ", then " + transport_text(r.status()));
    got += "," + std::to_string(r->sqhd);
    ok = ok && r->sqhd == (n + 1) % 4;
  }
  return ok ? pass("SQHD " + got) : fail("SQHD " + got);
}
Outcome sqhd_admin(Session& s) { return sqhd_wraps(s, false); }
Outcome sqhd_io(Session& s) { return sqhd_wraps(s, true); }

// ----------------------------------------------------------------------------- queue --

Outcome queue_more_than_entries(Session& s) {
  CONFORM_SETUP(q, s.open(0, 4));
  CONFORM_ANSWER(c, s.connect(*q, s.connect_spec(0, 3, 0xFFFF)));
  if (!status_is_success(c.status)) return fail("Connect: " + status_text(c.status));
  constexpr int kFlood = 16;
  for (int i = 0; i < kFlood; ++i) {
    Sqe p = property_get_sqe(proto::kPropCap, true);
    p.flags = proto::kFlagsPsdtSgl;
    encode_null_sgl(p.dptr);
    p.cid = static_cast<uint16_t>(0x200 + i);
    Status st = q->send(p);
    if (!st.ok()) return fail("send " + std::to_string(i) + ": " + st.to_string());
  }
  int answered = 0, bad = 0;
  for (; answered < kFlood; ++answered) {
    auto r = q->next_cqe(std::max(s.timeout_ms(), 3000));
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kUnavailable) {
        return pass(std::to_string(answered) + " answered, then the queue was disconnected");
      }
      return fail(std::to_string(answered) + " of 16 answered, then " + transport_text(r.status()));
    }
    if (!status_is_success(r->status) || r->sqhd >= 4) ++bad;
  }
  std::string got = "16 of 16 answered";
  if (bad) return fail(got + ", " + std::to_string(bad) + " with an error or SQHD >= 4");
  return pass(got);
}

// ---------------------------------------------------------------------------- capsule --

Outcome capsule_bad_size(Session& s, bool shorter) {
  CONFORM_SETUP(a, s.associate(true, true));
  Sqe r = s.keyed_io(*a.io, proto::kNvmRead, 0, 1, s.facts().lba_size);
  r.cid = 0x77;
  size_t bytes = shorter ? 32 : 64 + s.facts().in_capsule_bytes + 4096;
  bytes = std::min(bytes, RawQueue::kSendSlotBytes);
  Status st = a.io->send_truncated(r, bytes);
  std::string got;
  if (!st.ok()) {
    got = "send: " + st.to_string();
  } else {
    auto c = a.io->next_cqe(s.timeout_ms());
    if (c.ok() && status_is_success(c->status)) return fail("success");
    got = c.ok() ? status_text(c->status) : transport_text(c.status());
  }
  a.io.reset();
  a.admin.reset();
  if (!s.target_usable()) return fail(got + "; then no new association");
  return pass(got + "; a new association then works");
}
Outcome capsule_shorter_than_sqe(Session& s) { return capsule_bad_size(s, true); }
Outcome capsule_longer_than_receive(Session& s) { return capsule_bad_size(s, false); }

// -------------------------------------------------------------------------- reconnect --

Outcome reconnect_admin(Session& s) {
  for (int i = 0; i < 10; ++i) {
    auto a = s.associate(true, false);
    if (!a.ok()) return fail("round " + std::to_string(i) + ": " + a.status().to_string());
  }
  return pass("10 of 10 associations");
}

Outcome reconnect_io(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false));
  for (int i = 0; i < 10; ++i) {
    auto q = s.open(1, 32);
    if (!q.ok()) return fail("round " + std::to_string(i) + ": " + q.status().to_string());
    auto c = s.connect(**q, s.connect_spec(1, 31, a.cntlid));
    if (!c.ok()) return fail("round " + std::to_string(i) + ": " + transport_text(c.status()));
    if (!status_is_success(c->status)) {
      return fail("round " + std::to_string(i) + ": " + status_text(c->status));
    }
  }
  return pass("10 of 10 I/O queue connects");
}

// -------------------------------------------------------------------------- discovery --

Outcome discovery_identify(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false, 32, 0, proto::kDiscoveryNqn));
  CONFORM_ANSWER(c, identify(s, *a.admin, proto::kCnsController, 0));
  if (!status_is_success(c.status)) return fail(status_text(c.status));
  proto::IdentifyController id;
  std::memcpy(&id, a.admin->data(), sizeof(id));
  std::string got = "CNTRLTYPE " + std::to_string(id.cntrltype);
  return id.cntrltype == proto::kCntrltypeDiscovery || (id.cntrltype == 0 && id.ver < 0x10400)
             ? pass(got)
             : fail(got);
}

Outcome discovery_no_io_queue(Session& s) {
  CONFORM_SETUP(a, s.associate(true, false, 32, 0, proto::kDiscoveryNqn));
  auto q = s.open(1, 32);
  if (!q.ok()) {
    if (q.status().code() == StatusCode::kRejected) return pass(q.status().message());
    return fail(transport_text(q.status()));
  }
  ConnectSpec spec = s.connect_spec(1, 31, a.cntlid);
  spec.subnqn = proto::kDiscoveryNqn;
  CONFORM_ANSWER(c, s.connect(**q, spec));
  return judge_status(c.status, {kConnectInvalid});
}

// ---------------------------------------------------------------------------- auth --
// DH-HMAC-CHAP (Base 2.0 §8.13.5, §6.4, §6.5): run with -S/--dhchap-secret (and --hostnqn) of a
// host the target makes authenticate; not applicable otherwise.

constexpr StatusExpect kAuthRequired = specific(proto::kScAuthRequired, true);

// An admin queue connected and not authenticated; kNotApplicable-worthy when the target does not
// ask this host (no ATR) or no key was given.
Result<Association> unauthenticated(Session& s) {
  if (!s.options().dhchap.host) {
    return Status::not_found("no -S/--dhchap-secret given: the authentication cases need one");
  }
  NVMF_ASSIGN_OR_RETURN(Association a, s.associate(false, false, 32, 0, {}, false));
  if (!a.authentication_required) {
    return Status::not_found("the target does not ask this host to authenticate (no ATR)");
  }
  return a;
}

#define AUTH_SETUP(var)                                                \
  auto var##_result = unauthenticated(s);                              \
  if (!var##_result.ok()) {                                            \
    if (var##_result.status().code() == nvmf::StatusCode::kNotFound) { \
      return not_applicable(var##_result.status().message());          \
    }                                                                  \
    return fail("setup: " + var##_result.status().to_string());        \
  }                                                                    \
  Association& var = *var##_result

// The message of the last Authentication Receive: its AUTH_Id and, for a Failure1, the reason.
std::string auth_message_text(const uint8_t* m) {
  if (m[0] == proto::kAuthTypeCommon && m[1] == proto::kAuthIdFailure1) {
    return "AUTH_Failure1 (" + auth_failure_text(m[7]) + ")";
  }
  if (m[0] == proto::kAuthTypeDhchap && m[1] == proto::kAuthIdChallenge) return "Challenge";
  if (m[0] == proto::kAuthTypeDhchap && m[1] == proto::kAuthIdSuccess1) return "Success1";
  char text[48];
  std::snprintf(text, sizeof(text), "AUTH_Type %02Xh AUTH_Id %02Xh", m[0], m[1]);
  return text;
}

// Receives the next message and passes when it is AUTH_Failure1; a queue torn down instead
// fails (the answer the specification gives is Failure1), as does any other message.
Outcome expect_failure1(Session& s, RawQueue& q, const std::string& before) {
  auto c = s.auth_receive(q);
  if (!c.ok()) return fail(before + "; Authentication Receive: " + transport_text(c.status()));
  if (c->status != 0) return fail(before + "; Authentication Receive: " + status_text(c->status));
  const std::string got = before + "; then " + auth_message_text(q.data());
  const bool failure1 =
      q.data()[0] == proto::kAuthTypeCommon && q.data()[1] == proto::kAuthIdFailure1;
  return failure1 ? pass(got) : fail(got);
}

Outcome auth_required_before_commands(Session& s) {
  AUTH_SETUP(a);
  proto::Sqe id = identify_sqe(proto::kCnsController, 0);
  a.admin->set_keyed(id, 0, proto::kIdentifyDataSize);
  CONFORM_ANSWER(c, s.run(*a.admin, id));
  Outcome r = judge_status(c.status, {kAuthRequired});
  r.got = "Identify before authenticating: " + r.got;
  return r;
}

Outcome auth_wrong_key(Session& s) {
  AUTH_SETUP(a);
  auto wrong = dhchap::Secret::generate(32, 1);
  if (!wrong.ok()) return fail("setup: " + wrong.status().to_string());
  Status st = s.authenticate(*a.admin, 0, DhchapSecrets{*wrong, std::nullopt});
  if (st.ok()) return fail("a random key authenticated");
  proto::Sqe id = identify_sqe(proto::kCnsController, 0);
  a.admin->set_keyed(id, 0, proto::kIdentifyDataSize);
  auto c = s.run(*a.admin, id);
  const std::string got = st.message() + "; Identify after: " +
                          (c.ok() ? status_text(c->status) : transport_text(c.status()));
  if (st.message().find("AUTH_Failure1") == std::string::npos) return fail(got);
  return !c.ok() || status_matches(c->status, kAuthRequired) ? pass(got) : fail(got);
}

Outcome auth_wrong_controller_key(Session& s) {
  AUTH_SETUP(a);
  auto wrong = dhchap::Secret::generate(32, 1);
  if (!wrong.ok()) return fail("setup: " + wrong.status().to_string());
  Status st = s.authenticate(*a.admin, 0, DhchapSecrets{*s.options().dhchap.host, *wrong});
  if (st.ok()) return fail("a random controller key was proven");
  // The controller's response does not match (the host then sends Failure2), or the target
  // refuses bidirectional authentication it has no key for (Failure1).
  const bool found = st.message().find("does not match") != std::string::npos ||
                     st.message().find("AUTH_Failure1") != std::string::npos;
  return found ? pass(st.message()) : fail(st.message());
}

Outcome auth_unusable_offer(Session& s, bool hash) {
  AUTH_SETUP(a);
  DhchapOffer offer;
  // Identifiers no version of the specification assigns.
  if (hash) offer.hashes = {0xF0};
  if (!hash) offer.dhgroups = {0xF0};
  Status st =
      s.authenticate(*a.admin, 0, DhchapSecrets{*s.options().dhchap.host, std::nullopt}, offer);
  if (st.ok()) return fail("authenticated with an offer of nothing usable");
  const char* want = hash ? "hash function unusable" : "DH group unusable";
  return st.message().find(want) != std::string::npos ? pass(st.message()) : fail(st.message());
}
Outcome auth_unusable_hash(Session& s) { return auth_unusable_offer(s, true); }
Outcome auth_unusable_dhgroup(Session& s) { return auth_unusable_offer(s, false); }

// A whole good transaction by hand, keeping its Reply; `tamper` changes the Reply before it is
// sent (nullptr: sent as is).
struct Transaction {
  std::vector<uint8_t> reply;
  std::string got;
};
Result<Transaction> negotiate_and_reply(Session& s, RawQueue& q, uint16_t t_id) {
  AuthInitiator init(
      s.options().dhchap.host ? DhchapSecrets{*s.options().dhchap.host, {}} : DhchapSecrets{},
      s.hostnqn(), s.options().subnqn, t_id);
  auto n = s.auth_send(q, init.negotiate());
  if (!n.ok()) return n.status();
  if (n->status != 0) return Status::nvme_error(n->status, "Negotiate");
  auto c = s.auth_receive(q);
  if (!c.ok()) return c.status();
  if (c->status != 0) return Status::nvme_error(c->status, "Receive Challenge");
  auto reply = init.on_challenge({q.data(), 4096});
  if (!reply.ok()) return reply.status();
  return Transaction{*reply, ""};
}

Outcome auth_replayed_reply(Session& s) {
  AUTH_SETUP(a);
  auto t = negotiate_and_reply(s, *a.admin, 5);
  if (!t.ok()) return fail("setup: " + t.status().to_string());
  CONFORM_ANSWER(r1, s.auth_send(*a.admin, t->reply));
  if (r1.status != 0) return fail("Reply: " + status_text(r1.status));
  CONFORM_ANSWER(s1, s.auth_receive(*a.admin));
  if (s1.status != 0 || a.admin->data()[1] != proto::kAuthIdSuccess1) {
    return fail("the good Reply got " + auth_message_text(a.admin->data()));
  }
  auto again = s.auth_send(*a.admin, t->reply);
  if (!again.ok()) return fail("replayed Reply: " + transport_text(again.status()));
  return expect_failure1(s, *a.admin,
                         "Success1, then the same Reply again: " + status_text(again->status));
}

Outcome auth_wrong_transaction_id(Session& s) {
  AUTH_SETUP(a);
  auto t = negotiate_and_reply(s, *a.admin, 6);
  if (!t.ok()) return fail("setup: " + t.status().to_string());
  t->reply[4] ^= 0x01;  // T_ID, bytes 5:4
  CONFORM_ANSWER(r, s.auth_send(*a.admin, t->reply));
  return expect_failure1(s, *a.admin, "Reply with T_ID + 1: " + status_text(r.status));
}

Outcome auth_truncated_reply(Session& s) {
  AUTH_SETUP(a);
  auto t = negotiate_and_reply(s, *a.admin, 7);
  if (!t.ok()) return fail("setup: " + t.status().to_string());
  t->reply.resize(t->reply.size() / 2);
  CONFORM_ANSWER(r, s.auth_send(*a.admin, t->reply));
  return expect_failure1(
      s, *a.admin,
      "Reply of " + std::to_string(t->reply.size()) + " bytes: " + status_text(r.status));
}

Outcome auth_second_negotiate(Session& s) {
  AUTH_SETUP(a);
  AuthInitiator init(DhchapSecrets{*s.options().dhchap.host, {}}, s.hostnqn(), s.options().subnqn,
                     8);
  CONFORM_ANSWER(n1, s.auth_send(*a.admin, init.negotiate()));
  if (n1.status != 0) return fail("Negotiate: " + status_text(n1.status));
  CONFORM_ANSWER(n2, s.auth_send(*a.admin, init.negotiate()));
  return expect_failure1(s, *a.admin,
                         "a second Negotiate before the Challenge: " + status_text(n2.status));
}

Outcome auth_stalled_transaction(Session& s) {
  AUTH_SETUP(a);
  AuthInitiator init(DhchapSecrets{*s.options().dhchap.host, {}}, s.hostnqn(), s.options().subnqn,
                     9);
  CONFORM_ANSWER(n, s.auth_send(*a.admin, init.negotiate()));
  if (n.status != 0) return fail("Negotiate: " + status_text(n.status));
  // Then nothing: the target must not hold the queue for ever.
  constexpr int kWaitMs = 30000;
  const auto t0 = std::chrono::steady_clock::now();
  if (!a.admin->wait_disconnected(kWaitMs)) {
    return fail("Negotiate, then silence: still connected after " + std::to_string(kWaitMs / 1000) +
                " s");
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  return pass("Negotiate, then silence: disconnected after " + std::to_string(ms) + " ms");
}

Outcome auth_io_queue_authenticates(Session& s) {
  if (!s.options().dhchap.host) return not_applicable("no -S/--dhchap-secret given");
  auto a = s.associate(true, false);
  if (!a.ok()) return fail("setup: " + a.status().to_string());
  if (!a->authentication_required) return not_applicable("the target does not ask this host");
  CONFORM_SETUP(q, s.open(1, 32));
  CONFORM_ANSWER(c, s.connect(*q, s.connect_spec(1, 31, a->cntlid)));
  if (c.status != 0) return fail("I/O Connect: " + status_text(c.status));
  if ((c.dw0 & proto::kConnectRespAuthreqAtr) == 0) return fail("I/O Connect without ATR");
  CONFORM_ANSWER(r, s.run(*q, s.keyed_io(*q, proto::kNvmRead, 0, 1, s.facts().lba_size)));
  Outcome o = judge_status(r.status, {kAuthRequired});
  o.got = "I/O Connect with ATR; Read before authenticating: " + o.got;
  return o;
}

constexpr Level M = Level::kMust;
constexpr Level S = Level::kShould;

}  // namespace

const std::vector<Case>& catalogue() {
  static const std::vector<Case> cases = {
      // RDMA CM private data (RDMA 1.0 §3.3 "RDMA_CM_REQUEST", "RDMA_CM_REJECT").
      {"cm.recfmt-nonzero", "cm", M, "RDMA 1.0 §3.3", "CM request with RECFMT 1",
       "admin CM request, RECFMT 1", "CM reject STS 02h (Invalid RECFMT)", false,
       cm_recfmt_nonzero},
      {"cm.admin-hsqsize-huge", "cm", M, "RDMA 1.0 §3.3", "admin CM request far above any limit",
       "qid 0, HSQSIZE FFFEh, HRQSIZE FFFFh",
       "CM reject STS 04h (Invalid HSQSIZE), or accepted and its Connect refused with Connect "
       "Invalid Parameters",
       false, cm_admin_hsqsize_huge},
      {"cm.io-hsqsize-huge", "cm", M, "RDMA 1.0 §3.3; Base 2.0 §6.3",
       "I/O CM request for 65536 entries", "qid 1, HSQSIZE FFFFh, HRQSIZE FFFFh",
       "CM reject STS 04h (Invalid HSQSIZE), or accepted and its Connect (SQSIZE FFFFh) refused "
       "with Connect Invalid Parameters",
       false, cm_io_hsqsize_huge},
      {"cm.hsqsize-zero", "cm", M, "RDMA 1.0 §3.3; Base 2.0 §6.3", "I/O queue of one entry",
       "qid 1, HSQSIZE 0, HRQSIZE 1",
       "CM reject STS 04h (Invalid HSQSIZE), or accepted and its Connect (SQSIZE 0) refused "
       "with Connect Invalid Parameters",
       false, cm_hsqsize_zero},
      {"cm.hrqsize-zero", "cm", M, "RDMA 1.0 §3.3", "a host that says it posted no receives",
       "qid 0, HSQSIZE 31, HRQSIZE 0",
       "CM reject STS 05h (Invalid HRQSIZE), or accepted and the Connect answered; dangerous: "
       "Linux 6.1 nvmet-rdma never answers and its queue teardown then blocks for good",
       true, cm_hrqsize_zero},
      {"cm.qid-huge", "cm", M, "RDMA 1.0 §3.3; Base 2.0 §6.3", "CM request for qid FFFFh",
       "qid FFFFh, then Connect for qid FFFFh of a live controller",
       "CM reject STS 03h (Invalid QID), or Connect Invalid Parameters", false, cm_qid_huge},
      {"cm.no-rdma-read-resources", "cm", S, "RDMA 1.0 §3.3",
       "a host offering no RDMA READ resources", "admin CM request, responder_resources 0",
       "CM reject STS 07h (Invalid IRD), or accepted and the keyed Connect answered", false,
       cm_no_read_resources},
      // Fabrics Connect (Base 2.0 §6.3).
      {"connect.admin", "connect", M, "Base 2.0 §6.3", "admin Connect, dynamic controller",
       "Connect qid 0, SQSIZE 31, CNTLID FFFFh, keyed data", "success, DW0 CNTLID in 1..FFEFh",
       false, connect_admin},
      {"connect.admin-sqsize-zero", "connect", M, "Base 2.0 §6.3", "admin Connect with SQSIZE 0",
       "Connect qid 0, SQSIZE 0", "Connect Invalid Parameters (SCT 1h SC 82h)", false,
       connect_admin_sqsize_zero},
      {"connect.unknown-subnqn", "connect", M, "Base 2.0 §6.3", "SUBNQN of no subsystem",
       "admin Connect, SUBNQN nqn.2014-08.org.example:conform-no-such-subsystem",
       "Connect Invalid Parameters (IATTR 1, IPO 256)", false, connect_unknown_subnqn},
      {"connect.subnqn-unterminated", "connect", M, "Base 2.0 §6.3",
       "SUBNQN filling its 256 bytes without a NUL", "admin Connect, SUBNQN field all non-zero",
       "Connect Invalid Parameters", false, connect_subnqn_unterminated},
      {"connect.hostnqn-unterminated", "connect", M, "Base 2.0 §6.3",
       "HOSTNQN filling its 256 bytes without a NUL", "admin Connect, HOSTNQN field all non-zero",
       "Connect Invalid Parameters or Connect Invalid Host", false, connect_hostnqn_unterminated},
      {"connect.hostnqn-empty", "connect", S, "Base 2.0 §6.3", "empty HOSTNQN",
       "admin Connect, HOSTNQN all zero", "Connect Invalid Parameters or Connect Invalid Host",
       false, connect_hostnqn_empty},
      {"connect.recfmt-nonzero", "connect", M, "Base 2.0 §6.3", "Connect RECFMT 1",
       "admin Connect, RECFMT 1", "Incompatible Format (SCT 1h SC 80h)", false,
       connect_recfmt_nonzero},
      {"connect.data-short", "connect", M, "Base 2.0 §6.3", "Connect data SGL of 512 bytes",
       "admin Connect, keyed SGL length 512 (the data is 1024)",
       "Data SGL Length Invalid or Connect Invalid Parameters", false, connect_data_short},
      {"connect.io-unknown-cntlid", "connect", M, "Base 2.0 §6.3",
       "I/O Connect naming no controller", "I/O Connect, CNTLID 7FF0h (not ours)",
       "Connect Invalid Parameters", false, connect_io_unknown_cntlid},
      {"connect.io-cntlid-ffff", "connect", M, "Base 2.0 §6.3", "I/O Connect with CNTLID FFFFh",
       "I/O Connect, CNTLID FFFFh", "Connect Invalid Parameters", false, connect_io_cntlid_ffff},
      {"connect.io-other-hostnqn", "connect", M, "Base 2.0 §6.3",
       "I/O Connect from another host NQN", "I/O Connect, HOSTNQN not the controller's",
       "Connect Invalid Parameters or Connect Invalid Host", false, connect_io_other_hostnqn},
      {"connect.io-other-hostid", "connect", S, "Base 2.0 §6.3",
       "I/O Connect with another host identifier", "I/O Connect, HOSTID not the admin queue's",
       "Connect Invalid Parameters", false, connect_io_other_hostid},
      {"connect.io-sqsize-above-cm", "connect", S, "RDMA 1.0 §3.3; Base 2.0 §6.3",
       "Connect SQSIZE above the CM HSQSIZE", "CM HSQSIZE 31, I/O Connect SQSIZE 63",
       "Connect Invalid Parameters", false, connect_io_sqsize_above_cm},
      {"connect.qid-differs-from-cm", "connect", S, "RDMA 1.0 §3.3; Base 2.0 §6.3",
       "Connect QID other than the CM request's", "CM qid 1, Connect qid 2",
       "Connect Invalid Parameters", false, connect_qid_differs_from_cm},
      {"connect.io-qid-above-granted", "connect", S, "Base 2.0 §6.3, §5.27.1.5",
       "I/O Connect beyond the queues granted",
       "Set Features Number of Queues 1, then CM and Connect for qid granted + 1",
       "CM reject STS 03h (Invalid QID) or Connect Invalid Parameters", false,
       connect_io_qid_above_granted},
      {"connect.second-on-admin", "connect", M, "Base 2.0 §6.3",
       "a second Connect on the connected admin queue", "admin Connect again",
       "Command Sequence Error DNR; the queue keeps working (Property Get succeeds)", false,
       connect_second_admin},
      {"connect.second-on-io", "connect", M, "Base 2.0 §6.3",
       "a second Connect on a connected I/O queue", "I/O Connect again on qid 1",
       "Command Sequence Error DNR; the queue keeps working (Read succeeds)", false,
       connect_second_io},
      {"connect.io-before-enable", "connect", S, "Base 2.0 §3.5.1, §6.3",
       "I/O Connect before the controller is enabled",
       "admin Connect, no Property Set CC; CM and Connect for qid 1",
       "Connect Invalid Parameters or Command Sequence Error", false, connect_io_before_enable},
      {"connect.live-qid", "connect", M, "Base 2.0 §6.3",
       "Connect for a qid already live on the controller",
       "new CM connection + I/O Connect qid 1 while qid 1 is connected",
       "Command Sequence Error or Connect Invalid Parameters; the live qid 1 still serves a Read",
       false, connect_live_qid},
      {"connect.command-before-connect-admin", "connect", M, "Base 2.0 §6.3",
       "a command on an admin queue before its Connect", "Property Get CAP as the first capsule",
       "Command Sequence Error", false, connect_command_before_connect_admin},
      {"connect.command-before-connect-io", "connect", M, "Base 2.0 §6.3",
       "a command on an I/O queue before its Connect", "Read as the first capsule on qid 1",
       "Command Sequence Error", false, connect_command_before_connect_io},
      // Properties (Base 2.0 §3.1.3, §6.5, §6.6).
      {"property.cap", "property", M, "Base 2.0 §3.1.3.1, §6.5", "Property Get CAP",
       "Property Get CAP, 8 bytes", "success; MQES >= 1, CQR 1, TO != 0", false, prop_cap},
      {"property.vs", "property", M, "Base 2.0 §3.1.3.2, §5.17.2.1", "Property Get VS",
       "Property Get VS, 4 bytes", "success; VS >= 1.2.1, equal to Identify VER when VER != 0",
       false, prop_vs},
      {"property.cc-readback", "property", M, "Base 2.0 §3.1.3.5", "CC reads back as written",
       "Property Set CC 00460001h, Property Get CC", "CC 00460001h", false, prop_cc_readback},
      {"property.csts-ready", "property", M, "Base 2.0 §3.1.3.6", "CSTS after enable",
       "Property Get CSTS after CC.EN = 1 and RDY", "RDY 1, CFS 0", false, prop_csts_ready},
      {"property.reset", "property", M, "Base 2.0 §3.7.2", "controller reset by CC.EN = 0",
       "Property Set CC 0, poll CSTS, then a Read on the I/O queue",
       "CSTS.RDY 0 within CAP.TO; the Read does not succeed", false, prop_reset},
      {"property.shutdown", "property", M, "Base 2.0 §3.6.2", "normal shutdown",
       "Property Set CC.SHN 01b, poll CSTS", "CSTS.SHST 10b within 10 s", false, prop_shutdown},
      {"property.get-reserved-offset", "property", M, "Base 2.0 §6.5",
       "Property Get of a reserved offset", "Property Get 100h, 4 bytes",
       "Invalid Field in Command", false, prop_get_reserved},
      {"property.get-reserved-size", "property", S, "Base 2.0 §6.5",
       "Property Get with a reserved size", "Property Get VS, ATTRIB.SIZE 2",
       "Invalid Field in Command", false, prop_get_reserved_size},
      {"property.set-read-only", "property", M, "Base 2.0 §3.1.3, §6.6",
       "Property Set of read-only CSTS", "Property Set CSTS 0",
       "Invalid Field in Command or success; CSTS.RDY still 1", false, prop_set_read_only},
      {"property.cc-bad-iosqes", "property", S, "Base 2.0 §3.1.3.5",
       "enable with a 32-byte I/O SQE size", "Property Set CC EN 1, IOSQES 5",
       "Property Set refused, or CSTS.RDY stays 0", false, prop_cc_bad_iosqes},
      {"property.on-io-queue", "property", S, "Base 2.0 §6", "Property Get on an I/O queue",
       "Property Get CAP on qid 1", "Invalid Command Opcode or Invalid Field in Command", false,
       prop_on_io_queue},
      {"fabrics.fctype-reserved", "fabrics", M, "Base 2.0 §6", "reserved Fabrics command type",
       "opcode 7Fh, FCTYPE 7Ch on the admin queue",
       "Invalid Command Opcode or Invalid Field in Command", false, fabrics_fctype_reserved},
      // Identify (Base 2.0 §5.17).
      {"identify.controller", "identify", M, "Base 2.0 §5.17.2.1", "Identify Controller",
       "Identify CNS 01h", "success; CNTRLTYPE 1 (I/O), SUBNQN the one connected to", false,
       identify_controller},
      {"identify.fabrics-fields", "identify", M, "Base 2.0 §5.17.2.1; RDMA 1.0",
       "capsule sizes and keep alive", "(Identify Controller of the preflight)",
       "IOCCSZ >= 4, IORCSZ 1, MSDBD >= 1, KAS != 0", false, identify_fabrics_fields},
      {"identify.sgls", "identify", M, "Base 2.0 §5.17.2.1; RDMA 1.0",
       "SGL support matches the capsule size", "(Identify Controller of the preflight)",
       "SGLS bits 1:0 != 0, bit 2 (keyed) set; bit 20 (offset) set when IOCCSZ > 4", false,
       identify_sgls},
      {"identify.icdoff", "identify", S, "Base 2.0 §5.17.2.1; RDMA 1.0",
       "in-capsule data right after the SQE", "(Identify Controller of the preflight)", "ICDOFF 0",
       false, identify_icdoff},
      {"identify.namespace", "identify", M, "NVM CS 1.0 §4.1.5.1", "Identify Namespace",
       "Identify CNS 00h, first active NSID", "success; NSZE >= NCAP >= NUSE, FLBAS <= NLBAF",
       false, identify_namespace},
      {"identify.namespace-invalid-nsid", "identify", M, "Base 2.0 §5.17",
       "Identify Namespace of an invalid NSID", "Identify CNS 00h, NSID FFFFFFFEh",
       "Invalid Namespace or Format", false, identify_namespace_invalid},
      {"identify.active-namespace-list", "identify", M, "Base 2.0 §5.17.2.2",
       "active namespace list", "Identify CNS 02h, NSID 0",
       "success; ascending, holds the namespace, zero after the last", false, identify_active_list},
      {"identify.active-namespace-list-after-last", "identify", M, "Base 2.0 §5.17.2.2",
       "active namespace list past the last NSID", "Identify CNS 02h, NSID = the last active one",
       "success; an empty list", false, identify_active_list_after_last},
      {"identify.active-namespace-list-nsid-fffffffe", "identify", M, "Base 2.0 §5.17.2.2",
       "active namespace list from NSID FFFFFFFEh", "Identify CNS 02h, NSID FFFFFFFEh",
       "Invalid Namespace or Format", false, identify_active_list_nsid_fffffffe},
      {"identify.ns-descriptors", "identify", M, "Base 2.0 §5.17.2.3",
       "namespace identification descriptors", "Identify CNS 03h",
       "success; at least one descriptor, each NIDL matching its NIDT", false,
       identify_ns_descriptors},
      {"identify.cns-reserved", "identify", M, "Base 2.0 §5.17", "reserved CNS", "Identify CNS FFh",
       "Invalid Field in Command", false, identify_cns_reserved},
      {"identify.sgl-short", "identify", M, "Base 2.0 §4.3.2, §5.17",
       "Identify into a 512-byte buffer", "Identify CNS 01h, keyed SGL length 512",
       "Data SGL Length Invalid", false, identify_sgl_short},
      // Features (Base 2.0 §5.15, §5.27).
      {"features.number-of-queues", "features", M, "Base 2.0 §5.27.1.5",
       "Number of Queues set then read", "Set Features 07h NSQR = NCQR = 3, Get Features 07h",
       "both succeed with the same DW0", false, features_number_of_queues},
      {"features.number-of-queues-after-io", "features", M, "Base 2.0 §5.27.1.5",
       "Number of Queues after an I/O queue exists", "Set Features 07h with qid 1 connected",
       "Command Sequence Error", false, features_number_of_queues_after_io},
      {"features.kato", "features", M, "Base 2.0 §5.27.1.12, §6.3", "KATO from Connect",
       "admin Connect KATO 5000, Get Features 0Fh",
       "DW0 5000 ms (rounded up to the KAS granularity at most)", false, features_kato},
      {"features.reserved-fid", "features", M, "Base 2.0 §5.15", "Get Features of FID 00h",
       "Get Features FID 00h", "Invalid Field in Command", false, features_reserved_fid},
      {"features.async-event-config", "features", S, "Base 2.0 §5.27.1.7",
       "Asynchronous Event Configuration", "Set Features 0Bh, DW11 0", "success", false,
       features_async_event_config},
      // Get Log Page (Base 2.0 §5.16).
      {"log.error-information", "log", M, "Base 2.0 §5.16.1.2", "Error Information log",
       "Get Log Page 01h, 64 bytes", "success", false, log_error_information},
      {"log.smart", "log", M, "Base 2.0 §5.16.1.3", "SMART / Health Information log",
       "Get Log Page 02h, 512 bytes, NSID FFFFFFFFh", "success", false, log_smart},
      {"log.reserved-lid", "log", M, "Base 2.0 §5.16", "reserved log page identifier",
       "Get Log Page 7Fh", "Invalid Log Page (SCT 1h SC 09h)", false, log_reserved_lid},
      {"log.offset-not-dword", "log", M, "Base 2.0 §5.16", "log page offset not dword aligned",
       "Get Log Page 02h, LPO 2", "Invalid Field in Command", false, log_offset_not_dword},
      {"log.offset-past-end", "log", M, "Base 2.0 §5.16", "log page offset past the log's end",
       "Get Log Page 02h (512 bytes), LPO 4096", "Invalid Field in Command", false,
       log_offset_past_end},
      {"log.discovery-offset-past-end", "log", M, "Base 2.0 §5.16",
       "discovery log page offset past the log's end",
       "discovery controller: Get Log Page 70h (1024 bytes), LPO past the last entry + 4096",
       "Invalid Field in Command", false, log_discovery_offset_past_end},
      {"log.discovery-partial", "log", M, "Base 2.0 §5.16.1.23",
       "partial reads of the discovery log",
       "discovery controller: header, whole log, then each entry alone at its offset",
       "every read succeeds, each entry read alone equals the whole read, GENCTR unchanged", false,
       log_discovery_partial},
      // Asymmetric Namespace Access (Base 2.0 §8.1).
      {"ana.identify", "ana", M, "Base 2.0 §5.17.2.1, §8.1", "ANA fields of Identify",
       "Identify Controller and Namespace (read at preflight)",
       "with CMIC bit 3: ANATT > 0, ANACAP states, 1 <= NANAGRPID <= ANAGRPMAX, OAES bit 11, "
       "ANAGRPID in 1..ANAGRPMAX",
       false, ana_identify},
      {"ana.log", "ana", M, "Base 2.0 §5.16.1.13", "ANA log page",
       "Get Log Page 0Ch of the size Linux reads",
       "success; well formed; the namespace in the "
       "group Identify Namespace names; no group change count above the log's",
       false, ana_log},
      {"ana.log-rgo", "ana", M, "Base 2.0 §5.16.1.13", "ANA log page, Return Groups Only",
       "Get Log Page 0Ch with LSP bit 0", "the same groups and states, no NSIDs", false,
       ana_log_rgo},
      {"ana.log-offset", "ana", M, "Base 2.0 §5.16", "ANA log page at an offset",
       "Get Log Page 0Ch, LPO 16, 32 bytes", "the first descriptor, as in the whole log", false,
       ana_log_offset},
      {"ana.path-status", "ana", M, "Base 2.0 §8.1", "I/O where the namespace's group refuses it",
       "Read of a namespace whose group is inaccessible, persistent loss or change on this port",
       "Asymmetric Access Inaccessible (SCT 3h SC 02h), Persistent Loss (01h) or Transition "
       "(03h), no DNR",
       false, ana_path_status},
      // Keep Alive (Base 2.0 §3.9, §5.25).
      {"keepalive.command", "keepalive", M, "Base 2.0 §5.25", "Keep Alive command",
       "Keep Alive with KATO 5000", "success", false, keepalive_command},
      {"keepalive.expiry", "keepalive", M, "Base 2.0 §3.9", "the target drops a silent host",
       "admin Connect KATO 1000, then nothing", "the target disconnects within 2 x KATO + 2 s",
       false, keepalive_expiry},
      {"keepalive.traffic", "keepalive", M, "Base 2.0 §3.9",
       "a host sending Keep Alive in time stays", "KATO 1000, Keep Alive every 300 ms for 3 s",
       "every Keep Alive succeeds, the queue is still connected", false, keepalive_traffic},
      // SGLs (Base 2.0 §4.3.2, RDMA 1.0).
      {"sgl.psdt-prp", "sgl", M, "Base 2.0 §4.1", "PRPs on a fabric", "Read with PSDT 00b",
       "Invalid Field in Command", false, sgl_psdt_prp},
      {"sgl.fused", "sgl", M, "Base 2.0 §4.1", "fused command without FUSES", "Read with FUSE 01b",
       "Invalid Field in Command", false, sgl_fused},
      {"sgl.type-segment", "sgl", M, "Base 2.0 §4.3.2", "SGL Segment descriptor",
       "Read with SGL id 20h", "SGL Descriptor Type Invalid", false, sgl_segment},
      {"sgl.type-last-segment", "sgl", M, "Base 2.0 §4.3.2", "SGL Last Segment descriptor",
       "Read with SGL id 30h", "SGL Descriptor Type Invalid", false, sgl_last_segment},
      {"sgl.type-bit-bucket", "sgl", M, "Base 2.0 §4.3.2", "Bit Bucket without SGLS bit 16",
       "Read with SGL id 10h", "SGL Descriptor Type Invalid", false, sgl_bit_bucket},
      {"sgl.type-vendor", "sgl", M, "Base 2.0 §4.3.2", "vendor specific SGL type",
       "Read with SGL id F0h", "SGL Descriptor Type Invalid", false, sgl_vendor},
      {"sgl.keyed-subtype-reserved", "sgl", M, "Base 2.0 §4.3.2",
       "Keyed Data Block with a reserved subtype", "Read with SGL id 41h",
       "SGL Descriptor Type Invalid or Invalid Field in Command", false,
       sgl_keyed_subtype_reserved},
      {"sgl.data-block-address", "sgl", M, "Base 2.0 §4.3.2; RDMA 1.0",
       "unkeyed Data Block with an address", "Read with SGL id 00h",
       "SGL Descriptor Type Invalid or Invalid Field in Command", false, sgl_data_block_address},
      {"sgl.in-capsule-on-read", "sgl", S, "Base 2.0 §4.3.2", "in-capsule SGL on a Read",
       "Read with SGL id 01h",
       "Invalid Field in Command, SGL Descriptor Type Invalid or Data SGL Length Invalid", false,
       sgl_in_capsule_on_read},
      {"sgl.keyed-length-above-nlb", "sgl", M, "Base 2.0 §4.3.2; NVM CS 1.0 §3.2.4",
       "keyed length larger than NLB", "Read NLB 1, keyed length 2 LBAs", "Data SGL Length Invalid",
       false, sgl_keyed_above_nlb},
      {"sgl.keyed-length-below-nlb", "sgl", M, "Base 2.0 §4.3.2; NVM CS 1.0 §3.2.4",
       "keyed length smaller than NLB", "Read NLB 2, keyed length 1 LBA", "Data SGL Length Invalid",
       false, sgl_keyed_below_nlb},
      {"sgl.keyed-zero-length", "sgl", M, "Base 2.0 §4.3.2", "keyed length 0 for one LBA",
       "Read NLB 1, keyed length 0", "Data SGL Length Invalid", false, sgl_keyed_zero},
      {"sgl.keyed-at-mdts", "sgl", M, "Base 2.0 §5.17.2.1 (MDTS)", "a Read of exactly MDTS",
       "Read of MDTS bytes (1 MiB when MDTS is 0)", "success", false, sgl_keyed_at_mdts},
      {"sgl.keyed-above-mdts", "sgl", M, "Base 2.0 §5.17.2.1 (MDTS)", "a Read one LBA above MDTS",
       "Read of MDTS + 1 LBA, matching keyed length", "Invalid Field in Command", false,
       sgl_keyed_above_mdts},
      {"sgl.keyed-bad-rkey", "sgl", S, "RDMA 1.0", "a keyed SGL whose rkey is not registered",
       "Read with a wrong rkey",
       "an error status or the queue torn down; a new association then works", false,
       sgl_keyed_bad_rkey},
      {"sgl.in-capsule-write", "sgl", M, "Base 2.0 §4.3.2; RDMA 1.0",
       "in-capsule write (or its refusal when IOCCSZ is 4)",
       "Write with SGL id 01h and the data in the capsule, then a Read back",
       "IOCCSZ > 4: success and the same bytes read back; IOCCSZ 4: Data SGL Length Invalid, "
       "SGL Offset Invalid or SGL Descriptor Type Invalid",
       false, sgl_in_capsule_write},
      {"sgl.in-capsule-above-ioccsz", "sgl", M, "Base 2.0 §4.3.2; RDMA 1.0",
       "in-capsule SGL longer than IOCCSZ allows",
       "Write, SGL id 01h with length in-capsule size + 1 LBA",
       "Data SGL Length Invalid, SGL Offset Invalid or SGL Descriptor Type Invalid", false,
       sgl_in_capsule_above_ioccsz},
      {"sgl.in-capsule-longer-than-sent", "sgl", M, "Base 2.0 §4.3.2; RDMA 1.0",
       "in-capsule SGL longer than the bytes in the capsule",
       "Write of 2 LBAs, SGL id 01h length 2 LBAs, 1 LBA of data sent",
       "Data SGL Length Invalid, SGL Offset Invalid or SGL Descriptor Type Invalid", false,
       sgl_in_capsule_longer_than_sent},
      {"sgl.in-capsule-offset-beyond", "sgl", M, "Base 2.0 §4.3.2; RDMA 1.0",
       "in-capsule offset at the end of the area", "Write, SGL id 01h, offset = in-capsule size",
       "Data SGL Length Invalid, SGL Offset Invalid or SGL Descriptor Type Invalid", false,
       sgl_in_capsule_offset_beyond},
      {"sgl.in-capsule-offset-wrap", "sgl", M, "Base 2.0 §4.3.2; RDMA 1.0",
       "in-capsule offset + length wrapping 64 bits",
       "Write, SGL id 01h, offset FFFFFFFFFFFFFF00h, length 1 LBA",
       "Data SGL Length Invalid, SGL Offset Invalid or SGL Descriptor Type Invalid; the target "
       "keeps serving",
       true, sgl_in_capsule_offset_wrap},
      // I/O (NVM CS 1.0 §3.2).
      {"io.write-read-back", "io", M, "NVM CS 1.0 §3.2.4, §3.2.6", "keyed write and read back",
       "Write 8 LBAs at LBA 8, Read them", "both succeed, the bytes match", false,
       io_write_read_back},
      {"io.read-past-end", "io", M, "NVM CS 1.0 §3.2.4", "Read at NSZE", "Read SLBA NSZE, NLB 1",
       "LBA Out of Range (SCT 0h SC 80h)", false, io_read_past_end},
      {"io.read-straddling-end", "io", M, "NVM CS 1.0 §3.2.4", "Read across the last LBA",
       "Read SLBA NSZE - 1, NLB 2", "LBA Out of Range", false, io_read_straddling_end},
      {"io.read-slba-wraps", "io", M, "NVM CS 1.0 §3.2.4", "SLBA + NLB wrapping 64 bits",
       "Read SLBA FFFFFFFFFFFFFFFFh, NLB 2", "LBA Out of Range", false, io_read_slba_wraps},
      {"io.write-past-end", "io", M, "NVM CS 1.0 §3.2.6", "Write at NSZE", "Write SLBA NSZE, NLB 1",
       "LBA Out of Range", false, io_write_past_end},
      {"io.fua-write", "io", M, "NVM CS 1.0 §3.2.6", "Write with Force Unit Access",
       "Write 1 LBA with CDW12 bit 30", "success", false, io_fua_write},
      {"io.flush", "io", M, "NVM CS 1.0 §3.2.1", "Flush of the namespace", "Flush NSID 1",
       "success", false, io_flush},
      {"io.flush-broadcast", "io", M, "NVM CS 1.0 §3.2.1; Base 2.0 §5.17.2.1 (VWC)",
       "Flush of every namespace", "Flush NSID FFFFFFFFh",
       "VWC bits 2:1 = 11b: success; 10b: Invalid Namespace or Format; 00b: either", false,
       io_flush_broadcast},
      {"io.reserved-opcode", "io", M, "NVM CS 1.0 §3", "reserved I/O opcode", "opcode 7Eh on qid 1",
       "Invalid Command Opcode", false, io_reserved_opcode},
      {"io.admin-opcode-on-io-queue", "io", M, "NVM CS 1.0 §3", "Identify sent to an I/O queue",
       "opcode 06h on qid 1", "Invalid Command Opcode", false, io_admin_opcode},
      {"admin.vendor-opcode", "admin", M, "Base 2.0 §5", "unsupported vendor admin opcode",
       "opcode C5h on the admin queue", "Invalid Command Opcode", false, admin_vendor_opcode},
      {"io.nsid-zero", "io", M, "Base 2.0 §3.2.1", "Read of NSID 0", "Read NSID 0",
       "Invalid Namespace or Format", false, io_nsid_zero},
      {"io.nsid-broadcast", "io", M, "Base 2.0 §3.2.1", "Read of NSID FFFFFFFFh",
       "Read NSID FFFFFFFFh", "Invalid Namespace or Format", false, io_nsid_broadcast},
      {"io.nsid-invalid", "io", M, "Base 2.0 §3.2.1", "Read of an invalid NSID",
       "Read NSID FFFFFFFEh", "Invalid Namespace or Format", false, io_nsid_invalid},
      // Asynchronous events, SQHD, flow control, capsule sizes, reconnects, discovery.
      {"aer.limit", "aer", M, "Base 2.0 §5.2", "one Asynchronous Event Request above AERL + 1",
       "AERL + 2 Asynchronous Event Requests",
       "the last answered at once with Asynchronous Event Request Limit Exceeded (SCT 1h SC "
       "05h), the others held",
       false, aer_limit},
      {"sqhd.admin-wraps", "sqhd", M, "Base 2.0 §4.2; RDMA 1.0", "SQHD on a 4-entry admin queue",
       "Connect SQSIZE 3, then 9 Property Gets", "SQHD 1,2,3,0,1,2,3,0,1,2", false, sqhd_admin},
      {"sqhd.io-wraps", "sqhd", M, "Base 2.0 §4.2; RDMA 1.0", "SQHD on a 4-entry I/O queue",
       "Connect SQSIZE 3, then 9 Flushes", "SQHD 1,2,3,0,1,2,3,0,1,2", false, sqhd_io},
      {"queue.more-than-entries", "queue", M, "Base 2.0 §4.1; RDMA 1.0",
       "more capsules at once than queue entries", "16 Property Gets on a 4-entry admin queue",
       "all 16 answered with success and SQHD < 4, or the queue torn down; a new association "
       "works",
       false, queue_more_than_entries},
      {"capsule.shorter-than-sqe", "capsule", S, "RDMA 1.0", "a 32-byte capsule",
       "32 bytes on qid 1", "an error status or the queue torn down; a new association works",
       false, capsule_shorter_than_sqe},
      {"capsule.longer-than-receive", "capsule", S, "RDMA 1.0", "a capsule longer than IOCCSZ",
       "SQE + in-capsule size + 4096 bytes on qid 1",
       "an error status or the queue torn down; a new association works", false,
       capsule_longer_than_receive},
      {"reconnect.admin", "reconnect", S, "Base 2.0 §3.3", "10 associations in a row",
       "10 x (admin Connect, enable, disconnect) without waiting", "all 10 succeed", false,
       reconnect_admin},
      {"reconnect.io-queue", "reconnect", S, "Base 2.0 §6.3", "10 quick I/O queue reconnects",
       "10 x (CM connect qid 1, Connect, disconnect) on one controller", "all 10 succeed", false,
       reconnect_io},
      {"discovery.identify", "discovery", M, "Base 2.0 §5.17.2.1, §3.1.2",
       "Identify of the discovery controller", "admin Connect to the discovery NQN, Identify",
       "success, CNTRLTYPE 2 (discovery)", false, discovery_identify},
      {"discovery.no-io-queue", "discovery", M, "Base 2.0 §3.1.2",
       "I/O queue on a discovery controller", "I/O Connect qid 1 to the discovery controller",
       "CM reject or Connect Invalid Parameters", false, discovery_no_io_queue},
      // In-band authentication, DH-HMAC-CHAP (Base 2.0 §8.13.5): with -S/--dhchap-secret.
      {"auth.required-before-commands", "auth", M, "Base 2.0 §6.3, §8.13.5",
       "a command before authenticating", "admin Connect (ATR set), Identify",
       "Authentication Required (SCT 1h SC 91h) DNR", false, auth_required_before_commands},
      {"auth.io-queue-authenticates", "auth", M, "Base 2.0 §6.3, §8.13.5",
       "an I/O queue of an authenticated controller", "I/O Connect, Read before authenticating",
       "ATR set on the I/O Connect; the Read gets Authentication Required DNR", false,
       auth_io_queue_authenticates},
      {"auth.wrong-key", "auth", M, "Base 2.0 §8.13.5.4", "a random host key",
       "Negotiate, Reply computed with a random key", "AUTH_Failure1; commands still refused",
       false, auth_wrong_key},
      {"auth.wrong-controller-key", "auth", M, "Base 2.0 §8.13.5.5",
       "bidirectional with a random controller key", "Reply with C2, the host checks Success1",
       "the controller's response does not match, or AUTH_Failure1", false,
       auth_wrong_controller_key},
      {"auth.unusable-hash", "auth", M, "Base 2.0 §8.13.5.3", "an offer of no known hash",
       "Negotiate with HashIDList {F0h}",
       "AUTH_Failure1 hash function unusable; dangerous: nvmet 6.12 looks such an identifier up "
       "unchecked",
       true, auth_unusable_hash},
      {"auth.unusable-dhgroup", "auth", M, "Base 2.0 §8.13.5.3", "an offer of no known DH group",
       "Negotiate with DHGIDList {F0h}",
       "AUTH_Failure1 DH group unusable; dangerous: nvmet 6.12 looks such an identifier up "
       "unchecked",
       true, auth_unusable_dhgroup},
      {"auth.replayed-reply", "auth", M, "Base 2.0 §8.13.5.4", "a Reply sent twice",
       "a good transaction to Success1, then its Reply again", "AUTH_Failure1 at the next Receive",
       false, auth_replayed_reply},
      {"auth.wrong-transaction-id", "auth", M, "Base 2.0 §8.13.5.4",
       "a Reply of another transaction", "Reply with T_ID + 1", "AUTH_Failure1 at the next Receive",
       false, auth_wrong_transaction_id},
      {"auth.truncated-reply", "auth", M, "Base 2.0 §8.13.5.4", "half a Reply",
       "the first half of a good Reply", "AUTH_Failure1 at the next Receive", false,
       auth_truncated_reply},
      {"auth.stalled-transaction", "auth", S, "Base 2.0 §8.13.5",
       "a host that stops mid-transaction", "Negotiate, then nothing for 30 s",
       "the target disconnects the queue (nvmf-target: --connect-timeout-ms after the RDMA "
       "connection)",
       false, auth_stalled_transaction},
      {"auth.second-negotiate", "auth", S, "Base 2.0 §8.13.5", "AUTH_Negotiate mid-transaction",
       "Negotiate, Negotiate", "AUTH_Failure1 at the next Receive (nvmet restarts instead)", false,
       auth_second_negotiate},
  };
  return cases;
}

}  // namespace nvmf::host::conform
