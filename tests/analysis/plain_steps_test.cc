// Hand-written loops' step lines, Rich progress bars and --step-format templates: tables of
// lines through ParseStepLine (so the dispatch to these parsers is covered too).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "analysis/plain_steps.h"
#include "analysis/step_line.h"
#include "analysis/step_series.h"
#include "analysis/step_template.h"
#include "step_expect.h"
#include "telemetry/terminal_text.h"
#include "test_util.h"

namespace sparkops {
namespace {

using K = StepLine::Kind;

struct Case {
  const char* line;
  K kind;
  const char* format;
  std::optional<int64_t> step;
  std::optional<double> step_time_s;
  std::optional<double> loss;
  std::optional<double> throughput = {};
};

void Check(const Case& c, const StepLine& l) { testing::ExpectStepLine(l, c, c.line); }

const Case kPlain[] = {
    // the forms people write by hand
    {"step 12", K::kStep, "plain", 12, {}, {}},
    {"step 12 loss 1.96", K::kStep, "plain", 12, {}, 1.96},
    {"Step 12/300 | loss 1.96", K::kStep, "plain", 12, {}, 1.96},
    {"step: 12, loss 1.96, lr: 3e-4, time: 0.35s", K::kStep, "plain", 12, 0.35, 1.96},
    {"step=12 loss=1.96 lr=0.0003 ms=350.5", K::kStep, "plain", 12, 0.3505, 1.96},
    {"it 12 | loss 1.96 | 350ms", K::kStep, "plain", 12, 0.350, 1.96},
    {"iter 12 loss 1.96 time 350 ms", K::kStep, "plain", 12, 0.350, 1.96},
    {"Iteration 7: loss=0.5 dt=1.25", K::kStep, "plain", 7, 1.25, 0.5},
    {"STEP 40 | train loss 2.5 | 4.0 it/s", K::kStep, "plain", 40, 0.25, 2.5},
    {"step 40 | loss 2.5 | 2.5 s/it", K::kStep, "plain", 40, 2.5, 2.5},
    {"step 40, loss 2.5, tok/s 12000", K::kStep, "plain", 40, {}, 2.5, 12000.0},
    {"step 40 loss 3 step_time 0.5", K::kStep, "plain", 40, 0.5, 3.0},
    {"global_step 900 loss 1.1 time_ms 42", K::kStep, "plain", 900, 0.042, 1.1},
    // an epoch with a per-epoch counter: epoch * total + n, so it keeps increasing
    {"Epoch 2 Step 12/100 | loss 1.5", K::kStep, "plain", 212, {}, 1.5},
    {"Epoch 2/3 | Step 12/100 | loss 1.5", K::kStep, "plain", 212, {}, 1.5},
    {"epoch: 1, step: 30 | loss 0.9", K::kStep, "plain", 30, {}, 0.9},
    // "step: N ... loss: X" is torchtitan's line, read by its parser
    {"epoch: 1, step: 30, loss: 0.9", K::kStep, "torchtitan", 30, {}, 0.9},
    {"[2025-01-02 03:04:05,678] step 5 loss 2.0", K::kStep, "plain", 5, {}, 2.0},
    // the built-in formats keep theirs
    {"Step 25 | loss:1.0523 lr:2e-05 tokens_per_second_per_gpu:1843.2 ", K::kStep, "torchtune", 25, {}, 1.0523, 1843.2},
    {"iter 0: loss 2.7512, time 30728.83ms, mfu -100.00%", K::kStep, "nanogpt", 0, 30.72883, 2.7512},
    // evaluations are evaluations
    {"step 500 | val loss 1.9", K::kEval, "plain", 500, {}, {}},
    {"step 500: eval_loss=1.9", K::kEval, "plain", 500, {}, {}},
    {"Step 500/1000 | validation accuracy 0.71", K::kEval, "plain", 500, {}, {}},
    {"step 0: train loss 2.2365, val loss 1.9580", K::kEval, "nanogpt", 0, {}, {}},
    {"step 500 test_loss 1.2", K::kEval, "plain", 500, {}, {}},
    // learning-rate schedules and other text are not steps
    {"Epoch 00012: adjusting learning rate of group 0 to 1.0000e-04.", K::kNone, "", {}, {}, {}},
    {"step 100: lr 0.001", K::kNone, "", {}, {}, {}},
    {"step 100 lr -> 0.0005", K::kNone, "", {}, {}, {}},
    {"step 100: scheduler set lr=0.0005 loss 2", K::kNone, "", {}, {}, {}},
    {"steps 12 loss 1", K::kNone, "", {}, {}, {}},
    {"step 3rd loss 1", K::kNone, "", {}, {}, {}},
    {"it is 12 degrees", K::kNone, "", {}, {}, {}},
    {"Epoch 3 finished, loss 1.2", K::kNone, "", {}, {}, {}},
    {"stepping up", K::kNone, "", {}, {}, {}},
    // a wall-clock time is not a duration
    {"step 9 loss 1.0 time 12:30:01", K::kStep, "plain", 9, {}, 1.0},
};

TEST(PlainSteps, Table) {
  for (const Case& c : kPlain) Check(c, ParseStepLine(c.line));
}

// Rich bars as Lightning's RichProgressBar draws them (column layout from pytorch-lightning
// 2.6.6 callbacks/progress/rich_progress.py: "Epoch E/L", bar, "N/M", "elapsed • remaining",
// "X.XXit/s", then "name: value" metrics).
const Case kRich[] = {
    {"Epoch 1/3  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━  51/120 0:00:35 • 0:00:45 1.54it/s v_num: 0 train_loss: 2.293",
     K::kStep, "rich", 171, 1 / 1.54, 2.293},
    {"Epoch 0/2  ━━━━━━━━━━━━━━━╸━━━━━━━━━━━━━━━━ 63/120 0:00:02 • 0:00:03 25.31it/s loss: 0.5", K::kStep, "rich", 63,
     1 / 25.31, 0.5},
    {"Epoch 0/2  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 0/120 0:00:00 • -:--:-- 0.00it/s", K::kBar, "rich", 0, {}, {}},
    {"Validation ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 10/10 0:00:01 • 0:00:00 9.51it/s", K::kEval, "rich", 10, {}, {}},
    {"Sanity Checking DataLoader 0: ━━━━━━━━━━━━━━━ 2/2 0:00:00 • 0:00:00 8.00it/s", K::kEval, "rich", 2, {}, {}},
    {"Epoch 4    ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 7/-- 0:00:02 • -:--:-- 3.10it/s", K::kStep, "rich", 7, 1 / 3.10, {}},
};

TEST(PlainSteps, RichBars) {
  for (const Case& c : kRich) Check(c, ParseStepLine(c.line));
  StepLine l = ParseStepLine("Downloading ━━━━━━━━━━━━━━━━━━━━ 3/9 0:00:01 • 0:00:02 2.00it/s");
  EXPECT_EQ(l.kind, K::kBar);
  EXPECT_TRUE(l.other_loop);
}

TEST(PlainSteps, RichEpochsMakeOneIncreasingSeries) {
  LocalZone z = *LocalZone::Make("UTC");
  std::string log;
  for (int e = 0; e < 3; ++e)
    for (int n = 10; n <= 100; n += 10)
      log += "2026-01-01T00:0" + std::to_string(e) + ":" + std::to_string(10 + n / 10) + ".000Z\to\tEpoch " +
             std::to_string(e) + "/2  ━━━━━━━━━━ " + std::to_string(n) +
             "/100 0:00:35 • 0:00:45 2.00it/s train_loss: 1.0\n";
  StepSeries s = ParseStepLog(log, z);
  ASSERT_EQ(s.points.size(), 30u);
  EXPECT_EQ(s.points.front().step, 10);
  EXPECT_EQ(s.points.back().step, 300);
  EXPECT_EQ(s.formats, "rich");
}

// Real output of rich 15.0.0 (pip) drawing Lightning's columns (tests/fixtures/logs, written by
// the script in docs/analyze-plain-loops.md): through a pipe with the environment `run` sets
// (TTY_COMPATIBLE=1 TTY_INTERACTIVE=1 NO_COLOR=1 COLUMNS=120) every redraw is "\r\x1b[2K" + bar.
TEST(PlainSteps, RichLiveRedrawsThroughAPipe) {
  LocalZone z = *LocalZone::Make("UTC");
  const std::string raw = testing::ReadFileOrDie(testing::Fixture("logs/rich_live_pipe.txt"));
  ASSERT_NE(raw.find("\x1b[2K"), std::string::npos);
  std::string storage;
  const std::string_view plain = StripTerminalControls(raw, &storage);
  EXPECT_EQ(plain.find('\x1b'), std::string_view::npos);
  EXPECT_NE(plain.find('\r'), std::string_view::npos);  // kept: analyze splits records on it
  for (std::string_view text : {std::string_view(raw), plain}) {
    StepSeries s = ParseStepLog(text, z);
    ASSERT_GE(s.points.size(), 8u) << s.formats;
    EXPECT_EQ(s.formats, "rich");
    EXPECT_EQ(s.points.back().step, 16);  // epoch 1 of 0..1, 8/8
    for (size_t i = 1; i < s.points.size(); ++i) EXPECT_GT(s.points[i].step, s.points[i - 1].step);
    EXPECT_FLOAT_EQ(s.points.back().loss, 1.8f);
  }
  // Without that environment Rich prints one line per task when it ends (and wraps at 80 columns).
  StepSeries once = ParseStepLog(testing::ReadFileOrDie(testing::Fixture("logs/rich_final_pipe.txt")), z);
  ASSERT_EQ(once.points.size(), 2u);
  EXPECT_EQ(once.points[1].step, 16);
}

TEST(TerminalText, StripsControlSequencesOnly) {
  std::string st;
  EXPECT_EQ(StripTerminalControls("plain \r text", &st), "plain \r text");
  EXPECT_EQ(StripTerminalControls("\x1b[?25l\r\x1b[2KEpoch 0\x1b[1A\x1b[1;31mred\x1b[0m", &st), "\rEpoch 0red");
  EXPECT_EQ(StripTerminalControls("a\x1b]0;title\ab\x1b]8;;http://x\x1b\\c\x1b=d\x1b", &st), "abcd");
  EXPECT_EQ(StripTerminalControls("\x1b[", &st), "");
}

// A job on a terminal (run gives it a pty) or with colours forced prints escape sequences inside
// its lines; train.log keeps them as printed (docs/run-directory.md) and analyze reads through them.
TEST(TerminalText, ColouredStepLinesAndBarsAreSteps) {
  LocalZone z = *LocalZone::Make("UTC");
  std::string plain, rich;
  for (int i = 1; i <= 40; ++i) {
    const std::string t = "2026-01-01T00:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ".000Z\to\t";
    plain += t + "\x1b[1mstep\x1b[0m " + std::to_string(i) + "/300 | loss \x1b[32m1.5\x1b[0m\n";
    rich += t + "\x1b[2KEpoch 0/1 \x1b[38;2;249;38;114m━━━━━━\x1b[0m\x1b[38;5;237m━━━━\x1b[0m " + std::to_string(i) +
            "/100 \x1b[37m0:00:35 • 0:00:45\x1b[0m \x1b[37m2.00it/s\x1b[0m \x1b[37mtrain_loss: 1.0\x1b[0m\n";
  }
  StepSeries p = ParseStepLog(plain, z);
  ASSERT_EQ(p.points.size(), 40u);
  EXPECT_EQ(p.points.back().step, 40);
  EXPECT_FLOAT_EQ(p.points.back().loss, 1.5f);
  StepSeries r = ParseStepLog(rich, z);
  ASSERT_EQ(r.points.size(), 40u);
  EXPECT_EQ(r.formats, "rich");
  EXPECT_EQ(r.points.back().step, 40);
  EXPECT_FLOAT_EQ(r.points.back().loss, 1.0f);
  // a cursor hide or a line erase on its own is no step, and an OSC title never reaches a parser
  EXPECT_TRUE(ParseStepLog("2026-01-01T00:00:01.000Z\to\t\x1b[?25l\x1b[2K\n", z).points.empty());
  EXPECT_TRUE(ParseStepLog("2026-01-01T00:00:01.000Z\to\t\x1b]0;step 5 loss 1.0\a\n", z).points.empty());
}

TEST(StepTemplate, CompilesAndMatches) {
  auto t = CompileStepTemplate("batch {step} of {total}: loss={loss} ({ms} ms)");
  ASSERT_TRUE(t) << t.error().message;
  StepLine l;
  ASSERT_TRUE(MatchStepTemplate(*t, "batch 17 of 400: loss=0.25 (120.5 ms) extra", l));
  EXPECT_EQ(l.step, 17);
  EXPECT_EQ(l.total, 400);
  EXPECT_DOUBLE_EQ(*l.loss, 0.25);
  EXPECT_NEAR(*l.step_time_s, 0.1205, 1e-12);
  EXPECT_STREQ(l.format, "template");
  // after a prefix, and spaces in the template match runs of spaces
  StepLine m;
  ASSERT_TRUE(MatchStepTemplate(*t, "[worker 0] batch   18 of 400: loss=0.2 (99 ms)", m));
  EXPECT_EQ(m.step, 18);
  StepLine n;
  EXPECT_FALSE(MatchStepTemplate(*t, "batch x of 400: loss=0.25 (1 ms)", n));
  EXPECT_FALSE(MatchStepTemplate(*t, "batch 1.5 of 400: loss=0.25 (1 ms)", n));
  EXPECT_EQ(n.kind, K::kNone);

  auto any = CompileStepTemplate("{*} it={step} {*} its={its}");
  ASSERT_TRUE(any) << any.error().message;
  StepLine a;
  ASSERT_TRUE(MatchStepTemplate(*any, "INFO trainer it=5 foo bar its=4", a));
  EXPECT_EQ(a.step, 5);
  EXPECT_NEAR(*a.step_time_s, 0.25, 1e-12);
}

TEST(StepTemplate, BadTemplatesNameTheProblem) {
  for (const char* bad : {"step {stp}", "step {step", "loss {loss}", "step }{step}", "{step}{loss}", "{*}{step}"}) {
    auto t = CompileStepTemplate(bad);
    ASSERT_FALSE(t) << bad;
    EXPECT_NE(t.error().message.find("--step-format"), std::string::npos) << bad;
  }
  EXPECT_FALSE(CompileStepTemplate(std::string(600, 'x') + "{step}"));
}

TEST(StepTemplate, DrivesTheSeries) {
  LocalZone z = *LocalZone::Make("UTC");
  auto t = CompileStepTemplate("mb#{step} l={loss} t={time}");
  ASSERT_TRUE(t);
  std::string log;
  for (int i = 1; i <= 20; ++i) log += "mb#" + std::to_string(i) + " l=1.5 t=0.25\n";
  EXPECT_TRUE(ParseStepLog(log, z).points.empty());
  StepSeries s = ParseStepLog(log, z, &*t);
  ASSERT_EQ(s.points.size(), 20u);
  EXPECT_FLOAT_EQ(s.points[3].cost, 0.25f);
  EXPECT_EQ(s.formats, "template");
}

TEST(PlainSteps, GarbageNeverCrashes) {
  std::mt19937 rng(24);
  const std::string alphabet = "step it Epoch 0123456789/|,:=.- loss time ms it/s \xE2\x94\x81 val e";
  for (int i = 0; i < 20000; ++i) {
    std::string line;
    const int n = static_cast<int>(rng() % 60);
    for (int k = 0; k < n; ++k) line += alphabet[rng() % alphabet.size()];
    StepLine l;
    ParsePlainStep(line, l);
    StepLine b;
    ParseRichBar(line, b);
    (void)ParseStepLine(line);
  }
}

}  // namespace
}  // namespace sparkops
