// Issue 34: the live slowdown notice. While `run` runs, the steps so far go through analyze's
// detector every 10 s; each episode gives one `slowdown` event, told to --notify-cmd.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/slowdown.h"
#include "analysis/step_series.h"
#include "base/strings.h"
#include "live_run.h"
#include "run/live_slowdown.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::Fixture;
using testing::ReadFileOrDie;
using testing::RunBinary;
using testing::TempDir;

/// Points numbered 1..n (index i is step i + 1).
std::vector<StepPoint> Steps(size_t n) {
  std::vector<StepPoint> p(n);
  for (size_t i = 0; i < n; ++i) p[i].step = static_cast<int64_t>(i + 1);
  return p;
}

Detection With(std::vector<std::pair<size_t, size_t>> spans) {
  Detection d;
  d.ran = true;
  for (auto [a, b] : spans) d.slowdowns.push_back(Slowdown{a, b});
  return d;
}

// Each episode is told once: the same episode seen again (grown, or its start moved a little by
// more steps) is not new; one starting after it is.
TEST(LiveSlowdown, EachEpisodeIsNewOnce) {
  const auto pts = Steps(200);
  std::vector<ToldEpisode> told;
  EXPECT_TRUE(NewEpisodes(With({}), pts, &told).empty());
  EXPECT_EQ(NewEpisodes(With({{49, 59}}), pts, &told), std::vector<size_t>{0});  // steps 50..60
  EXPECT_TRUE(NewEpisodes(With({{49, 79}}), pts, &told).empty());                // grown
  EXPECT_EQ(told.at(0).last_step, 80);
  EXPECT_TRUE(NewEpisodes(With({{47, 90}}), pts, &told).empty());  // its start moved earlier
  EXPECT_TRUE(NewEpisodes(With({{60, 95}}), pts, &told).empty());  // starts inside the told one
  EXPECT_EQ(NewEpisodes(With({{47, 95}, {120, 140}}), pts, &told), std::vector<size_t>{1});  // a second episode
  EXPECT_TRUE(NewEpisodes(With({{47, 95}, {120, 150}}), pts, &told).empty());
  EXPECT_EQ(told.size(), 2u);
  EXPECT_TRUE(NewEpisodes(With({{250, 260}}), pts, &told).empty()) << "indices past the points are skipped";
}

// The thermal story of run_test.cc, long enough for two checks in the slow phase: one `slowdown`
// event (thermal, at the change point), one notice to the command.
TEST(LiveSlowdown, OneEventPerEpisodeAndTheNotifyCommandGetsIt) {
  TempDir d;
  std::string dir = d.path() + "/r", gate = d.path() + "/gate", out = d.path() + "/told";
  auto r = RunBinary({"--root", Fixture("gb10"), "--nvml", BuildArtifact("libnvidia-ml-stub.so"), "run", "--out", dir,
                      "--interval", "0.1", "--notify-config", "none", "--notify-cmd", "cat >> " + out, "--",
                      std::string(SPARKOPS_TEST_SOURCE_DIR) + "/fake/trainer.sh", "50", "130", "0.06", "0.18"},
                     {{"SPARKOPS_STUB_NVML_SCENARIO",
                       std::string(SPARKOPS_TEST_SOURCE_DIR) + "/stub_nvml/scenarios/run_thermal.txt"},
                      {"SPARKOPS_STUB_NVML_GATE", gate},
                      {"TRAINER_HOOK", "touch " + gate}},
                     180000);
  ASSERT_EQ(r.rc, 0) << r.err;
  auto ev = testing::RunEventsOfType(dir, "slowdown");
  ASSERT_EQ(ev.size(), 1u) << ReadFileOrDie(dir + "/events.jsonl");
  EXPECT_GE(ev[0]["ratio"].get<double>(), 1.3) << ev[0].dump();
  EXPECT_GE(ev[0]["start_step"].get<int64_t>(), 45) << ev[0].dump();
  EXPECT_LE(ev[0]["start_step"].get<int64_t>(), 60) << ev[0].dump();
  EXPECT_EQ(ev[0].value("cause", ""), "thermal") << ev[0].dump();
  int told = 0;
  const std::string told_text = ReadFileOrDie(out);  // SplitLines views into it: keep it alive
  for (std::string_view line : SplitLines(told_text)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    if (j["event"] != "slowdown") continue;
    ++told;
    EXPECT_NE(j["text"].get<std::string>().find("slowed down"), std::string::npos) << j.dump();
  }
  EXPECT_EQ(told, 1) << ReadFileOrDie(out);
}

}  // namespace
}  // namespace sparkops
