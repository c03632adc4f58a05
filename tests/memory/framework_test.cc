// `plan --framework litgpt`: LitGPT's model code and finetune loop under Lightning Fabric, against
// the transformers/PEFT accounting on the same options (docs/memory-model.md, "LitGPT").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "memory/plan_json.h"
#include "test_util.h"

namespace sparkops {
namespace {

using nlohmann::json;
using testing::RunInProcess;

constexpr double kGiB = 1024.0 * 1024 * 1024;

json Plan(std::vector<std::string> args) { return testing::PlanJson(std::move(args)); }
double C(const json& j, const char* k) { return j["components"][k].get<double>(); }

/// The same plan under both frameworks, with the adapter dtype and dropout pinned.
struct Pair {
  json hf, lit;
};
Pair Both(std::vector<std::string> args) {
  args.insert(args.end(), {"--adapter-dtype", "bf16"});
  auto hf = args, lit = args;
  hf.insert(hf.end(), {"--framework", "transformers"});
  lit.insert(lit.end(), {"--framework", "litgpt"});
  return {Plan(hf), Plan(lit)};
}

TEST(Framework, LitgptDefaultsAreItsFinetuneDefaults) {
  auto lit = Plan({"llama-3.2-1b", "--framework", "litgpt"});
  EXPECT_EQ(lit["options"]["framework"], "litgpt");
  EXPECT_EQ(lit["options"]["adapter_dtype"], "bf16");
  EXPECT_DOUBLE_EQ(lit["options"]["lora_dropout"].get<double>(), 0.05);
  auto hf = Plan({"llama-3.2-1b"});
  EXPECT_EQ(hf["options"]["framework"], "transformers");
  EXPECT_EQ(hf["options"]["adapter_dtype"], "fp32");
  EXPECT_DOUBLE_EQ(hf["options"]["lora_dropout"].get<double>(), 0);
  auto given = Plan({"llama-3.2-1b", "--framework", "litgpt", "--adapter-dtype", "fp32", "--lora-dropout", "0"});
  EXPECT_EQ(given["options"]["adapter_dtype"], "fp32");
  EXPECT_DOUBLE_EQ(given["options"]["lora_dropout"].get<double>(), 0);
  auto bad = RunInProcess({"plan", "llama-3.2-1b", "--framework", "axolotl"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--framework"), std::string::npos) << bad.err;
}

TEST(Framework, LitgptKeepsASeparateHeadForTiedCheckpoints) {
  // Llama 3.2 1B ties its embedding (V 128256 x h 2048): LitGPT holds the head a second time.
  auto tied = Both({"llama-3.2-1b", "--method", "lora"});
  EXPECT_NEAR((C(tied.lit, "weights_gib") - C(tied.hf, "weights_gib")) * kGiB, 128256.0 * 2048 * 2, 2e6);
  // Llama 3 8B has its own lm_head already: nothing to add.
  auto untied = Both({"llama-3-8b", "--method", "lora"});
  EXPECT_NEAR(C(untied.lit, "weights_gib"), C(untied.hf, "weights_gib"), 1e-3);
  // A full fine-tune trains the copy too.
  auto full = Both({"llama-3.2-1b", "--method", "full"});
  EXPECT_NEAR(double(full.lit["trainable_params"]) - double(full.hf["trainable_params"]), 128256.0 * 2048, 1);
}

TEST(Framework, LitgptQuantisesTheHeadAndDequantisesFromFp16) {
  // Phi-3-mini's own head (V 32064 x h 3072) is 4-bit under LitGPT, 16-bit under transformers.
  auto q = Both({"phi-3-mini-4k", "--method", "qlora", "--bnb-version", "0.45.5", "--kbit-prep", "off"});
  EXPECT_NEAR((C(q.hf, "weights_gib") - C(q.lit, "weights_gib")) * kGiB, 32064.0 * 3072 * (2 - 4.127 / 8), 2e6);
  // Lightning quantises an fp16 copy, so each dequantised weight is fp16 and then copied to bf16.
  EXPECT_NEAR(C(q.lit, "dequant_gib"), 2 * C(q.hf, "dequant_gib"), 1e-3);
  // transformers: bitsandbytes before 0.43.0 casts to fp16 itself (Params4bit.cuda: .half()).
  auto old = Plan({"phi-3-mini-4k", "--method", "qlora", "--bnb-version", "0.42.0"});
  EXPECT_NEAR(C(old, "dequant_gib"), C(q.lit, "dequant_gib"), 1e-3);
  auto v043 = Plan({"phi-3-mini-4k", "--method", "qlora", "--bnb-version", "0.43.0"});
  EXPECT_NEAR(C(v043, "dequant_gib"), C(q.hf, "dequant_gib"), 1e-3);
}

TEST(Framework, LitgptLossTermIsItsLargestMoment) {
  // LoRA: 10 bytes per logit at s >= 512 (last step's fp32 logits + bf16 chunks + their fp32 copies),
  // 8 + 8 * 128 / s below it (fp32 logits + log-probs/grads + one chunk's two fp32 buffers).
  const double V = 128256;
  auto at512 = Plan({"llama-3.2-1b", "--framework", "litgpt", "--seq", "512", "--batch", "2"});
  EXPECT_NEAR(C(at512, "logits_gib") * kGiB, 10 * 2 * 512 * V, 2e6);
  auto at128 = Plan({"llama-3.2-1b", "--framework", "litgpt", "--seq", "128", "--batch", "2"});
  EXPECT_NEAR(C(at128, "logits_gib") * kGiB, 16 * 2 * 128 * V, 2e6);
  // QLoRA with a 4-bit head: its dequantised fp16 weight + bf16 copy (4 V h) in backward, beside
  // the fp32 logits and the bf16 grads (6 N) ...
  const double N = 2 * 512 * V, head_deq = 4 * V * 2048;
  auto q = Plan({"llama-3.2-1b", "--framework", "litgpt", "--method", "qlora", "--seq", "512", "--batch", "2",
                 "--bnb-version", "0.45.5"});
  EXPECT_NEAR(C(q, "logits_gib") * kGiB, 6 * N + head_deq, 2e6);
  // ... or, with bitsandbytes 0.42 keeping last step's inputs alive (`retained`), in forward beside
  // last step's fp32 logits and the bf16 chunks made so far: 4 N + 2 N * 3/4 on top of `retained`.
  auto old = Plan({"llama-3.2-1b", "--framework", "litgpt", "--method", "qlora", "--seq", "512", "--batch", "2",
                   "--grad-ckpt", "off", "--bnb-version", "0.42.0"});
  EXPECT_GT(C(old, "retained_gib") * kGiB, 0.5 * N);
  EXPECT_NEAR(C(old, "logits_gib") * kGiB, 4 * N + 2 * N * 3 / 4 + head_deq, 2e6);
  // full.py: the standard 12 bytes per logit.
  auto full = Plan({"llama-3.2-1b", "--framework", "litgpt", "--method", "full", "--seq", "512"});
  EXPECT_NEAR(C(full, "logits_gib") * kGiB, 12 * 512 * V, 2e6);
}

TEST(Framework, LitgptAdapterFollowsItsModulesNotTheCheckpoints) {
  // Phi-3-mini fuses qkv and gate_up; LitGPT has r rows of A per enabled q/k/v (B over the
  // enabled outputs) and separate fc_1/fc_2. r 8, h 3072, i 8192, 32 layers, all + head:
  // per layer 3 (3072 + 3072) + (3072 + 3072) + 2 (3072 + 8192) + (8192 + 3072), head 3072 + 32064.
  const std::vector<std::string> a = {"phi-3-mini-4k", "--lora-rank", "8", "--lora-targets", "all,head"};
  auto both = Both(a);
  EXPECT_EQ(both.lit["trainable_params"].get<double>(),
            8.0 * (32 * (3 * 6144 + 6144 + 2 * 11264 + 11264) + 3072 + 32064));
  EXPECT_EQ(both.hf["trainable_params"].get<double>(),
            8.0 * (32 * ((3072 + 9216) + 6144 + (3072 + 16384) + 11264) + 3072 + 32064));
  // Llama keeps q, k, v apart in the checkpoint: the same count either way.
  auto llama = Both({"llama-3-8b", "--lora-targets", "q,v"});
  EXPECT_EQ(llama.lit["trainable_params"], llama.hf["trainable_params"]);
}

TEST(Framework, LitgptAttentionAndLoraModules) {
  const double tokens = 512 * 4;
  // GQA (Llama 3 8B: 32 heads, 8 kv heads, d 128, 32 layers), no dropout: k and v expanded to all
  // heads before SDPA cost 2 * 2 * (4096 - 1024) bytes per token and layer more.
  auto gqa = Both({"llama-3-8b", "--lora-targets", "q,v", "--lora-dropout", "0", "--seq", "512", "--batch", "4",
                   "--grad-ckpt", "off"});
  EXPECT_NEAR((C(gqa.lit, "activations_gib") - C(gqa.hf, "activations_gib")) * kGiB, 4.0 * 3072 * tokens * 32, 2e6);
  // MHA (Phi-3-mini: h 3072, 32 layers), dropout 0.05 on all linears: v stays a view of the fused
  // qkv output (+2 * 2 * 3072: the q and k thirds), and fc_1 / fc_2 each drop their input (+3 * 3072).
  auto mha = Both({"phi-3-mini-4k", "--lora-dropout", "0.05", "--seq", "512", "--batch", "4", "--grad-ckpt", "off"});
  EXPECT_NEAR((C(mha.lit, "activations_gib") - C(mha.hf, "activations_gib")) * kGiB, 7.0 * 3072 * tokens * 32, 2e6);
}

}  // namespace
}  // namespace sparkops
