#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "analysis/slowdown.h"
#include "analysis/step_series.h"
#include "test_util.h"

namespace sparkops {
namespace {

std::vector<float> Series(size_t n, float base, float jitter = 0.03f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base * (1 + jitter * std::sin(static_cast<float>(i) * 1.7f));
  return v;
}

TEST(Slowdown, DoublingMidwayIsOneEventAtTheRightStep) {
  auto c = Series(400, 0.5f);
  for (size_t i = 250; i < 400; ++i) c[i] *= 2;
  auto d = DetectSlowdowns(c, std::vector<uint8_t>(c.size(), 0));
  ASSERT_TRUE(d.ran);
  ASSERT_EQ(d.slowdowns.size(), 1u);
  EXPECT_EQ(d.slowdowns[0].first, 250u);
  EXPECT_EQ(d.slowdowns[0].last, 399u);
  EXPECT_NEAR(d.slowdowns[0].ratio, 2.0, 0.1);
  EXPECT_FALSE(d.slowdowns[0].recovered);
  EXPECT_NEAR(d.baseline, 0.5, 0.02);
}

TEST(Slowdown, PointsOverloadSeesTheSameCostsAndFlags) {
  // Analyze runs the detector over the step points in place: same events, spikes and baseline
  // as over the copied-out columns, NaN costs and flagged points included.
  auto c = Series(400, 0.5f);
  std::vector<uint8_t> f(c.size(), 0);
  for (size_t i = 250; i < 330; ++i) c[i] *= 2;
  for (size_t i : {60u, 120u, 180u}) c[i] *= 3;
  f[120] = kAfterEval;
  f[180] = kAfterSave;
  c[90] = NAN;
  std::vector<StepPoint> pts(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    pts[i].cost = c[i];
    pts[i].flags = f[i];
  }
  auto a = DetectSlowdowns(c, f), b = DetectSlowdowns(pts);
  ASSERT_EQ(a.slowdowns.size(), 1u);
  ASSERT_EQ(b.slowdowns.size(), 1u);
  EXPECT_EQ(a.slowdowns[0].first, b.slowdowns[0].first);
  EXPECT_EQ(a.slowdowns[0].last, b.slowdowns[0].last);
  EXPECT_EQ(a.slowdowns[0].recovered, b.slowdowns[0].recovered);
  EXPECT_EQ(a.baseline, b.baseline);
  EXPECT_EQ(a.spikes_other, 1u);
  EXPECT_EQ(b.spikes_other, 1u);
  EXPECT_EQ(b.spikes_eval, 1u);
  EXPECT_EQ(b.spikes_save, 1u);
}

TEST(Slowdown, RecoveryEndsTheEvent) {
  auto c = Series(400, 0.5f);
  for (size_t i = 200; i < 260; ++i) c[i] *= 1.5f;
  auto d = DetectSlowdowns(c, std::vector<uint8_t>(c.size(), 0));
  ASSERT_EQ(d.slowdowns.size(), 1u);
  EXPECT_EQ(d.slowdowns[0].first, 200u);
  EXPECT_EQ(d.slowdowns[0].last, 259u);
  EXPECT_TRUE(d.slowdowns[0].recovered);
}

TEST(Slowdown, BelowThresholdAndOneOffSpikesAreNotEvents) {
  auto c = Series(400, 0.5f);
  for (size_t i = 200; i < 400; ++i) c[i] *= 1.2f;  // 1.2x: under 1.3x
  c[100] *= 10;                                      // a named spike (evaluation)
  c[150] *= 10;                                      // an unnamed one
  c[151] *= 10;
  std::vector<uint8_t> f(c.size(), 0);
  f[100] = kAfterEval;
  auto d = DetectSlowdowns(c, f);
  EXPECT_TRUE(d.slowdowns.empty());
  EXPECT_EQ(d.spikes_eval, 1u);
  EXPECT_EQ(d.spikes_other, 2u);
}

TEST(Slowdown, WarmUpIsNotTheBaseline) {
  auto c = Series(300, 0.5f);
  for (size_t i = 0; i < 10; ++i) c[i] = 5.0f;  // compilation / first steps
  auto d = DetectSlowdowns(c, std::vector<uint8_t>(c.size(), 0));
  EXPECT_TRUE(d.slowdowns.empty());
  EXPECT_NEAR(d.baseline, 0.5, 0.02);
}

// issue 30: a slow stretch right after warm-up (the 25 s hog in steps 60-107 of 400) does not
// become the baseline: the baseline is the run's fastest sustained window, and the stretch is found.
TEST(Slowdown, ASlowStretchAfterWarmUpIsNotTheBaseline) {
  struct Case {
    size_t from, len;
  } cases[] = {{60, 48}, {70, 30}, {45, 70}, {100, 15}};
  for (const Case& k : cases) {
    auto c = Series(400, 0.5f);
    for (size_t i = k.from; i < k.from + k.len; ++i) c[i] *= 2;
    auto d = DetectSlowdowns(c, std::vector<uint8_t>(c.size(), 0));
    ASSERT_TRUE(d.ran);
    EXPECT_TRUE(d.baseline_moved) << k.from;
    EXPECT_NEAR(d.baseline, 0.5, 0.02) << k.from;
    EXPECT_LT(d.threshold_ratio, 1.5) << k.from;
    EXPECT_GE(d.base_first, k.from + k.len) << k.from;
    EXPECT_EQ(d.early_first, d.warmup);
    EXPECT_GE(d.early_slow, k.len - 4) << k.from;
    ASSERT_EQ(d.slowdowns.size(), 1u) << k.from;
    EXPECT_EQ(d.slowdowns[0].first, k.from);
    EXPECT_EQ(d.slowdowns[0].last, k.from + k.len - 1);
    EXPECT_NEAR(d.slowdowns[0].ratio, 2.0, 0.1);
    EXPECT_TRUE(d.slowdowns[0].recovered);
  }
  // A clean run, and one whose only slowdown comes later, keep the window right after warm-up.
  auto clean = Series(400, 0.5f);
  auto later = clean;
  for (size_t i = 250; i < 400; ++i) later[i] *= 2;
  for (const auto& c : {clean, later}) {
    auto d = DetectSlowdowns(c, std::vector<uint8_t>(c.size(), 0));
    EXPECT_FALSE(d.baseline_moved);
    EXPECT_EQ(d.base_first, d.warmup);
    EXPECT_EQ(d.early_slow, 0u);
  }
  // Spikes in the early window are not a stretch: no move.
  auto spiky = Series(400, 0.5f);
  for (size_t i : {50u, 60u, 70u, 80u}) spiky[i] *= 3;
  EXPECT_FALSE(DetectSlowdowns(spiky, std::vector<uint8_t>(spiky.size(), 0)).baseline_moved);
}

TEST(Slowdown, TooFewStepsSaysSo) {
  auto d = DetectSlowdowns(Series(12, 0.5f), std::vector<uint8_t>(12, 0));
  EXPECT_FALSE(d.ran);
  EXPECT_NE(d.note.find("too few"), std::string::npos);
}

TEST(StepSeries, TrainLogArrivalTimesCarriageReturnsAndEvalBars) {
  auto z = *LocalZone::Make("UTC");
  std::string log =
      "2026-11-29T10:00:00.000Z\te\t  0%|          | 0/100 [00:00<?, ?it/s]\r  1%|          | 1/100 [00:00<00:50,  "
      "2.00it/s]\n"
      "2026-11-29T10:00:01.000Z\te\t  2%|          | 2/100 [00:01<00:50,  2.00it/s]\n"
      "2026-11-29T10:00:01.000Z\to\t{'loss': 2.5, 'learning_rate': 0.0002, 'epoch': 0.02}\n"
      "2026-11-29T10:00:05.000Z\te\t 50%|█████     | 5/10 [00:04<00:04,  1.00it/s]\n"  // eval bar: another total
      "2026-11-29T10:00:06.000Z\te\t  3%|          | 3/100 [00:06<00:50,  0.20it/s]\n";
  StepSeries s = ParseStepLog(log, z);
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[0].step, 1);
  EXPECT_EQ(s.points[1].step, 2);
  EXPECT_EQ(s.points[1].loss, 2.5f);
  EXPECT_EQ(s.points[2].step, 3);
  EXPECT_EQ(s.points[2].flags, kAfterEval);
  EXPECT_EQ(s.points[2].t_ms - s.points[1].t_ms, 5000);
  EXPECT_EQ(s.time_source, "arrival times (train.log)");
  EXPECT_EQ(s.total_steps, 100);
  EXPECT_EQ(s.cost_unit, "s/step (from timestamps)");  // tqdm's rate smears the 5 s gap; the delta does not
  EXPECT_FLOAT_EQ(s.points[2].cost, 5.0f);
  EXPECT_TRUE(std::isnan(s.points[0].cost));  // nothing before the first point
}

TEST(StepSeries, ALoadingBarBeforeTrainingDoesNotHideTheSteps) {
  auto z = *LocalZone::Make("UTC");
  StepSeries s = ParseStepLog(
      "Loading checkpoint shards: 100%|██████████| 4/4 [00:02<00:00,  1.91it/s]\n"
      "  1%|          | 1/100 [00:00<00:50,  2.00it/s]\n"
      "  2%|          | 2/100 [00:01<00:50,  2.00it/s]\n",
      z);
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.total_steps, 100);
  EXPECT_TRUE(s.markers.empty());
}

