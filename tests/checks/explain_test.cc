#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "checks/check.h"
#include "checks/explain.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::RunInProcess;
using testing::TempDir;

TEST(Explain, EveryCheckHasAnExplanationInOrder) {
  const auto& checks = AllChecks();
  const auto& ex = Explanations();
  ASSERT_EQ(ex.size(), checks.size() + 1);
  for (size_t i = 0; i < checks.size(); ++i) EXPECT_STREQ(ex[i].id, checks[i].id);
  EXPECT_STREQ(ex.back().id, "ladder");
}

TEST(Explain, OneTopicCaseInsensitive) {
  auto r = RunInProcess({"explain", "g8"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("G8: stale official playbooks", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("#109 (2026-08-24)"), std::string::npos);
  EXPECT_EQ(r.out.find("G7:"), std::string::npos);
}

TEST(Explain, CorrectionsAreShown) {
  auto r = RunInProcess({"explain", "G5"});
  EXPECT_NE(r.out.find("231-234 GB/s"), std::string::npos);
  EXPECT_NE(r.out.find("Common advice, checked against the sources"), std::string::npos);
  auto g4 = RunInProcess({"explain", "G4"});
  EXPECT_NE(g4.out.find("100 W"), std::string::npos);
}

// The text names advice by what it says, never by a document the user does not have.
TEST(Explain, NoTextRefersToSeedDocuments) {
  for (const auto& argv : {std::vector<std::string>{"explain"}, std::vector<std::string>{"--json", "explain"}}) {
    auto r = RunInProcess(argv);
    ASSERT_EQ(r.rc, 0);
    std::string lower = r.out;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lower.find("seed"), std::string::npos) << r.out;
    EXPECT_EQ(lower.find("checks-spec"), std::string::npos) << r.out;
  }
}

TEST(Explain, LadderInOrder) {
  auto r = RunInProcess({"explain", "ladder"});
  ASSERT_EQ(r.rc, 0);
  size_t a = r.out.find("1. Flush"), b = r.out.find("2. Shorten"), c = r.out.find("3. Downgrade");
  ASSERT_NE(a, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
}

TEST(Explain, UnknownTopicIsUsageError) {
  auto r = RunInProcess({"explain", "G12"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("G12"), std::string::npos);
}

TEST(Explain, JsonHasAllFields) {
  auto r = RunInProcess({"explain", "G1", "--json"});
  EXPECT_EQ(r.rc, 0);
  for (const char* k : {"\"symptom\"", "\"cause\"", "\"check\"", "\"fix\"", "\"corrections\""})
    EXPECT_NE(r.out.find(k), std::string::npos) << k;
}

TEST(CheckTable, IdsCountAndRangeComeFromTheTable) {
  const auto& checks = AllChecks();
  ASSERT_FALSE(checks.empty());
  for (size_t i = 0; i < checks.size(); ++i) EXPECT_EQ(std::string(checks[i].id), "G" + std::to_string(i + 1));
  EXPECT_EQ(CheckIdRange(), std::string(checks.front().id) + ".." + checks.back().id);
  EXPECT_FALSE(CheckCountWord().empty());
  if (checks.size() == 10) {
    EXPECT_EQ(CheckCountWord(), "ten");
  }
  // the help texts say what the table holds
  auto r = RunInProcess({"preflight", "--help"});
  EXPECT_NE(r.out.find("Check the " + CheckCountWord() + " known DGX Spark failure modes " + CheckIdRange()),
            std::string::npos)
      << r.out;
}

TEST(CheckTable, EachResultIsStampedWithItsRowsId) {
  TempDir root;
  HostView host{HostOptions{root.path(), "none", "none"}, HostFs(root.path()), {}};
  HostFacts facts(host, PreflightOptions{});
  // a check function that names the wrong id still reports under its row's
  CheckDef def{"G99", "test row", [](const HostFacts&) { return CheckResult{"G1", CheckStatus::kInfo, "x", {}, ""}; }};
  EXPECT_EQ(RunCheck(def, facts).id, "G99");
  for (const CheckDef& c : AllChecks()) EXPECT_EQ(RunCheck(c, facts).id, c.id);
}

}  // namespace
}  // namespace sparkops
