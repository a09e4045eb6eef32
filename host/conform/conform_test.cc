// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of `nvmf-host conform` that need no device: the catalogue's integrity, the
// verdict logic, the exit status and the three report writers.
#include "host/conform/conform.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/nvme_status.h"

namespace nvmf::host::conform {
namespace {

TEST(ConformCatalogue, HasAtLeastSixtyCasesWithUniqueIdsAndEveryField) {
  const auto& all = catalogue();
  EXPECT_GE(all.size(), 60u);
  std::set<std::string> ids;
  for (const Case& c : all) {
    SCOPED_TRACE(c.id);
    EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id";
    std::string id = c.id, group = c.group;
    EXPECT_EQ(id.rfind(group + ".", 0), 0u) << "id starts with its group";
    std::string spec = c.spec;
    EXPECT_TRUE(spec.find("§") != std::string::npos || spec == "RDMA 1.0") << spec;
    EXPECT_GE(std::string(c.description).size(), 8u);
    EXPECT_GE(std::string(c.sends).size(), 8u);
    EXPECT_GE(std::string(c.expect).size(), 7u);
    EXPECT_TRUE(c.level == Level::kMust || c.level == Level::kShould);
    EXPECT_NE(c.run, nullptr);
  }
}

TEST(ConformCatalogue, CoversEveryCaseGroup) {
  std::set<std::string> groups;
  int dangerous = 0, must = 0;
  for (const Case& c : catalogue()) {
    groups.insert(c.group);
    dangerous += c.dangerous;
    must += c.level == Level::kMust;
  }
  for (const char* g : {"cm", "connect", "property", "identify", "features", "log", "keepalive",
                        "sgl", "io", "aer", "sqhd", "queue", "reconnect"}) {
    EXPECT_TRUE(groups.count(g)) << g;
  }
  // The in-capsule offset that wraps 64 bits crashes Linux 6.1: it must not run by default.
  bool wrap_dangerous = false;
  for (const Case& c : catalogue()) {
    if (std::string(c.id) == "sgl.in-capsule-offset-wrap") wrap_dangerous = c.dangerous;
  }
  EXPECT_TRUE(wrap_dangerous);
  EXPECT_GE(dangerous, 1);
  EXPECT_GT(must, 40);
}

TEST(ConformVerdict, StatusMatchesSctScAndDnrWhenRequired) {
  uint16_t sgl_len_dnr = generic_status(proto::kScDataSglLengthInvalid, true);
  uint16_t sgl_len = generic_status(proto::kScDataSglLengthInvalid, false);
  EXPECT_TRUE(status_matches(sgl_len_dnr, generic(0x0F)));
  EXPECT_TRUE(status_matches(sgl_len_dnr, generic(0x0F, true)));
  EXPECT_TRUE(status_matches(sgl_len, generic(0x0F)));
  EXPECT_FALSE(status_matches(sgl_len, generic(0x0F, true)));
  EXPECT_FALSE(status_matches(sgl_len_dnr, specific(0x0F)));
  EXPECT_FALSE(status_matches(sgl_len_dnr, generic(0x02)));
  // The phase bit, More and CRD do not matter.
  EXPECT_TRUE(status_matches(sgl_len | proto::kStatusPhase | proto::kStatusMore, generic(0x0F)));
  EXPECT_TRUE(status_matches(uint16_t{1}, kSuccess));
  EXPECT_FALSE(status_matches(sgl_len, kSuccess));
}

TEST(ConformVerdict, JudgeStatusPassesAnyListedAnswerAndNamesWhatCame) {
  uint16_t lba = generic_status(proto::kScLbaOutOfRange, true);
  uint16_t internal = generic_status(proto::kScInternalError, true);
  Outcome ok = judge_status(lba, {generic(proto::kScLbaOutOfRange)});
  EXPECT_EQ(ok.verdict, Verdict::kPass);
  EXPECT_EQ(ok.got, "SCT 0h SC 80h LBA Out of Range DNR");
  Outcome bad = judge_status(internal, {generic(proto::kScLbaOutOfRange)});
  EXPECT_EQ(bad.verdict, Verdict::kFail);
  EXPECT_EQ(bad.got, "SCT 0h SC 06h Internal Error DNR");
  EXPECT_EQ(judge_status(internal, {generic(0x80), generic(0x06)}).verdict, Verdict::kPass);
  EXPECT_EQ(judge_status(0, {kSuccess}).got, "success");
  EXPECT_EQ(expect_text(specific(proto::kScConnectInvalidParameters, true)),
            "SCT 1h SC 82h Connect Invalid Parameters DNR");
}

TEST(ConformVerdict, TransportFailuresAreNamed) {
  EXPECT_EQ(transport_text(Status::unavailable("x")), "connection closed by the target");
  EXPECT_EQ(transport_text(Status::timeout("no response within 1500 ms")),
            "no answer (no response within 1500 ms)");
}

// A report of four cases: a must pass, a should failure, a must n/a and a dangerous not run.
RunReport sample() {
  static const Case cases[] = {
      {"io.a", "io", Level::kMust, "NVM CS 1.0 §3.2.4", "a one", "Read", "LBA Out of Range", false,
       nullptr},
      {"io.b", "io", Level::kShould, "Base 2.0 §4.1", "b <two>", "Write & \"more\"", "success",
       false, nullptr},
      {"sgl.c", "sgl", Level::kMust, "Base 2.0 §5.17", "c three", "Read", "Invalid Field", false,
       nullptr},
      {"sgl.d", "sgl", Level::kMust, "RDMA 1.0", "d four", "Write", "SGL Offset Invalid", true,
       nullptr},
  };
  RunReport r;
  r.traddr = "10.99.0.1";
  r.trsvcid = "4420";
  r.subnqn = "nqn.2024-01.io.example:t";
  r.model = "m";
  r.firmware = "f";
  r.ioccsz = 260;
  r.in_capsule_bytes = 4096;
  r.cases = {{&cases[0], pass("SCT 0h SC 80h LBA Out of Range DNR"), 3},
             {&cases[1], fail("SCT 0h SC 06h Internal Error <x>"), 4},
             {&cases[2], not_applicable("MDTS 0"), 0},
             {&cases[3], {Verdict::kNotRun, "dangerous: needs --include-dangerous"}, 0}};
  r.seconds = 1.5;
  return r;
}

TEST(ConformReport, ExitStatusCountsMustFailuresOnly) {
  RunReport r = sample();
  EXPECT_EQ(exit_code(r), 0);  // a should failure, n/a and not run keep exit 0
  Counts n = count(r);
  EXPECT_EQ(n.pass, 1);
  EXPECT_EQ(n.fail, 1);
  EXPECT_EQ(n.should_fail, 1);
  EXPECT_EQ(n.must_fail, 0);
  EXPECT_EQ(n.not_applicable, 1);
  EXPECT_EQ(n.not_run, 1);
  r.cases[0].outcome = fail("success");
  EXPECT_EQ(exit_code(r), 1);
  EXPECT_EQ(count(r).must_fail, 1);
}

TEST(ConformReport, JsonHasEveryCaseWithItsVerdict) {
  nlohmann::json j = to_json(sample());
  ASSERT_EQ(j["cases"].size(), 4u);
  EXPECT_EQ(j["cases"][0]["id"], "io.a");
  EXPECT_EQ(j["cases"][0]["verdict"], "pass");
  EXPECT_EQ(j["cases"][0]["level"], "must");
  EXPECT_EQ(j["cases"][0]["spec"], "NVM CS 1.0 §3.2.4");
  EXPECT_EQ(j["cases"][1]["verdict"], "FAIL");
  EXPECT_EQ(j["cases"][1]["got"], "SCT 0h SC 06h Internal Error <x>");
  EXPECT_EQ(j["cases"][2]["verdict"], "n/a");
  EXPECT_EQ(j["cases"][3]["verdict"], "not run");
  EXPECT_EQ(j["cases"][3]["dangerous"], true);
  EXPECT_EQ(j["summary"]["must_fail"], 0);
  EXPECT_EQ(j["summary"]["should_fail"], 1);
  EXPECT_EQ(j["summary"]["exit_code"], 0);
  EXPECT_EQ(j["target"]["ioccsz"], 260);
  EXPECT_EQ(j["target"]["in_capsule_bytes"], 4096);
}

TEST(ConformReport, JunitMarksFailuresAndSkipsAndEscapes) {
  std::string x = junit_xml(sample(), "conform_ours_4096");
  EXPECT_NE(x.find("<testsuite name=\"conform_ours_4096\" tests=\"4\" failures=\"1\" "
                   "skipped=\"2\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<testcase classname=\"conform.io\" name=\"io.a\""), std::string::npos);
  // A should-level FAIL is a failure of its testcase too (only the exit status spares it).
  EXPECT_NE(x.find("<failure message=\"SCT 0h SC 06h Internal Error &lt;x&gt;\">should (Base "
                   "2.0 §4.1): expected success</failure>"),
            std::string::npos)
      << x;
  EXPECT_EQ(exit_code(sample()), 0) << "should findings leave the exit status 0";
  RunReport r = sample();
  r.cases[0].outcome = fail("SCT 0h SC 06h Internal Error DNR");
  std::string y = junit_xml(r, "s");
  EXPECT_NE(y.find("failures=\"2\""), std::string::npos);
  EXPECT_NE(y.find("<failure message=\"SCT 0h SC 06h Internal Error DNR\">must (NVM CS 1.0 "
                   "§3.2.4): expected LBA Out of Range</failure>"),
            std::string::npos)
      << y;
  EXPECT_NE(x.find("<skipped message=\"MDTS 0\"/>"), std::string::npos);
  EXPECT_NE(x.find("<skipped message=\"dangerous: needs --include-dangerous\"/>"),
            std::string::npos);
  EXPECT_EQ(x.find("<x>"), std::string::npos);
}

TEST(ConformReport, TableHasOneRowPerCaseAndASummary) {
  std::string t = table_text(sample());
  EXPECT_NE(t.find("io.a   must    pass     SCT 0h SC 80h LBA Out of Range DNR  |  LBA Out of "
                   "Range\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("io.b   should  FAIL"), std::string::npos) << t;
  EXPECT_NE(t.find("1 pass, 1 FAIL (0 must, 1 should), 1 n/a, 1 not run"), std::string::npos) << t;
}

TEST(ConformSelect, PicksListedIdsInCatalogueOrderAndRefusesUnknownOnes) {
  auto all = select_cases(catalogue(), {});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), catalogue().size());
  auto two = select_cases(catalogue(), {"io.flush", "cm.recfmt-nonzero"});
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_STREQ((*two)[0]->id, "cm.recfmt-nonzero");
  EXPECT_STREQ((*two)[1]->id, "io.flush");
  auto bad = select_cases(catalogue(), {"io.flush", "io.no-such-case"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("io.no-such-case"), std::string::npos);
}

TEST(ConformList, ListsEveryCaseAndMarksTheDangerousOnes) {
  std::string l = list_text(catalogue());
  EXPECT_NE(l.find(std::to_string(catalogue().size()) + " cases\n"), std::string::npos);
  size_t at = l.find("sgl.in-capsule-offset-wrap");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(l.find("dangerous", at), std::string::npos);
}

TEST(ConformList, JsonHasEveryCaseWithItsFields) {
  nlohmann::json j = list_json(catalogue());
  ASSERT_TRUE(j["cases"].is_array());
  ASSERT_EQ(j["cases"].size(), catalogue().size());
  EXPECT_EQ(j["count"], catalogue().size());
  const nlohmann::json* wrap = nullptr;
  for (const nlohmann::json& c : j["cases"]) {
    if (c["id"] == "sgl.in-capsule-offset-wrap") wrap = &c;
  }
  ASSERT_NE(wrap, nullptr);
  EXPECT_EQ((*wrap)["group"], "sgl");
  EXPECT_TRUE((*wrap)["dangerous"].get<bool>());
  EXPECT_FALSE((*wrap)["spec"].get<std::string>().empty());
  EXPECT_EQ(j["cases"][0]["id"], catalogue()[0].id);
  EXPECT_EQ(j["cases"][0]["level"], level_name(catalogue()[0].level));
}

}  // namespace
}  // namespace nvmf::host::conform