TEST(StepSeries, OwnZoneLessTimestampsAreLocalTime) {
  auto z = *LocalZone::Make("+01:00");
  std::string log =
      " [2025-10-06 03:27:07] iteration       10/     100 | elapsed time per iteration (ms): 4647.8 | lm loss: "
      "9.76E+00 |\n"
      " [2025-10-06 03:27:12] iteration       11/     100 | elapsed time per iteration (ms): 4650.0 | lm loss: "
      "9.70E+00 |\n";
  StepSeries s = ParseStepLog(log, z);
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.time_source, "log timestamps");
  EXPECT_EQ(s.points[0].t_ms, ToUnixMillis(*ParseTimestamp("2025-10-06T02:27:07Z")));
  EXPECT_EQ(s.cost_unit, "s/step (printed by the log)");
  EXPECT_NEAR(s.points[1].cost, 4.65, 1e-3);
}

TEST(StepSeries, OtherRanksAreIgnored) {
  auto z = *LocalZone::Make("UTC");
  StepSeries s = ParseStepLog("[rank1]:step:  1  loss:  8.0  tps: 100\n[rank0]:step:  1  loss:  8.1  tps: 110\n", z);
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_EQ(s.points[0].loss, 8.1f);
  EXPECT_EQ(s.ignored_rank_lines, 1u);
}

