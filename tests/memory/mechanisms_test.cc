// Issue 36: the framework mechanisms priced one by one (docs/memory-model.md, "Framework
// mechanisms"), each checked as bytes against the formula its source gives, and plan's JSON schema.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "memory/accounting.h"
#include "memory/catalogue.h"
#include "memory/mechanisms.h"
#include "memory/plan_json.h"
#include "report/plan.h"
#include "test_util.h"

namespace sparkops {
namespace {

using memory::LossEra;
using memory::Side;
using nlohmann::json;
using testing::RunInProcess;

constexpr double kGiBd = 1024.0 * 1024 * 1024;

json Plan(std::vector<std::string> args) { return testing::PlanJson(std::move(args)); }
double C(const json& j, const char* k) { return j["components"][k].get<double>() * kGiBd; }
double High(const json& j, const char* k) { return j["range"][k]["high"].get<double>() * kGiBd; }
const memory::ModelSpec& Spec(const char* name) { return memory::FindModel(name)->spec; }
/// JSON rounds GiB to 3 decimals: half a MiB either way.
constexpr double kRound = 0.0005 * kGiBd;

TEST(PlanSchema, JsonCarriesItsSchemaAndKeepsTheCounterNames) {
  auto j = Plan({"llama-3.2-1b"});
  EXPECT_EQ(j["schema"], 3);
  EXPECT_EQ(j["schema"], kPlanJsonSchema);
  for (const char* k : {"allocated_peak_gib", "reserved_peak_gib", "process_peak_gib"}) {
    EXPECT_TRUE(j[k].is_number()) << k;
    EXPECT_TRUE(j["range"][k]["low"].is_number()) << k;
    EXPECT_TRUE(j["range"][k]["high"].is_number()) << k;
  }
  EXPECT_FALSE(j.contains("steady_peak_gib"));  // removed in schema 2 (docs: the change list)
  EXPECT_TRUE(j["options"].contains("framework_version"));
  EXPECT_TRUE(j["components"].contains("cast_copies_gib"));
}

TEST(Mechanisms, TransformersLossEraIsReadFromTheVersion) {
  EXPECT_EQ(memory::TransformersLossEra("4.44.2"), LossEra::kModelUpcast);
  EXPECT_EQ(memory::TransformersLossEra("4.45.2"), LossEra::kModelUpcast);
  EXPECT_EQ(memory::TransformersLossEra("4.46.0"), LossEra::kLossShiftCopy);
  EXPECT_EQ(memory::TransformersLossEra("4.49.0"), LossEra::kLossShiftCopy);
  EXPECT_EQ(memory::TransformersLossEra("4.50.0"), LossEra::kLossPadLabels);
  EXPECT_EQ(memory::TransformersLossEra("4.57.1"), LossEra::kLossPadLabels);
  EXPECT_EQ(memory::TransformersLossEra("5.0.0"), LossEra::kLossPadLabels);
  EXPECT_EQ(memory::TransformersLossEra("4.46.0.dev0"), LossEra::kLossShiftCopy);
  for (const char* bad : {"", "latest", "4", "4..5", ".4.46"}) EXPECT_FALSE(memory::TransformersLossEra(bad)) << bad;
  // Bytes per logit: each era its own on both sides; unknown: current release, high the oldest.
  EXPECT_EQ(memory::TransformersLossBytesPerLogit(LossEra::kLossPadLabels, Side::kHigh), 12);
  EXPECT_EQ(memory::TransformersLossBytesPerLogit(LossEra::kLossShiftCopy, Side::kCentral), 14);
  EXPECT_EQ(memory::TransformersLossBytesPerLogit(LossEra::kModelUpcast, Side::kLow), 28);
  EXPECT_EQ(memory::TransformersLossBytesPerLogit(std::nullopt, Side::kCentral), 12);
  EXPECT_EQ(memory::TransformersLossBytesPerLogit(std::nullopt, Side::kHigh), 28);
}

TEST(Mechanisms, LogitsTermFollowsTheTransformersVersion) {
  // 150k vocabulary, 2048 tokens: the term the issue found 9 GB short on older transformers.
  const auto& m = Spec("qwen2.5-7b");
  const double n = 2048.0 * 2 * double(m.vocab);
  testing::TempDir empty_root;
  const std::vector<std::string> base = {"qwen2.5-7b", "--batch", "2", "--root", empty_root.path()};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return Plan(a);
  };
  auto old = with({"--framework-version", "4.45.2"}), mid = with({"--framework-version", "4.48.0"}),
       now = with({"--framework-version", "4.50.0"}), unknown = with({});
  EXPECT_NEAR(C(old, "logits_gib"), 28 * n, kRound);
  EXPECT_NEAR(C(mid, "logits_gib"), 14 * n, kRound);
  EXPECT_NEAR(C(now, "logits_gib"), 12 * n, kRound);
  EXPECT_EQ(old["loss_bytes_per_logit"], 28);
  EXPECT_EQ(old["options"]["framework_version_source"], "--framework-version");
  // Unknown: central is the current release, the high end covers < 4.46 and the plan says why.
  EXPECT_TRUE(unknown["options"]["framework_version"].is_null());
  EXPECT_NEAR(C(unknown, "logits_gib"), 12 * n, kRound);
  EXPECT_NEAR(High(unknown, "allocated_peak_gib"), High(old, "allocated_peak_gib"), 2 * kRound);
  EXPECT_NE(unknown["widened"].dump().find("transformers version unknown"), std::string::npos);
  EXPECT_EQ(old["widened"].dump().find("transformers version unknown"), std::string::npos);
  EXPECT_EQ(RunInProcess({"plan", "qwen2.5-7b", "--framework-version", "new"}).rc, 2);
}

TEST(Mechanisms, FrameworkVersionIsReadFromTheEnvironment) {
  testing::TempDir site;
  site.Write("transformers-4.44.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: transformers\nVersion: 4.44.2\n");
  auto j = Plan({"llama-3.2-1b", "--site-packages", site.path()});
  EXPECT_EQ(j["options"]["framework_version"], "4.44.2");
  EXPECT_NE(j["options"]["framework_version_source"].get<std::string>().find("dist-info"), std::string::npos);
  EXPECT_EQ(j["loss_bytes_per_logit"], 28);
}

TEST(Mechanisms, ForeachAdamwStepListsAndFused) {
  // Pure bf16 full fine-tune of Llama 3.2 1B: states bf16, one list = trainable * 2 bytes.
  memory::LoadedModel lm;
  lm.spec = Spec("llama-3.2-1b");
  lm.params = memory::CountParams(lm.spec).total();
  memory::PlanOptions o;
  o.method = memory::Method::kFull;
  auto central = memory::Estimate(lm, o), high = memory::Estimate(lm, o, Side::kHigh);
  ASSERT_TRUE(central && high);
  const double list = double(central->trainable) * 2;
  EXPECT_DOUBLE_EQ(central->optimizer_step, list);  // current torch: sqrt(v)
  EXPECT_DOUBLE_EQ(high->optimizer_step, list);  // torch 2.0's second list (denom): no GB10 torch has it
  EXPECT_DOUBLE_EQ(central->step_peak(), central->states() + central->gradients + list);
  o.optimizer = memory::Optimizer::kAdamWFused;
  auto fused = memory::Estimate(lm, o, Side::kHigh);
  ASSERT_TRUE(fused);
  EXPECT_EQ(fused->optimizer_step, 0);
  EXPECT_DOUBLE_EQ(fused->optimizer, central->optimizer);
  EXPECT_EQ(memory::AdamwStepLists(memory::Optimizer::kAdamW8bit, Side::kHigh), 0);
  EXPECT_EQ(memory::AdamwStepLists(memory::Optimizer::kPagedAdamW8bit, Side::kHigh), 0);
  // The JSON says so: central step transient, and --optimizer adamw_fused is accepted.
  auto j = Plan({"llama-3.2-1b", "--method", "full", "--optimizer", "adamw_fused"});
  EXPECT_EQ(j["options"]["optimizer"], "adamw_fused");
  EXPECT_EQ(C(j, "optimizer_step_gib"), 0);
  EXPECT_NEAR(C(Plan({"llama-3.2-1b", "--method", "full"}), "optimizer_step_gib"), list, kRound);
}

TEST(Mechanisms, HighEndCarriesTheResidualMargin) {
  memory::LoadedModel lm;
  lm.spec = Spec("llama-3.1-8b");
  lm.params = memory::CountParams(lm.spec).total();
  memory::PlanOptions o;
  o.framework_version = "4.57.1";
  o.optimizer = memory::Optimizer::kAdamWFused;
  auto high = memory::Estimate(lm, o, Side::kHigh);
  ASSERT_TRUE(high);
  const double phases = std::max(high->backward_peak(), high->step_peak());
  EXPECT_DOUBLE_EQ(high->residual_margin, memory::kResidualMargin * phases);
  EXPECT_DOUBLE_EQ(high->allocated_peak(), phases * (1 + memory::kResidualMargin));
  EXPECT_EQ(memory::Estimate(lm, o)->residual_margin, 0);
}

TEST(Mechanisms, KbitPreparationAndDoubleQuantisation) {
  const auto& m = Spec("llama-3.1-8b");
  const auto pc = memory::CountParams(m);
  const double kept = double(pc.total() - pc.block_linear);  // embeddings, head, norms
  const std::vector<std::string> base = {"llama-3.1-8b", "--method", "qlora", "--bnb-version", "0.45.5"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return Plan(a);
  };
  auto prep = with({}), noprep = with({"--kbit-prep", "off"}),
       nodq = with({"--kbit-prep", "off", "--double-quant", "off"});
  EXPECT_NEAR(C(prep, "weights_gib") - C(noprep, "weights_gib"), kept * 2, 2 * kRound);  // bf16 -> fp32
  EXPECT_NEAR(C(nodq, "weights_gib") - C(noprep, "weights_gib"), double(pc.block_linear) * (4.5 - 4.127) / 8,
              2 * kRound);
  EXPECT_EQ(prep["options"]["kbit_prep"], true);
  EXPECT_EQ(nodq["options"]["double_quant"], false);
  EXPECT_EQ(memory::Nf4BytesPerParam(false), 4.5 / 8);
  EXPECT_EQ(RunInProcess({"plan", "llama-3.1-8b", "--method", "qlora", "--kbit-prep", "maybe"}).rc, 2);
}

TEST(Mechanisms, ModulesToSaveAddTrainableCopies) {
  const auto& m = Spec("llama-3.1-8b");
  const double vh = double(m.vocab) * double(m.hidden);
  auto plain = Plan({"llama-3.1-8b"}), saved = Plan({"llama-3.1-8b", "--modules-to-save", "embed_tokens,lm_head"});
  EXPECT_EQ(saved["trainable_params"].get<double>() - plain["trainable_params"].get<double>(), 2 * vh);
  EXPECT_NEAR(C(saved, "weights_gib") - C(plain, "weights_gib"), 2 * vh * 2, 2 * kRound);     // bf16 copies
  EXPECT_NEAR(C(saved, "gradients_gib") - C(plain, "gradients_gib"), 2 * vh * 2, 2 * kRound);  // bf16 grads
  EXPECT_NEAR(C(saved, "optimizer_gib") - C(plain, "optimizer_gib"), 2 * 2 * vh * 2, 2 * kRound);
  EXPECT_EQ(saved["options"]["modules_to_save"], json({"embed", "head"}));
  EXPECT_EQ(RunInProcess({"plan", "llama-3.1-8b", "--modules-to-save", "mlp"}).rc, 2);
}

TEST(Mechanisms, LoraUnderMixedPrecisionKeepsFp32FrozenWeightsAndTheirBf16Copies) {
  const auto& m = Spec("llama-3.2-1b");
  double layer = 0;
  for (const auto& l : m.BlockLinears()) layer += double(l.params());
  auto bf16 = Plan({"llama-3.2-1b"}), mixed = Plan({"llama-3.2-1b", "--precision", "mixed"}),
       nockpt = Plan({"llama-3.2-1b", "--precision", "mixed", "--grad-ckpt", "off"});
  EXPECT_NEAR(C(mixed, "weights_gib"), 2 * C(bf16, "weights_gib"), 2 * kRound);
  EXPECT_NEAR(C(mixed, "cast_copies_gib"), layer * 2, kRound);
  EXPECT_NEAR(C(nockpt, "cast_copies_gib"), layer * 2 * double(m.layers), kRound);
  EXPECT_EQ(C(bf16, "cast_copies_gib"), 0);
}

TEST(Mechanisms, FusedProjectionModelTypesCountAsTheirCodeStoresThem) {
  // Qwen-7B (v1): one fused c_attn; intermediate_size is w1 + w2 together. Published 7,721,324,544.
  auto qwen = memory::ParseConfigJson(
      R"({"model_type":"qwen","hidden_size":4096,"num_attention_heads":32,"num_hidden_layers":32,
          "intermediate_size":22016,"vocab_size":151936,"kv_channels":128,"seq_length":8192})",
      "qwen/config.json");
  ASSERT_TRUE(qwen) << qwen.error().message;
  EXPECT_EQ(memory::CountParams(*qwen).total(), 7'721'324'544u);
  EXPECT_EQ(qwen->BlockLinears().front().name, "qkv");
  // phi-2: parallel attention + MLP off one LayerNorm, biases everywhere. Published 2,779,683,840.
  auto phi = memory::ParseConfigJson(
      R"({"model_type":"phi","hidden_size":2560,"intermediate_size":10240,"num_hidden_layers":32,
          "num_attention_heads":32,"vocab_size":51200,"max_position_embeddings":2048})",
      "phi/config.json");
  ASSERT_TRUE(phi) << phi.error().message;
  EXPECT_EQ(memory::CountParams(*phi).total(), 2'779'683'840u);
  // chatglm: multi-query groups and a fused gate|up.
  auto glm = memory::ParseConfigJson(
      R"({"model_type":"chatglm","hidden_size":4096,"ffn_hidden_size":13696,"num_layers":28,"kv_channels":128,
          "num_attention_heads":32,"multi_query_attention":true,"multi_query_group_num":2,
          "padded_vocab_size":65024,"seq_length":8192})",
      "glm/config.json");
  ASSERT_TRUE(glm) << glm.error().message;
  EXPECT_EQ(glm->kv_heads, 2u);
  EXPECT_EQ(glm->BlockLinears()[2].name, "gate_up");
  EXPECT_FALSE(memory::ParseConfigJson(R"({"model_type":"chatglm","hidden_size":64,"ffn_hidden_size":64,
      "num_layers":2,"num_attention_heads":4,"multi_query_attention":true,"padded_vocab_size":10})",
                                       "bad/config.json"));  // groups missing: named error, not a guess
  // The fused c_attn LoRA: r8 on Qwen-7B's c_attn trains r*(h + 3h) per layer = 4.19 M, not 6.29 M.
  testing::TempDir dir;
  dir.Write("config.json",
            R"({"model_type":"qwen","hidden_size":4096,"num_attention_heads":32,"num_hidden_layers":32,
                "intermediate_size":22016,"vocab_size":151936,"kv_channels":128,"seq_length":8192})");
  auto j = Plan({dir.path() + "/config.json", "--lora-targets", "c_attn", "--lora-rank", "8"});
  EXPECT_EQ(j["trainable_params"], 8u * (4096 + 3 * 4096) * 32);
  EXPECT_EQ(j["options"]["lora_targets"], json({"k", "q", "v"}));
}

