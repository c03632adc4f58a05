// ReadLiveRunSteps (issue 37, top's RUNS pane): step, s/step now against the baseline and the
// verdict from the end of a train.log, one case per row.
#include "analysis/live_run.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <vector>

namespace sparkops {
namespace {

/// A run train.log: step i printed as "step i/total | loss 2.0 | D s/it" arriving D s after step i-1,
/// with the step times `dts` (one per step).
std::string Log(const std::vector<double>& dts, int total) {
  std::string out;
  double t = 0;
  for (size_t i = 0; i < dts.size(); ++i) {
    t += dts[i];
    const int ms = static_cast<int>(t * 1000);
    out += fmt::format("2026-11-29T10:{:02}:{:02}.{:03}Z\to\tstep {}/{} | loss 2.0 | {:.2f} s/it\n", ms / 60000,
                       (ms / 1000) % 60, ms % 1000, i + 1, total, dts[i]);
  }
  return out;
}

std::vector<double> Steps(std::initializer_list<std::pair<int, double>> runs) {
  std::vector<double> v;
  for (auto [n, dt] : runs) v.insert(v.end(), static_cast<size_t>(n), dt);
  return v;
}

TEST(LiveRunSteps, Table) {
  const std::string slow_event =
      R"({"time": "2026-11-29T10:01:00.000Z", "type": "slowdown", "start_step": 3, "ratio": 1.5, "baseline_s": 0.5})"
      "\n";
  struct Case {
    const char* name;
    std::string log, events;
    std::string verdict;
    std::optional<int64_t> step;
    std::optional<double> now, base;
    std::string from;
  } cases[] = {
      {"empty", "", "", "no steps yet", {}, {}, {}, ""},
      {"two steps", Log(Steps({{2, 1.0}}), 100), "", "too few steps", 2, 1.0, {}, ""},
      {"steady", Log(Steps({{60, 1.0}}), 100), "", "steady", 60, 1.0, 1.0, "log tail"},
      {"slowdown", Log(Steps({{60, 1.0}, {30, 2.0}}), 100), "", "slowdown x2.00 since step 61", 90, 2.0, 1.0,
       "log tail"},
      {"forming", Log(Steps({{60, 1.0}, {3, 2.0}}), 100), "", "slower x2.00 (forming)", 63, 2.0, 1.0, "log tail"},
      {"recovered", Log(Steps({{40, 1.0}, {20, 2.0}, {30, 1.0}}), 100), "", "steady", 90, 1.0, 1.0, "log tail"},
      // The run's own detector saw 0.5 s/step at its start: the whole tail at 1 s is a slowdown.
      {"event baseline", Log(Steps({{60, 1.0}}), 100), slow_event, "slower x2.00 (forming)", 60, 1.0, 0.5,
       "slowdown event"},
  };
  auto zone = LocalZone::Make("UTC");
  ASSERT_TRUE(zone);
  for (const auto& c : cases) {
    RunProgress r;
    ReadLiveRunSteps(c.log, c.events, *zone, &r);
    EXPECT_EQ(r.verdict, c.verdict) << c.name;
    EXPECT_EQ(r.step, c.step) << c.name;
    if (c.step) {
      EXPECT_EQ(r.total_steps, 100) << c.name;
    }
    ASSERT_EQ(r.s_per_step.has_value(), c.now.has_value()) << c.name;
    if (c.now) {
      EXPECT_NEAR(*r.s_per_step, *c.now, 0.01) << c.name;
    }
    ASSERT_EQ(r.baseline_s.has_value(), c.base.has_value()) << c.name;
    if (c.base) {
      EXPECT_NEAR(*r.baseline_s, *c.base, 0.01) << c.name;
    }
    EXPECT_EQ(r.baseline_from, c.from) << c.name;
  }
}

TEST(LiveRunSteps, CommandFromMetaJson) {
  EXPECT_EQ(LiveRunCommand(R"({"argv": ["python", "train.py", "--lr", "1e-4"]})"), "python train.py --lr 1e-4");
  EXPECT_EQ(LiveRunCommand(R"({"argv": "python"})"), "");
  EXPECT_EQ(LiveRunCommand("not json"), "");
  EXPECT_EQ(LiveRunCommand(R"({"argv": ["aaaaaaaaaa", "bbbbbbbbbb"]})", 12), "aaaaaaaaa...");
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// ReadLiveRunEnergy (issue 37): thermal.csv read whole (its header in `rows`) or as a header line
// and a tail; the NVML counter's rise, the Wh per step over the tail's steps, and Wh per 1k tokens
// from HF Trainer's running count.
TEST(LiveRunEnergy, WholeFileOrHeaderAndTail) {
  auto zone = LocalZone::Make("UTC");
  ASSERT_TRUE(zone);
  const std::string header = "timestamp,power_w,energy_j";
  std::string rows;  // 100 W by the counter (power_w says 50: the counter wins), every 10 s for 200 s
  for (int s = 0; s <= 200; s += 10)
    rows += fmt::format("2026-11-29T10:{:02}:{:02}.000Z,50.0,{:.1f}\n", s / 60, s % 60, 1000.0 + 100.0 * s);
  // Steps every 2 s from 10:00:10 to 10:02:10 (60 steps), a dict every 10 steps adding 10,000 tokens.
  std::string log;
  for (int k = 0; k <= 60; ++k) {
    const int s = 10 + 2 * k;
    const std::string ts = fmt::format("2026-11-29T10:{:02}:{:02}.000Z", s / 60, s % 60);
    log += fmt::format("{}\te\t{:3}%|#    | {}/60 [00:00<00:00,  2.00s/it]\n", ts, k * 100 / 60, k);
    if (k % 10 == 0)
      log += fmt::format("{}\to\t{{'loss': 1.5, 'epoch': 0.5, 'num_input_tokens_seen': {}}}\n", ts, 1000 * k);
  }
  RunProgress r;
  const StepSeries steps = ReadLiveRunSteps(log, "", *zone, &r);
  ASSERT_EQ(r.step, 60);
  ReadLiveRunEnergy("", header + "\n" + rows, steps, *zone, &r);
  ASSERT_TRUE(r.energy_wh) << r.energy_note;
  EXPECT_NEAR(*r.energy_wh, 100.0 * 200 / 3600, 1e-9);
  EXPECT_EQ(r.energy_source, "nvml energy counter");
  EXPECT_EQ(r.energy_span_s, 200);
  EXPECT_TRUE(r.energy_from_start);
  ASSERT_TRUE(r.wh_per_step);
  EXPECT_NEAR(*r.wh_per_step, 100.0 * 2 / 3600, 1e-9);  // 2 s a step at 100 W
  ASSERT_TRUE(r.wh_per_1k_tokens);
  EXPECT_NEAR(*r.wh_per_1k_tokens, 100.0 * 120 / 3600 / 60, 1e-9);  // 120 s for 60,000 tokens

  RunProgress tail;  // the last 100 s only, under the header read apart
  ReadLiveRunEnergy(header, rows.substr(rows.find("2026-11-29T10:01:40")), steps, *zone, &tail);
  ASSERT_TRUE(tail.energy_wh) << tail.energy_note;
  EXPECT_FALSE(tail.energy_from_start);
  EXPECT_EQ(tail.energy_span_s, 100);
  EXPECT_NEAR(*tail.energy_wh, 100.0 * 100 / 3600, 1e-9);
  EXPECT_NEAR(*tail.wh_per_step, 100.0 * 2 / 3600, 1e-9);

  RunProgress none;  // no power readings: absent, and why
  ReadLiveRunEnergy("", "timestamp,gpu_temp_c\n2026-11-29T10:00:00.000Z,60\n", steps, *zone, &none);
  EXPECT_FALSE(none.energy_wh);
  EXPECT_EQ(none.energy_note, "no power readings in thermal.csv");
}

}  // namespace
}  // namespace sparkops