TEST(StepSeries, ParsedOnManyThreadsGivesTheSameSeriesAsOne) {
  // A train.log mixing the things whose order matters: tqdm redraws (CR records), other ranks,
  // HF loss dicts that belong to the step before them, evaluation bars, save lines, zone-less
  // timestamps; cut into 8 KiB segments so records cross segment boundaries everywhere.
  auto z = *LocalZone::Make("+02:00");
  std::string log;
  for (int step = 1; step <= 3000; ++step) {
    char ts[40];
    std::snprintf(ts, sizeof ts, "2026-11-29T10:%02d:%02d.%03dZ", step / 600 % 60, step / 10 % 60, step % 10 * 100);
    std::string bar = std::to_string(step * 100 / 3000) + "%|#| " + std::to_string(step) + "/3000 [00:01<00:50,  " +
                      (step < 1500 ? "2.00" : "1.00") + "it/s]";
    log += std::string(ts) + "\te\t" + bar + "\r" + bar + "\n";
    log += std::string(ts) + "\te\t[rank1]:" + bar + "\n";
    if (step % 10 == 0)
      log += std::string(ts) + "\to\t{'loss': " + std::to_string(3.0 - step / 1500.0) + ", 'epoch': 0.1}\n";
    if (step % 500 == 0) log += std::string(ts) + "\te\t 50%|#| 5/10 [00:01<00:01,  5.00it/s]\n";
    if (step % 700 == 0)
      log += std::string(ts) + "\to\tSaving model checkpoint to out/checkpoint-" + std::to_string(step) + "\n";
    if (step % 900 == 0)
      log += std::string(ts) + "\to\t[2026-11-29 12:00:00] iteration 5/ 9 | elapsed time per iteration (ms): 1.0 |\n";
  }
  testing::TempDir d;
  std::string path = d.Write("train.log", log);
  StepSeries one = ParseStepLog(log, z);
  auto many = ReadStepLog(path, z, ParallelLineOptions{4, 8192});
  ASSERT_TRUE(many) << many.error().message;
  ASSERT_GT(one.points.size(), 2900u);
  ASSERT_EQ(many->points.size(), one.points.size());
  for (size_t i = 0; i < one.points.size(); ++i) {
    const StepPoint &a = one.points[i], &b = many->points[i];
    ASSERT_TRUE(a.step == b.step && a.t_ms == b.t_ms && a.flags == b.flags &&
                std::memcmp(&a.cost, &b.cost, sizeof a.cost) == 0 && std::memcmp(&a.loss, &b.loss, sizeof a.loss) == 0)
        << "point " << i << " step " << a.step;
  }
  ASSERT_EQ(many->markers.size(), one.markers.size());
  for (size_t i = 0; i < one.markers.size(); ++i)
    EXPECT_TRUE(many->markers[i].step == one.markers[i].step && many->markers[i].kind == one.markers[i].kind &&
                many->markers[i].t_ms == one.markers[i].t_ms);
  EXPECT_GT(one.markers.size(), 5u);
  EXPECT_EQ(many->formats, one.formats);
  EXPECT_EQ(many->cost_unit, one.cost_unit);
  EXPECT_EQ(many->time_source, one.time_source);
  EXPECT_EQ(many->ignored_rank_lines, 3000u);
  EXPECT_EQ(many->lines, one.lines);
  EXPECT_EQ(many->bytes, one.bytes);
}