TEST(Mechanisms, LoraTargetsAcceptPeftModuleNames) {
  auto t = memory::ParseTargets("q_proj, v_proj,gate_proj,lm_head");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, (std::set<std::string>{"q", "v", "gate", "head"}));
  EXPECT_EQ(*memory::ParseTargets("all-linear"), *memory::ParseTargets("all"));
  EXPECT_EQ(*memory::ParseTargets("query_key_value,dense_4h_to_h"), (std::set<std::string>{"q", "k", "v", "down"}));
  EXPECT_FALSE(memory::ParseTargets("_proj"));
  EXPECT_FALSE(memory::ParseTargets("mlp"));
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

// Gradient accumulation (issue 36, the held-out LC-25 row): the loops zero gradients after the
// optimizer step only, so from the second micro-batch on every gradient lives beside the
// activations. Full fine-tune: the backward phase gains the gradients not already counted there.
TEST(Mechanisms, GradientAccumulationKeepsEveryGradientBesideTheActivations) {
  auto one = testing::PlanJson({"tinyllama-1.1b", "--method", "full", "--seq", "512", "--batch", "4", "--grad-ckpt",
                                "off", "--framework", "litgpt"});
  auto eight = testing::PlanJson({"tinyllama-1.1b", "--method", "full", "--seq", "512", "--batch", "4", "--grad-ckpt",
                                  "off", "--framework", "litgpt", "--grad-accum", "8"});
  const auto& c1 = one["components"];
  const auto& c8 = eight["components"];
  EXPECT_EQ(c1["accum_gradients_gib"], 0.0);
  // bf16-true: 2 bytes per trainable parameter, less the head's already counted as first gradients
  const double want = c8["gradients_gib"].get<double>() - c8["first_gradients_gib"].get<double>();
  EXPECT_NEAR(c8["accum_gradients_gib"].get<double>(), want, 0.002);
  EXPECT_NEAR(c8["accum_gradients_gib"].get<double>(), 1.1e9 * 2 / (1 << 30) - c8["first_gradients_gib"].get<double>(),
              0.15);
  EXPECT_GT(eight["allocated_peak_gib"].get<double>(), one["allocated_peak_gib"].get<double>() + 1.5);
  // LoRA: every adapter gradient is already in the backward phase; accumulation adds nothing
  auto lora = testing::PlanJson({"tinyllama-1.1b", "--grad-accum", "8"});
  EXPECT_EQ(lora["components"]["accum_gradients_gib"], 0.0);
}

}  // namespace
}  // namespace sparkops
