// Per-format parser tables. Samples are lines from each framework's formatting code or logs
// quoted in its issues (docs/analyze.md), copied here as test data, one block per framework.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "analysis/step_line.h"
#include "analysis/step_line_detail.h"
#include "step_expect.h"

namespace sparkops {
namespace {

using K = StepLine::Kind;

struct Case {
  const char* name;
  const char* line;
  K kind;
  const char* format;
  std::optional<int64_t> step;
  std::optional<double> step_time_s;
  std::optional<double> throughput;
  std::optional<double> loss;
  const char* timestamp;
};

const Case kCases[] = {
    // §1 HF Trainer dicts (older float format, newer quoted .4g format, eval, summary)
    {"hf_dict_float",
     "{'loss': 2.1787, 'grad_norm': 10.88424301147461, 'learning_rate': 0.000991, 'epoch': 1.0}",
     K::kLoss,
     "hf_dict",
     {},
     {},
     {},
     2.1787,
     ""},
    {"hf_dict_quoted",
     "{'loss': '2.007', 'grad_norm': '2.271', 'learning_rate': '0', 'epoch': '0.006593'}",
     K::kLoss,
     "hf_dict",
     {},
     {},
     {},
     2.007,
     ""},
    {"hf_dict_step",
     "{'loss': 1.5, 'learning_rate': 0.0001, 'epoch': 2.0, 'step': 9800}",
     K::kStep,
     "hf_dict",
     9800,
     {},
     {},
     1.5,
     ""},
    {"hf_eval",
     "{'eval_loss': 1.234, 'eval_runtime': 12.3, 'eval_samples_per_second': 40.6, 'eval_steps_per_second': 5.1, "
     "'epoch': 1.0}",
     K::kEval,
     "hf_dict",
     {},
     {},
     {},
     {},
     ""},
    {"hf_summary",
     "{'train_runtime': 231.3038, 'train_samples_per_second': 8.647, 'train_steps_per_second': 4.323, 'train_loss': "
     "0.7349368896484375, 'epoch': 100.0}",
     K::kNone,
     "hf_dict",
     {},
     {},
     {},
     {},
     ""},
    // §1.1 TRL
    {"trl_sft",
     "{'loss': 2.2344, 'grad_norm': 17.139, 'learning_rate': 0.0, 'num_tokens': 51486.0, 'mean_token_accuracy': "
     "0.5436, 'epoch': 0.06}",
     K::kLoss,
     "hf_dict",
     {},
     {},
     {},
     2.2344,
     ""},
    // tqdm bars
    {"tqdm_its", "  2%|▏         | 20/1000 [00:04<03:34,  4.56it/s]", K::kStep, "tqdm", 20, 1 / 4.56, {}, {}, ""},
    {"tqdm_sit", "  6%|▋         | 1/16 [01:18<19:31, 78.12s/it]", K::kStep, "tqdm", 1, 78.12, {}, {}, ""},
    {"tqdm_done",
     "100%|██████████| 10000/10000 [2:25:52<00:00,  1.04it/s]",
     K::kStep,
     "tqdm",
     10000,
     1 / 1.04,
     {},
     {},
     ""},
    {"tqdm_start", "  0%|          | 0/1000 [00:00<?, ?it/s]", K::kBar, "tqdm", 0, {}, {}, {}, ""},
    {"tqdm_other_loop",
     "Loading checkpoint shards: 100%|██████████| 4/4 [00:02<00:00,  1.91it/s]",
     K::kBar,
     "tqdm",
     4,
     1 / 1.91,
     {},
     {},
     ""},
    // §1.3 axolotl prefix carries a timestamp; the message is not a step
    {"axolotl_prefix",
     "[2025-09-10 10:58:06,585] [INFO] [axolotl.train.execute_training:203] [PID:65109] [RANK:0] Starting trainer...",
     K::kNone,
     "",
     {},
     {},
     {},
     {},
     "2025-09-10 10:58:06,585"},
    // §1.5 ms-swift JSONL
    {"swift_jsonl",
     R"J({"loss": 1.31, "global_step/max_steps": "12/100", "train_speed(s/it)": 1.23, "memory(GiB)": 20.1})J",
     K::kStep,
     "jsonl",
     12,
     1.23,
     {},
     1.31,
     ""},
    // §2 torchtune: bar description and DiskLogger/StdoutLogger line
    {"torchtune_bar",
     "1|25|Loss: 1.0523:   5%|▌         | 25/500 [00:41<12:58,  1.64s/it]",
     K::kStep,
     "torchtune",
     25,
     1.64,
     {},
     1.0523,
     ""},
    {"torchtune_step",
     "Step 25 | loss:1.0523 lr:2e-05 tokens_per_second_per_gpu:1843.2 ",
     K::kStep,
     "torchtune",
     25,
     {},
     1843.2,
     1.0523,
     ""},
    // §3 torchtitan, bare and with a logging prefix
    {"torchtitan",
     "step:  1  loss:  8.18630  grad_norm:  1.4459  memory:  0.77GiB(0.81%)  tps: 4,536  tflops: 0.32  mfu: 0.03%",
     K::kStep,
     "torchtitan",
     1,
     {},
     4536,
     8.18630,
     ""},
    {"torchtitan_prefix",
     "[rank0]:[titan] 2025-01-02 03:04:05,678 - root - INFO - step: 10  loss:  7.5  memory:  0.77GiB(0.81%)  tps: "
     "12,000",
     K::kStep,
     "torchtitan",
     10,
     {},
     12000,
     7.5,
     "2025-01-02 03:04:05,678"},
    // §4 Lightning (epoch 0, so the global step is the bar's)
    {"lightning",
     "Epoch 0:   4%|▍         | 350/8000 [00:09<03:23, 37.56it/s, v_num=0, train_loss=1.820]",
     K::kStep,
     "lightning",
     350,
     1 / 37.56,
     {},
     1.820,
     ""},
    {"lightning_epoch1",
     "Epoch 1:   4%|▍         | 350/8000 [00:09<03:23, 37.56it/s, v_num=0]",
     K::kStep,
     "lightning",
     8350,
     1 / 37.56,
     {},
     {},
     ""},
    {"lightning_val",
     "Validation DataLoader 0:  50%|█████     | 5/10 [00:01<00:01,  4.10it/s]",
     K::kEval,
     "tqdm",
     5,
     1 / 4.10,
     {},
     {},
     ""},
    // §5 nanoGPT
    {"nanogpt_iter",
     "iter 0: loss 2.7512, time 30728.83ms, mfu -100.00%",
     K::kStep,
     "nanogpt",
     0,
     30.72883,
     {},
     2.7512,
     ""},
    {"nanogpt_eval", "step 0: train loss 2.2365, val loss 1.9580", K::kEval, "nanogpt", 0, {}, {}, {}, ""},
    // §6 DeepSpeed
    {"deepspeed_timer",
     "[2023-11-07 01:55:23,712] [INFO] [timer.py:260:stop] epoch=0/micro_step=40/global_step=10, "
     "RunningAvgSamplesPerSec=25.02, CurrSamplesPerSec=25.70, MemAllocated=4.32GB, MaxMemAllocated=38.49GB",
     K::kStep,
     "deepspeed",
     10,
     {},
     25.70,
     {},
     "2023-11-07 01:55:23,712"},
    {"deepspeed_step",
     "[2023-11-07 01:55:23,711] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=4, lr=[1.9e-05], mom=[(0.9, "
     "0.999)]",
     K::kStep,
     "deepspeed",
     10,
     {},
     {},
     {},
     "2023-11-07 01:55:23,711"},
    // §7 Megatron
    {"megatron",
     " [2025-10-06 03:27:07] iteration       10/      10 | consumed samples:         5120 | elapsed time per iteration "
     "(ms): 4647.8 | learning rate: 1.500000E-06 | global batch size:   512 | lm loss: 9.763827E+00 | loss scale: 1.0 "
     "| grad norm: 33.055 | number of skipped iterations:   0 | number of nan iterations:   0 |",
     K::kStep,
     "megatron",
     10,
     4.6478,
     {},
     9.763827,
     "2025-10-06 03:27:07"},
    // §8 generic JSONL (wandb-style keys)
    {"jsonl_wandb",
     R"J({"_step": 7, "train/loss": 0.9, "_timestamp": 1764410549.5, "_runtime": 12.0})J",
     K::kStep,
     "jsonl",
     7,
     {},
     {},
     0.9,
     ""},
    {"jsonl_llamafactory",
     R"J({"current_steps": 5, "total_steps": 100, "loss": 1.2, "lr": 0.0001, "epoch": 0.05, "percentage": 5.0})J",
     K::kStep,
     "jsonl",
     5,
     {},
     {},
     1.2,
     ""},
    // markers and noise
    {"hf_save", "Saving model checkpoint to outputs/checkpoint-500", K::kSave, "", {}, {}, {}, {}, ""},
    {"megatron_save",
     " [2025-10-06 03:30:00] saving checkpoint at iteration     100 to /ckpt",
     K::kSave,
     "",
     {},
     {},
     {},
     {},
     "2025-10-06 03:30:00"},
    {"lower_eval", "running evaluation on 512 samples", K::kEval, "", {}, {}, {}, {}, ""},
    {"not_a_marker", "Having fun with evaluation metrics", K::kNone, "", {}, {}, {}, {}, ""},
    {"hf_eval_banner", "***** Running Evaluation *****", K::kEval, "", {}, {}, {}, {}, ""},
    {"noise",
     "Unsloth 2025.11.1 patched 28 layers with 28 QKV layers, 28 O layers and 28 MLP layers.",
     K::kNone,
     "",
     {},
     {},
     {},
     {},
     ""},
    {"warning",
     "UserWarning: Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.",
     K::kNone,
     "",
     {},
     {},
     {},
     {},
     ""},
};

TEST(StepLine, EveryFormatTable) {
  for (const Case& c : kCases) {
    StepLine l = ParseStepLine(c.line);
    testing::ExpectStepLine(l, c, c.name);
    EXPECT_EQ(l.timestamp, c.timestamp) << c.name;
  }
}

TEST(StepLine, NumberFastPathAgreesWithStrtod) {
  // ParseNumberPrefix reads plain decimals itself (no from_chars): the value and the characters
  // consumed must equal the C library's correctly rounded reading for every shape it accepts.
  std::mt19937_64 rng(7);
  for (int n = 0; n < 200000; ++n) {
    std::string t = rng() % 4 == 0 ? "-" : "";
    t += std::to_string(rng() % 100000000);
    if (rng() % 3) t += "." + std::to_string(rng() % 10000000);
    std::string text = t + (n % 2 ? "it/s" : "");
    size_t used = 0;
    auto v = ParseNumberPrefix(text, &used);
    ASSERT_TRUE(v) << text;
    char* end = nullptr;
    double want = std::strtod(t.c_str(), &end);
    ASSERT_EQ(*v, want) << text;
    ASSERT_EQ(used, t.size()) << text;
  }
  for (const char* edge : {"5.", "-0", "123456789012345", "1234567890123456", "0.1234567890123456", "1e5", ".5"}) {
    size_t used = 0;
    auto v = ParseNumberPrefix(edge, &used);
    ASSERT_TRUE(v) << edge;
    EXPECT_EQ(*v, std::strtod(edge, nullptr)) << edge;
    EXPECT_EQ(used, std::string_view(edge).size()) << edge;
  }
  EXPECT_EQ(OtherRankPrefix("[rank3]:x"), 3);
  EXPECT_EQ(OtherRankPrefix("[rank0]:x"), 0);
  EXPECT_EQ(OtherRankPrefix("[rank12345678]:x"), 0) << "too many digits: left to the full parser";
  EXPECT_EQ(OtherRankPrefix("[rankX]:x"), 0);
}

TEST(StepLine, IntAtAgreesWithFromChars) {
  // IntAt reads up to 7 digits with one 8-byte load (SWAR) when 8 bytes are there, else a loop:
  // every length, sign, what follows, and how much of the view is left must give from_chars's
  // value and end.
  std::mt19937_64 rng(5);
  const char* after[] = {"", "/", " ", "x", ":", "\xff", "\x2f", "\x3a", "0"};
  for (int n = 0; n < 200000; ++n) {
    std::string digits = std::to_string(rng() % 10000000000000000000ull).substr(0, 1 + rng() % 20);
    std::string t = std::string(rng() % 3, ' ') + (rng() % 4 == 0 ? "-" : "") + digits;
    std::string text = t + after[rng() % std::size(after)] + std::string(rng() % 10, 'y');
    std::string_view view(text.data(), t.size() + rng() % (text.size() - t.size() + 1));
    size_t pos = 0;
    auto got = detail::IntAt(view, &pos);
    size_t i = view.find_first_not_of(' ');
    int64_t want = 0;
    auto [p, ec] = std::from_chars(view.data() + i, view.data() + view.size(), want);
    if (ec != std::errc()) {
      EXPECT_FALSE(got) << text;
      continue;
    }
    ASSERT_TRUE(got) << text;
    EXPECT_EQ(*got, want) << text;
    EXPECT_EQ(pos, static_cast<size_t>(p - view.data())) << text;
  }
  size_t pos = 0;
  EXPECT_FALSE(detail::IntAt("  -x 12345678", &pos));
  EXPECT_FALSE(detail::IntAt("abcdefghijk", &pos));
}

TEST(StepLine, RanksAndTotals) {
  EXPECT_EQ(ParseStepLine("[rank1]:step:  3  loss:  8.0  tps: 100").rank, 1);
  EXPECT_EQ(ParseStepLine("  2%|▏         | 20/1000 [00:04<03:34,  4.56it/s]").total, 1000);
  EXPECT_EQ(ParseStepLine(" [2025-10-06 03:27:07] iteration       10/      20 | elapsed time per iteration (ms): 1.0 |")
                .total,
            20);
  // a tqdm bar that is only a bar with no rate is not a step time
  EXPECT_FALSE(ParseStepLine("  0%|          | 0/1000 [00:00<?, ?it/s]").step_time_s);
  EXPECT_TRUE(ParseStepLine("  2%|▏         | 20/1000 [00:04<03:34,  4.56it/s]").step_time_smoothed);
  EXPECT_FALSE(ParseStepLine("iter 3: loss 2.0, time 100.00ms, mfu 30.00%").step_time_smoothed);
}

TEST(StepLine, DescribedBarsAreOtherLoops) {
  EXPECT_TRUE(ParseStepLine("Loading checkpoint shards: 100%|██████████| 4/4 [00:02<00:00,  1.91it/s]").other_loop);
  EXPECT_FALSE(ParseStepLine("  2%|▏         | 20/1000 [00:04<03:34,  4.56it/s]").other_loop);
  EXPECT_FALSE(ParseStepLine("Epoch 0:   4%|▍         | 350/8000 [00:09<03:23, 37.56it/s, v_num=0]").other_loop);
}

TEST(StepLine, NanAndInfLossesParse) {
  auto l = ParseStepLine("{'loss': nan, 'grad_norm': inf, 'learning_rate': 0.0001, 'epoch': 0.5}");
  ASSERT_TRUE(l.loss);
  EXPECT_TRUE(std::isnan(*l.loss));
  EXPECT_EQ(l.kind, K::kLoss);
}

TEST(StepLine, GarbageNeverCrashes) {
  const char* junk[] = {"",
                        "{",
                        "{'",
                        "{\"",
                        "iter ",
                        "iter x: loss",
                        "Step |",
                        "| 5/",
                        "[",
                        "[rank",
                        "step:",
                        "it/s",
                        "s/it [",
                        "iteration 5/",
                        "global_step=",
                        "Epoch 1: | 3/0 [00:01<00:01, 1it/s]",
                        "[2025-10-06 03:27:07]",
                        "\xff\xfe it/s |",
                        "{'loss': 1.0, 'step': 1e300}",
                        "{\"step\": -1e300, \"loss\": 1}",
                        "[2025-01-01 00:00:00,000] [INFO] [x:1:y] global_step=1e99, a"};
  for (const char* j : junk) (void)ParseStepLine(j);
  SUCCEED();
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// Issue 37 (Wh per 1k tokens): a throughput is a token rate only where the log says tokens.
TEST(StepLine, ThroughputIsTokensOnlyWhereTheLogSaysTokens) {
  struct Case {
    const char* line;
    bool tokens;
  } cases[] = {
      {R"({"step": 3, "loss": 2.0, "tokens_per_second": 500})", true},
      {R"({"step": 3, "loss": 2.0, "samples_per_second": 500})", false},
      {R"({"step": 3, "loss": 2.0, "samples_per_second": 8, "tokens_per_second_per_gpu": 500})", false},
      {"Step 25 | loss:1.0523 lr:2e-05 tokens_per_second_per_gpu:1843.2 ", true},
      {"step:  1  loss:  8.18630  grad_norm:  1.4459  memory:  0.77GiB(0.81%)  tps: 4,536  tflops: 0.32  mfu: 0.03%",
       true},
      {"step 12 | loss 2.5 | 1843 tok/s", true},
      {"step 12 | loss 2.5 | 64 samples/s", false},
  };
  for (const auto& c : cases) {
    StepLine l = ParseStepLine(c.line);
    ASSERT_TRUE(l.throughput) << c.line;
    EXPECT_EQ(l.throughput_is_tokens, c.tokens) << c.line;
  }
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// Issue 37: HF Trainer's running token count (include_num_input_tokens_seen), in the forms
// transformers prints it. 5.x (ProgressCallback.on_log: floats as '{:.4g}' strings, ints as they
// are; Trainer.log adds num_input_tokens_seen and speed_metrics' train_runtime and
// train_tokens_per_second to every logging step), 4.x (floats as repr; PrinterCallback prints the
// same dict). The end-of-training summary (train_runtime, no loss) stays no step.
TEST(StepLine, HfTrainerNumInputTokensSeen) {
  struct Case {
    const char* line;
    StepLine::Kind kind;
    std::optional<int64_t> seen;
    std::optional<double> loss;
  } cases[] = {
      {"{'loss': '2.007', 'grad_norm': '2.271', 'learning_rate': '1.9e-05', 'epoch': '0.25', "
       "'num_input_tokens_seen': 40960, 'train_runtime': '12.34', 'train_tokens_per_second': '3319'}",
       StepLine::Kind::kLoss, 40960, 2.007},
      {"{'loss': 1.2345, 'grad_norm': 0.87, 'learning_rate': 1.9e-05, 'epoch': 0.25, 'num_input_tokens_seen': 40960}",
       StepLine::Kind::kLoss, 40960, 1.2345},
      {"{'loss': '2.007', 'grad_norm': '2.271', 'learning_rate': '0', 'epoch': '0.006593'}", StepLine::Kind::kLoss,
       std::nullopt, 2.007},
      {"{'train_runtime': '231.3', 'train_samples_per_second': '8.647', 'train_steps_per_second': '4.323', "
       "'train_loss': '0.7349', 'epoch': '3', 'num_input_tokens_seen': 409600}",
       StepLine::Kind::kNone, std::nullopt, std::nullopt},
  };
  for (const auto& c : cases) {
    StepLine l = ParseStepLine(c.line);
    EXPECT_EQ(l.kind, c.kind) << c.line;
    EXPECT_EQ(l.tokens_seen, c.seen) << c.line;
    EXPECT_EQ(l.loss, c.loss) << c.line;
  }
}

}  // namespace
}  // namespace sparkops