// Spike counts against a brute-force count over every point (the detector counts them from its
// usable and flagged copies with a cursor over the slowdowns): random series with several
// slowdowns, spikes inside and outside them, flagged, NaN and non-positive costs.
TEST(Slowdown, SpikeCountsMatchACountOverEveryPoint) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    auto c = Series(3000, 0.5f);
    std::vector<uint8_t> f(c.size(), 0);
    for (int k = 0; k < 3; ++k) {  // slowdowns
      size_t a = 400 + rng() % 2400, len = 20 + rng() % 200;
      for (size_t i = a; i < std::min(c.size(), a + len); ++i) c[i] *= 2;
    }
    for (int k = 0; k < 60; ++k) {  // spikes, some after an evaluation or save
      size_t i = rng() % c.size();
      c[i] *= 3;
      f[i] = static_cast<uint8_t>(rng() % 4 == 0 ? kAfterEval : rng() % 4 == 0 ? kAfterSave : 0);
    }
    for (int k = 0; k < 20; ++k) c[rng() % c.size()] = k % 3 == 0 ? NAN : k % 3 == 1 ? 0.0f : -1.0f;
    auto d = DetectSlowdowns(c, f);
    ASSERT_TRUE(d.ran);
    const double up = 1.3 * d.baseline;
    size_t eval = 0, save = 0, other = 0;
    for (size_t i = d.early_first; i < c.size(); ++i) {  // counted from the end of warm-up
      bool covered = false;
      for (const Slowdown& s : d.slowdowns) covered |= i >= s.first && i <= s.last;
      if (!std::isfinite(c[i]) || c[i] < up || covered) continue;
      if (f[i] & kAfterEval) ++eval;
      else if (f[i] & kAfterSave) ++save;
      else ++other;
    }
    EXPECT_EQ(d.spikes_eval, eval) << "trial " << trial;
    EXPECT_EQ(d.spikes_save, save) << "trial " << trial;
    EXPECT_EQ(d.spikes_other, other) << "trial " << trial;
    EXPECT_GT(eval + save + other, 0u) << "trial " << trial;
  }
}

// The sorted-window rolling median against a brute-force median of each window, on random
// series with repeated values (ties), for odd, even and too-large widths.
TEST(RollingMedian, MatchesTheMedianOfEachWindow) {
  std::mt19937 rng(7);
  for (size_t n : {0u, 1u, 2u, 5u, 17u, 300u})
    for (size_t w : {1u, 2u, 3u, 5u, 6u, 9u, 40u}) {
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>(rng() % 7) * 0.5f;
      auto got = RollingMedian(v, w);
      ASSERT_EQ(got.size(), n);
      for (size_t k = 0; k < n; ++k) {
        size_t a = k >= w / 2 ? k - w / 2 : 0, b = std::min(n, a + w);
        if (b - a < w && b == n) a = n >= w ? n - w : 0;
        std::vector<double> win(v.begin() + static_cast<long>(a), v.begin() + static_cast<long>(b));  // exact: halves
        std::sort(win.begin(), win.end());
        double want = win.size() % 2 ? win[win.size() / 2] : (win[win.size() / 2 - 1] + win[win.size() / 2]) / 2;
        EXPECT_EQ(got[k], want) << "n " << n << " w " << w << " k " << k;
      }
    }
}

}  // namespace
}  // namespace sparkops
