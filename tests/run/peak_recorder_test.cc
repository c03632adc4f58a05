// run --plan-args: the measured peaks written beside the plan (run/peak_recorder.h).
#include <gtest/gtest.h>

#include "run/peak_recorder.h"

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace sparkops {
namespace {

ThermalRow Row(std::optional<double> avail, std::optional<double> gpu = std::nullopt) {
  ThermalRow r;
  r.mem_available_gib = avail;
  r.gpu_attributed_gib = gpu;
  return r;
}

TEST(PeakRecorder, PoolDropIsTheLargestFallBelowTheFirstSample) {
  ThermalSeries s;
  s.rows = {Row(100), Row(std::nullopt), Row(70, 12.5), Row(80, 20), Row(95)};
  auto p = PeaksFromThermal(s);
  ASSERT_TRUE(p.pool_drop);
  EXPECT_DOUBLE_EQ(*p.pool_drop, 30.0 * 1073741824.0);
  ASSERT_TRUE(p.gpu_process);
  EXPECT_DOUBLE_EQ(*p.gpu_process, 20.0 * 1073741824.0);
  // One reading is no drop; no GPU attribution is absent, not 0; a rise is a drop of 0.
  ThermalSeries one;
  one.rows = {Row(100)};
  EXPECT_FALSE(PeaksFromThermal(one).pool_drop);
  EXPECT_FALSE(PeaksFromThermal(one).gpu_process);
  ThermalSeries up;
  up.rows = {Row(50), Row(60)};
  EXPECT_EQ(*PeaksFromThermal(up).pool_drop, 0);
}

// The job cgroup's peak goes into peak.json with where it came from (null without a cgroup), and
// plan --calibrate takes it when the pool-wide figures are absent, before any RSS sum.
TEST(PeakRecorder, PeakJsonCarriesTheJobCgroupsPeakAndCalibrateUsesIt) {
  testing::TempDir d;
  const std::string dir = d.path() + "/r";
  auto rec = RunRecorder::Create(dir);
  ASSERT_TRUE(rec) << rec.error().message;
  HostView ctx{HostOptions{}, HostFs("/"), {}};
  const uint64_t five = uint64_t{5} << 30;
  ASSERT_EQ(RecordPeak(ctx, *rec, dir, CgroupPeak{five, "memory.peak"}), "");
  auto j = nlohmann::json::parse(testing::ReadFileOrDie(dir + "/peak.json"));
  EXPECT_EQ(j["cgroup_memory_peak_bytes"], five) << j.dump();
  EXPECT_EQ(j["cgroup_memory_peak_source"], "memory.peak");
  EXPECT_TRUE(j["pool_drop_peak_bytes"].is_null()) << "no thermal rows: no pool drop";

  auto plan = testing::RunInProcess({"--json", "plan", "llama-3.2-1b", "--budget-gib", "50"});
  ASSERT_EQ(plan.rc, 0) << plan.err;
  d.Write("r/plan.json", plan.out);
  auto cal = testing::RunInProcess({"--json", "plan", "--calibrate", dir});
  ASSERT_EQ(cal.rc, 0) << cal.err;
  auto c = nlohmann::json::parse(cal.out)[0];
  EXPECT_EQ(c["measured_what"], "job cgroup (memory.peak)") << cal.out;
  EXPECT_NEAR(c["measured_gib"].get<double>(), 5.0, 0.001);
  // the sampled memory.current is named as such; an RSS figure beside it is not used
  d.Write("r/peak.json",
          R"({"pool_drop_peak_bytes": null, "gpu_process_peak_bytes": null, "cgroup_memory_peak_bytes": 3221225472,)"
          R"( "cgroup_memory_peak_source": "memory.current", "process_rss_peak_bytes": 1000})");
  auto text = testing::RunInProcess({"plan", "--calibrate", dir});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("3.00 GiB  job cgroup (largest memory.current sampled)"), std::string::npos) << text.out;
  // the pool drop, where there is one, still comes first (the cgroup leaves out GPU allocations)
  d.Write("r/peak.json", R"({"pool_drop_peak_bytes": 8589934592, "cgroup_memory_peak_bytes": 3221225472})");
  auto pool = nlohmann::json::parse(testing::RunInProcess({"--json", "plan", "--calibrate", dir}).out)[0];
  EXPECT_EQ(pool["measured_what"], "pool drop (MemAvailable)");

  // no cgroup: the fields are there, null
  const std::string bare = d.path() + "/bare";
  auto rec2 = RunRecorder::Create(bare);
  ASSERT_TRUE(rec2);
  ASSERT_EQ(RecordPeak(ctx, *rec2, bare), "");
  auto b = nlohmann::json::parse(testing::ReadFileOrDie(bare + "/peak.json"));
  ASSERT_TRUE(b.contains("cgroup_memory_peak_bytes"));
  EXPECT_TRUE(b["cgroup_memory_peak_bytes"].is_null());
}

}  // namespace
}  // namespace sparkops
