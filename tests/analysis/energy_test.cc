// Energy per run and per step (issue 37): a run with known power gives exact Wh, from the NVML
// counter, the power integral and the spbm system rail; end to end through `analyze`.
#include "analysis/energy.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace sparkops {
namespace {

constexpr int64_t kT0 = 1'780'000'000'000;  // any UTC ms

/// Rows every `every_ms` from kT0 for `n` rows at `w` watts (GPU) and twice that (system).
ThermalSeries Constant(double w, int n, int64_t every_ms, bool counter) {
  ThermalSeries s;
  for (int i = 0; i < n; ++i) {
    ThermalRow r;
    r.t_ms = kT0 + i * every_ms;
    r.power_w = w;
    r.power.sys_power_w = 2 * w;
    if (counter) r.energy_j = 5000.0 + w * static_cast<double>(i * every_ms) / 1000.0;
    s.rows.push_back(r);
  }
  return s;
}

StepSeries Steps(int64_t first_step, int64_t last_step, int64_t t_first, int64_t every_ms) {
  StepSeries s;
  for (int64_t k = first_step; k <= last_step; ++k) s.points.push_back({k, t_first + (k - first_step) * every_ms});
  return s;
}

TEST(Energy, ConstantPowerOverTheStepsSpanIsExact) {
  // 90 W GPU, 180 W system, samples every 10 s for 6 min; steps 1..101 every 2 s from kT0 + 63 s
  // (not on a sample): 200 s -> 5 Wh GPU, 10 Wh system, 0.1 Wh per step.
  auto e = EnergyOfRun(Constant(90, 37, 10'000, false), Steps(1, 101, kT0 + 63'000, 2'000));
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->seconds, 200);
  EXPECT_EQ(e->steps, 100);
  ASSERT_TRUE(e->gpu && e->system);
  EXPECT_NEAR(e->gpu->wh, 5.0, 1e-9);
  EXPECT_EQ(e->gpu->source, "integral of power_w");
  EXPECT_NEAR(e->system->wh, 10.0, 1e-9);
  EXPECT_EQ(e->Total(), &*e->system);
  EXPECT_NEAR(*e->WhPerStep(), 0.1, 1e-12);
}

TEST(Energy, CounterPreferredAndACounterResetFallsBackToTheIntegral) {
  auto e = EnergyOfRun(Constant(90, 37, 10'000, true), Steps(1, 101, kT0 + 63'000, 2'000));
  ASSERT_TRUE(e && e->gpu);
  EXPECT_EQ(e->gpu->source, "nvml energy counter");
  EXPECT_NEAR(e->gpu->wh, 5.0, 1e-9);

  auto reset = Constant(90, 37, 10'000, true);
  reset.rows[10].energy_j = 1.0;  // the driver was reloaded mid-run
  auto r = EnergyOfRun(reset, Steps(1, 101, kT0 + 63'000, 2'000));
  ASSERT_TRUE(r && r->gpu);
  EXPECT_EQ(r->gpu->source, "integral of power_w");
  EXPECT_NEAR(r->gpu->wh, 5.0, 1e-9);
}

TEST(Energy, GapsAreNotBridgedAndNothingReadIsAbsent) {
  auto s = Constant(100, 4, 10'000, false);  // 0, 10, 20, 30 s
  s.rows[3].t_ms = kT0 + 200'000;             // a 180 s hole before the last sample
  auto e = EnergyOfRun(s, StepSeries{});
  ASSERT_TRUE(e && e->gpu);
  EXPECT_NEAR(e->gpu->wh, 100.0 * 20 / 3600, 1e-9);  // the 20 s before the hole only
  EXPECT_FALSE(e->WhPerStep());                       // no steps: no per-step figure

  ThermalSeries none = Constant(100, 5, 10'000, false);
  for (auto& r : none.rows) r.power_w.reset(), r.power.sys_power_w.reset();
  EXPECT_FALSE(EnergyOfRun(none, StepSeries{}));
  auto one = Constant(100, 1, 10'000, false);  // one reading is no integral (not 0 Wh)
  EXPECT_FALSE(EnergyOfRun(one, StepSeries{}));
  auto nan = Constant(100, 5, 10'000, false);
  nan.rows[2].power_w = NAN;
  nan.rows[2].power.sys_power_w = -5;
  auto en = EnergyOfRun(nan, StepSeries{});
  ASSERT_TRUE(en && en->gpu);
  EXPECT_NEAR(en->gpu->wh, 100.0 * 40 / 3600, 1e-9);  // the bad reading is skipped, its neighbours joined
}

TEST(Energy, AnalyzeTextJsonAndPrice) {
  testing::TempDir dir;
  std::string log, csv = "timestamp,power_w,sys_power_w\n";
  auto iso = [](int64_t s) { return fmt::format("2026-11-29T10:{:02}:{:02}.000Z", s / 60, s % 60); };
  for (int s = 0; s <= 360; s += 10) csv += fmt::format("{},90.0,180.0\n", iso(s));
  for (int k = 1; k <= 101; ++k) log += fmt::format("{}\to\tstep {} loss 2.0\n", iso(63 + 2 * (k - 1)), k);
  dir.Write("train.log", log);
  dir.Write("thermal.csv", csv);
  auto r =
      testing::RunInProcess({"analyze", dir.path(), "--step-format", "step {step} loss {loss}", "--price-kwh", "0.30"},
                            {{"TZ", "UTC"}});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("energy   10.00 Wh (system: integral of sys_power_w (spbm)); GPU 5.00 Wh (integral of "
                       "power_w); over 200 s; 0.1 Wh/step over 100 steps; cost 0.003 at 0.3/kWh\n"),
            std::string::npos)
      << r.out;
  auto j = testing::RunInProcess({"analyze", dir.path(), "--json", "--step-format", "step {step} loss {loss}"},
                                 {{"TZ", "UTC"}});
  ASSERT_EQ(j.rc, 0) << j.err;
  auto e = nlohmann::json::parse(j.out)["energy"];
  EXPECT_NEAR(e["energy_wh"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(e["gpu_wh"].get<double>(), 5.0, 1e-9);
  EXPECT_NEAR(e["wh_per_step"].get<double>(), 0.1, 1e-12);
  EXPECT_EQ(e["scope"], "system");
  EXPECT_FALSE(e.contains("cost"));
  EXPECT_EQ(testing::RunInProcess({"analyze", dir.path(), "--price-kwh", "-1"}).rc, 2);
  EXPECT_EQ(testing::RunInProcess({"analyze", dir.path(), "--price-kwh", "inf"}).rc, 2);
}

// A log that prints tokens/s and no step time: 500 tokens/s, a step every 2 s (1000 tokens a step),
// 100 steps at 180 W system power: 10 Wh for 100k tokens = 0.1 Wh per 1k tokens. Samples/s is no token rate.
TEST(Energy, WhPer1kTokensWhereTheLogPrintsTokensPerSecond) {
  testing::TempDir dir;
  std::string csv = "timestamp,power_w,sys_power_w\n";
  auto iso = [](int64_t s) { return fmt::format("2026-11-29T10:{:02}:{:02}.000Z", s / 60, s % 60); };
  for (int s = 0; s <= 360; s += 10) csv += fmt::format("{},90.0,180.0\n", iso(s));
  dir.Write("thermal.csv", csv);
  for (const char* key : {"tokens_per_second", "samples_per_second"}) {
    std::string log;
    for (int k = 1; k <= 101; ++k)
      log += fmt::format("{}\to\t{{\"step\": {}, \"loss\": 2.0, \"{}\": 500}}\n", iso(63 + 2 * (k - 1)), k, key);
    dir.Write("train.log", log);
    auto j = testing::RunInProcess({"analyze", dir.path(), "--json"}, {{"TZ", "UTC"}});
    ASSERT_EQ(j.rc, 0) << j.err;
    auto e = nlohmann::json::parse(j.out)["energy"];
    if (std::string(key) == "samples_per_second") {
      EXPECT_FALSE(e.contains("wh_per_1k_tokens")) << e.dump();
      continue;
    }
    EXPECT_NEAR(e["tokens"].get<double>(), 100000, 0.1) << e.dump();  // 1/500 kept as a float
    EXPECT_NEAR(e["wh_per_1k_tokens"].get<double>(), 0.1, 1e-6) << e.dump();
    auto t = testing::RunInProcess({"analyze", dir.path()}, {{"TZ", "UTC"}});
    EXPECT_NE(t.out.find("; 0.1 Wh per 1k tokens (100000 tokens, tokens/s x time)"), std::string::npos) << t.out;
  }
}

// HF Trainer prints no tokens/s per step; with include_num_input_tokens_seen its logging dicts
// carry the running count (transformers 5.x's printed form). Steps every 2 s (tqdm, 2.00s/it),
// 1000 tokens a step, a dict every 10 steps; 200 s at 180 W system power: 10 Wh for 100k tokens.
TEST(Energy, WhPer1kTokensFromHfTrainersNumInputTokensSeen) {
  testing::TempDir dir;
  std::string csv = "timestamp,power_w,sys_power_w\n";
  auto iso = [](int64_t s) { return fmt::format("2026-11-29T10:{:02}:{:02}.000Z", s / 60, s % 60); };
  for (int s = 0; s <= 360; s += 10) csv += fmt::format("{},90.0,180.0\n", iso(s));
  dir.Write("thermal.csv", csv);
  std::string log;
  for (int k = 1; k <= 101; ++k) {
    const int64_t t = 63 + 2 * (k - 1);
    log += fmt::format("{}\te\t{:3}%|#    | {}/101 [00:00<00:00,  2.00s/it]\n", iso(t), k * 100 / 101, k);
    if (k % 10 == 1)
      log += fmt::format(
          "{}\to\t{{'loss': '2.007', 'grad_norm': '2.271', 'learning_rate': '1.9e-05', 'epoch': '0.25', "
          "'num_input_tokens_seen': {}, 'train_runtime': '{}', 'train_tokens_per_second': '500'}}\n",
          iso(t), 1000 * k, t - 61);
  }
  dir.Write("train.log", log);
  auto j = testing::RunInProcess({"analyze", dir.path(), "--json"}, {{"TZ", "UTC"}});
  ASSERT_EQ(j.rc, 0) << j.err;
  auto e = nlohmann::json::parse(j.out)["energy"];
  EXPECT_NEAR(e["energy_wh"].get<double>(), 10.0, 1e-9) << e.dump();
  EXPECT_NEAR(e["tokens"].get<double>(), 100000, 1e-6) << e.dump();
  EXPECT_EQ(e["tokens_source"], "num_input_tokens_seen");
  EXPECT_NEAR(e["wh_per_1k_tokens"].get<double>(), 0.1, 1e-9) << e.dump();
  auto t = testing::RunInProcess({"analyze", dir.path()}, {{"TZ", "UTC"}});
  EXPECT_NE(t.out.find("; 0.1 Wh per 1k tokens (100000 tokens, num_input_tokens_seen)"), std::string::npos) << t.out;
}

// Steps 1..60 every 2 s, then 61..100 every 4 s (a 2x slowdown) at a constant 180 W system power:
// a step costs 0.1 Wh at the baseline and 0.2 Wh in the slowdown, so each slow step spent 0.1 Wh more.
TEST(Energy, EachSlowdownSaysWhatItCostBeyondTheBaseline) {
  testing::TempDir dir;
  std::string log, csv = "timestamp,power_w,sys_power_w\n";
  auto iso = [](int64_t s) { return fmt::format("2026-11-29T10:{:02}:{:02}.000Z", s / 60, s % 60); };
  for (int s = 0; s <= 360; s += 10) csv += fmt::format("{},90.0,180.0\n", iso(s));
  for (int k = 1; k <= 100; ++k)
    log += fmt::format("{}\to\tstep {} loss 2.0\n", iso(k <= 60 ? 63 + 2 * (k - 1) : 181 + 4 * (k - 60)), k);
  dir.Write("train.log", log);
  dir.Write("thermal.csv", csv);
  auto j = testing::RunInProcess({"analyze", dir.path(), "--json", "--step-format", "step {step} loss {loss}"},
                                 {{"TZ", "UTC"}});
  ASSERT_EQ(j.rc, 0) << j.err;
  auto events = nlohmann::json::parse(j.out)["events"];
  ASSERT_EQ(events.size(), 1u) << j.out;
  const auto& ev = events[0];
  const double steps = ev["end_step"].get<double>() - ev["start_step"].get<double>() + 1;
  EXPECT_GE(steps, 35) << j.out;
  EXPECT_NEAR(ev["baseline_wh_per_step"].get<double>(), 0.1, 1e-9);
  EXPECT_NEAR(ev["energy_wh"].get<double>(), 0.2 * steps, 0.25) << j.out;  // the first step may straddle the change
  EXPECT_NEAR(ev["extra_energy_wh"].get<double>(), 0.1 * steps, 0.25) << j.out;
  auto t = testing::RunInProcess({"analyze", dir.path(), "--step-format", "step {step} loss {loss}"}, {{"TZ", "UTC"}});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("against the baseline's 0.1 Wh/step"), std::string::npos) << t.out;

  // Without power readings no energy is claimed for it.
  dir.Write("thermal.csv", "timestamp,gpu_temp_c\n" + iso(0) + ",50\n" + iso(360) + ",50\n");
  j = testing::RunInProcess({"analyze", dir.path(), "--json", "--step-format", "step {step} loss {loss}"},
                            {{"TZ", "UTC"}});
  ASSERT_EQ(j.rc, 0) << j.err;
  EXPECT_FALSE(nlohmann::json::parse(j.out)["events"][0].contains("energy_wh")) << j.out;
}

}  // namespace
}  // namespace sparkops
