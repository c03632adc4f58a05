// run --limit-from-plan: the job cgroup's memory.high/memory.max from the plan (run/plan_limits.h).
#include "run/plan_limits.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::ReadFileOrDie;
using testing::RunBinary;
using testing::TempDir;

constexpr uint64_t kG = uint64_t{1} << 30;

TEST(PlanLimits, LevelsFromThePlansHighEnd) {
  struct Case {
    const char* plan;
    std::optional<uint64_t> mem_total;
    uint64_t high, max;
    bool capped;
  } cases[] = {
      // the verdict's peak (the high end of process and load peaks) is memory.high; max adds 10%
      {R"({"verdict_peak_gib": 40, "process_peak_gib": 30, "range": {"process_peak_gib": {"low": 25, "high": 35}}})",
       128 * kG, 40 * kG, 44 * kG, false},
      // a small plan: the margin is at least 1 GiB
      {R"({"verdict_peak_gib": 2})", std::nullopt, 2 * kG, 3 * kG, false},
      // no verdict peak: the range's high end, then the process peak
      {R"({"range": {"process_peak_gib": {"low": 5, "high": 10}}, "process_peak_gib": 8})", 128 * kG, 10 * kG, 11 * kG,
       false},
      {R"({"process_peak_gib": 8})", 128 * kG, 8 * kG, 9 * kG, false},
      // never above MemTotal: max is capped, and high with it when it is above too
      {R"({"verdict_peak_gib": 118})", 120 * kG, 118 * kG, 120 * kG, true},
      {R"({"verdict_peak_gib": 130})", 120 * kG, 120 * kG, 120 * kG, true},
  };
  for (const Case& c : cases) {
    auto l = LimitsFromPlan(c.plan, c.mem_total);
    ASSERT_TRUE(l) << c.plan << ": " << l.error().message;
    EXPECT_EQ(l->high, c.high) << c.plan;
    EXPECT_EQ(l->max, c.max) << c.plan;
    EXPECT_EQ(l->capped, c.capped) << c.plan;
    EXPECT_EQ(l->high % 4096, 0u);
    EXPECT_EQ(l->max % 4096, 0u);
  }
  // a page-unaligned peak is rounded down to whole pages
  auto odd = LimitsFromPlan(R"({"verdict_peak_gib": 1.0000001})", std::nullopt);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->high, kG);
  for (const char* bad :
       {"", "[]", R"({"verdict_peak_gib": 0})", R"({"verdict_peak_gib": "40"})", R"({"model": "x"})"}) {
    auto l = LimitsFromPlan(bad, 128 * kG);
    ASSERT_FALSE(l) << bad;
    EXPECT_EQ(l.error().kind, Error::Kind::kInput);
    EXPECT_NE(l.error().message.find("plan.json"), std::string::npos) << l.error().message;
  }
}

TEST(PlanLimits, WrittenIntoAFixtureCgroupDirectory) {
  TempDir d;
  d.Write("job/memory.high", "max\n");  // as a cgroup with the memory controller has them
  d.Write("job/memory.max", "max\n");
  ASSERT_TRUE(WriteMemoryLimits(d.path() + "/job", 40 * kG, 44 * kG));
  EXPECT_EQ(ReadFileOrDie(d.path() + "/job/memory.high"), std::to_string(40 * kG) + "\n");
  EXPECT_EQ(ReadFileOrDie(d.path() + "/job/memory.max"), std::to_string(44 * kG) + "\n");
  // no memory controller there: the error names the file and the reason
  d.Write("bare/cgroup.procs", "");
  auto e = WriteMemoryLimits(d.path() + "/bare", 1, 2);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("/bare/memory.high"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("memory controller is not enabled"), std::string::npos) << e.error().message;
}

TEST(PlanLimits, RunWithoutAPlanIsAUsageError) {
  TempDir d;
  auto r = RunBinary(
      {"--root", Fixture("gb10"), "run", "--out", d.path() + "/r", "--no-guard", "--limit-from-plan", "--", "true"});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--limit-from-plan needs the job's plan: give --plan-from FILE or --plan-args"),
            std::string::npos)
      << r.err;
}

// Under the subreaper fallback no cgroup holds the job: said once at the start and in meta.json,
// and the job runs.
TEST(PlanLimits, SubreaperModeSaysNoLimitIsSetAndGoesOn) {
  TempDir d;
  const std::string dir = d.path() + "/r";
  auto r = RunBinary({"--root", Fixture("gb10"), "run", "--out", dir, "--no-guard", "--limit-from-plan", "--plan-args",
                      "llama-3.1-8b --method lora --seq 2048 --budget-gib 80", "--", "true"},
                     {{"SPARKOPS_RUN_HOLD", "subreaper"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  const std::string note = "--limit-from-plan: no memory limit set: the job is not in a cgroup of its own";
  auto at = r.err.find(note);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(note, at + 1), std::string::npos) << "said once: " << r.err;
  auto meta = nlohmann::json::parse(ReadFileOrDie(dir + "/meta.json"));
  const auto& m = meta["memory_limits"];
  EXPECT_EQ(m["set"], false) << meta.dump();
  EXPECT_NE(m["why_not_set"].get<std::string>().find("SPARKOPS_RUN_HOLD=subreaper"), std::string::npos);
  const double verdict = nlohmann::json::parse(ReadFileOrDie(dir + "/plan.json"))["verdict_peak_gib"];
  EXPECT_NEAR(m["memory_high_bytes"].get<double>(), verdict * kG, 4096);
  EXPECT_GT(m["memory_max_bytes"].get<uint64_t>(), m["memory_high_bytes"].get<uint64_t>());
}

}  // namespace
}  // namespace sparkops
