// plan --serve / --beside: KV bytes per token by attention layout, the server's components, the
// engine flag, the --beside spec parser, and the CLI (goldens in tests/golden/memory/).
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli/serve_options.h"
#include "host/meminfo.h"
#include "memory/catalogue.h"
#include "memory/model_source.h"
#include "memory/serving.h"
#include "test_util.h"

namespace sparkops::memory {
namespace {

using testing::CheckGolden;
using testing::Fixture;
using testing::RunInProcess;

const ModelSpec& Spec(const char* name) {
  const CatalogueEntry* e = FindModel(name);
  EXPECT_NE(e, nullptr) << name;
  return e->spec;
}

TEST(ServeKv, GqaLlama3_8bIs128KiBPerToken) {
  // 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B; fp8 halves it.
  EXPECT_EQ(KvBytesPerToken(Spec("llama-3-8b"), 2).value(), 131072u);
  EXPECT_EQ(KvBytesPerToken(Spec("llama-3-8b"), 1).value(), 65536u);
  // MHA: Llama-2-7B, 32 layers x 32 heads x 128 x 2 x 2 B = 512 KiB.
  EXPECT_EQ(KvBytesPerToken(Spec("llama-2-7b"), 2).value(), 524288u);
  EXPECT_EQ(KvBytes(Spec("llama-3-8b"), 8192, 4, 2, true).value(), 4ull * 8192 * 131072);
}

TEST(ServeKv, Qwen3_235bTokensMatchVllmAndSglangLogs) {
  // vLLM issue #21348, Qwen3-235B-A22B-FP8 on 4 GPUs (TP 4: one of the 4 KV heads per GPU).
  // Config: 94 layers, 4 KV heads, head_dim 128 (built by hand: not in the catalogue).
  ModelSpec s;
  s.layers = 94;
  s.heads = 64;
  s.kv_heads = 1;  // per GPU
  s.head_dim = 128;
  const double per_token = double(KvBytesPerToken(s, 2).value());
  EXPECT_EQ(per_token, 48128);
  // vLLM: "Available KV cache memory: 8.11 GiB", "GPU KV cache size: 178,880 tokens".
  EXPECT_NEAR(8.11 * kGiB / per_token, 178880, 178880 * 0.02);
  // SGLang: "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB" (GB = 2^30 there): K is half.
  EXPECT_NEAR(8.23 * kGiB / (per_token / 2), 367404, 367404 * 0.005);
}

TEST(ServeKv, MlaCachesTheLatentAndRopeKey) {
  // DeepSeek-V2-Lite's config: 27 layers, kv_lora_rank 512, qk_rope_head_dim 64 (the catalogue has no
  // MLA model; the spec is built by hand). (512 + 64) x 27 x 2 B = 31,104 B per token.
  ModelSpec s;
  s.model_type = "deepseek_v2";
  s.layers = 27;
  s.heads = 16;
  s.kv_heads = 16;
  s.head_dim = 192;
  s.kv_lora_rank = 512;
  s.qk_rope_head_dim = 64;
  EXPECT_EQ(KvBytesPerToken(s, 2).value(), 31104u);
  EXPECT_EQ(KvBytesPerToken(s, 1).value(), 15552u);
}

TEST(ServeKv, SlidingWindowLayersKeepTheWindow) {
  const ModelSpec& g2 = Spec("gemma-2-9b");  // 42 layers, every other one a 4096-token window
  ASSERT_EQ(g2.sliding_window, 4096u);
  EXPECT_EQ(g2.sliding_layers(), 21u);
  const uint64_t per_layer = 8 * 256 * 2 * 2;
  EXPECT_EQ(KvBytes(g2, 8192, 1, 2, true).value(), (21 * 8192 + 21 * 4096) * per_layer);
  EXPECT_EQ(KvBytes(g2, 8192, 1, 2, false).value(), 42 * 8192 * per_layer);
  EXPECT_EQ(KvBytes(g2, 1000, 1, 2, true).value(), 42 * 1000 * per_layer);  // shorter than the window
  EXPECT_EQ(Spec("gemma-3-27b").sliding_layers(), 52u);                    // 62 layers, 5 of every 6
  EXPECT_EQ(Spec("gpt-oss-20b").sliding_layers(), 12u);                    // 24 layers, alternating
  EXPECT_EQ(Spec("llama-3-8b").sliding_layers(), 0u);
}

TEST(ServeKv, ConfigJsonSlidingWindow) {
  // Gemma 2 keeps its window; Qwen2's window is off (use_sliding_window false); Mistral v0.3's is null.
  auto g = ParseConfigJson(R"({"model_type":"gemma2","vocab_size":256000,"hidden_size":3584,"intermediate_size":14336,
    "num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"sliding_window":4096})",
                           "g.json");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->sliding_window, 4096u);
  EXPECT_EQ(g->sliding_layers(), 21u);
  auto q = ParseConfigJson(R"({"model_type":"qwen2","vocab_size":152064,"hidden_size":3584,"intermediate_size":18944,
    "num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"sliding_window":131072,
    "use_sliding_window":false})",
                           "q.json");
  ASSERT_TRUE(q.has_value()) << q.error().message;
  EXPECT_FALSE(q->sliding_window.has_value());
  auto m = ParseConfigJson(R"({"model_type":"mistral","vocab_size":32768,"hidden_size":4096,"intermediate_size":14336,
    "num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"sliding_window":null})",
                           "m.json");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_FALSE(m->sliding_window.has_value());
}

TEST(ServeKv, OverflowIsAnError) {
  EXPECT_FALSE(KvBytes(Spec("llama-3-8b"), uint64_t(1) << 40, uint64_t(1) << 30, 2, false).has_value());
  ModelSpec s = Spec("llama-3-8b");
  s.kv_heads = uint64_t(1) << 62;
  EXPECT_FALSE(KvBytesPerToken(s, 2).has_value());
}

LoadedModel Load(const char* name) {
  auto m = ResolveModel(name);
  EXPECT_TRUE(m.has_value()) << name;
  return *m;
}

TEST(ServeFootprintTest, Llama3_8bMatchesVllmStartupLog) {
  // vLLM PR #10511's sanity check (vllm serve meta-llama/Meta-Llama-3-8B, H100): model weights take
  // 14.96 GiB; PyTorch activation peak memory 1.26 GiB.
  ServeOptions o;
  o.max_model_len = 8192;
  auto f = SizeServer(Load("llama-3-8b"), o);
  ASSERT_TRUE(f.has_value()) << f.error().message;
  EXPECT_NEAR(f->weights / kGiB, 14.96, 0.01);
  EXPECT_NEAR(f->activation / kGiB, 1.26, 0.06);
  EXPECT_GE(f->activation_high / kGiB, 1.26);
  EXPECT_NEAR(f->kv / kGiB, 1.0, 1e-9);  // 8192 x 128 KiB
  EXPECT_GE(f->non_torch_high / kGiB, 1.79);  // the same log's non_torch_memory
}

TEST(ServeFootprintTest, Llama2_7bGpuBlocksMatchVllmLog) {
  // vLLM PR #2031 (A100-80GB, torch total 79.15 GiB, gpu_memory_utilization 0.9, block 16 tokens):
  // "# GPU blocks: 7351". KV = util x total - weights - activation peak (that era counted no
  // non-torch memory and captured graphs outside the fraction).
  ServeOptions o;
  o.max_model_len = 4096;
  auto f = SizeServer(Load("llama-2-7b"), o);
  ASSERT_TRUE(f.has_value());
  const double kv = 0.9 * 79.15 * kGiB - f->weights - f->activation;
  const double blocks = kv / (16.0 * double(f->kv_per_token));
  EXPECT_NEAR(blocks, 7351, 7351 * 0.01);
}

TEST(ServeFootprintTest, RefusesALengthAboveTheModelsPositions) {
  ServeOptions o;
  o.max_model_len = 8193;
  auto f = SizeServer(Load("llama-3-8b"), o);
  ASSERT_FALSE(f.has_value());
  EXPECT_NE(f.error().message.find("--max-model-len"), std::string::npos);
}

TEST(ServeFlagTest, FractionsAndContext) {
  ServeOptions o;
  o.max_model_len = 8192;
  const LoadedModel m = Load("llama-3-8b");
  auto f = SizeServer(m, o);
  ASSERT_TRUE(f.has_value());
  const double total = 100 * kGiB, room = 50 * kGiB;
  // vLLM: the whole high end over MemTotal, rounded up; the room over MemTotal, rounded down.
  ServeFlag v = FlagFor(*f, m.spec, room, total, std::nullopt);
  EXPECT_EQ(v.flag, "--gpu-memory-utilization");
  EXPECT_DOUBLE_EQ(*v.needed, std::ceil(f->total_high() / total * 100 - 1e-9) / 100);
  EXPECT_DOUBLE_EQ(*v.most, 0.50);
  EXPECT_TRUE(v.fits());
  EXPECT_FALSE(FlagFor(*f, m.spec, room, std::nullopt, std::nullopt).needed.has_value());  // no MemTotal
  EXPECT_FALSE(FlagFor(*f, m.spec, 10 * kGiB, total, std::nullopt).fits());
  // SGLang: weights + KV over what is free at start; the rest of the footprint stays outside.
  o.engine = Engine::kSglang;
  auto s = SizeServer(m, o);
  ServeFlag sg = FlagFor(*s, m.spec, room, std::nullopt, total);
  EXPECT_EQ(sg.flag, "--mem-fraction-static");
  EXPECT_DOUBLE_EQ(*sg.needed, 0.16);  // (14.96 + 1.00) / 100
  const double outside = s->total_high() - s->weights - s->kv_high;
  EXPECT_DOUBLE_EQ(*sg.most, std::floor((room - outside) / total * 100 + 1e-9) / 100);
  // llama.cpp: -c tokens; the most is a multiple of 256 that fits the room.
  o.engine = Engine::kLlamacpp;
  o.max_model_len.reset();
  auto l = SizeServer(m, o);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->options.max_model_len, kLlamacppDefaultCtx);
  ServeFlag c = FlagFor(*l, m.spec, 6 * kGiB, std::nullopt, std::nullopt);
  EXPECT_EQ(c.flag, "-c");
  EXPECT_EQ(*c.needed, 4096);
  EXPECT_EQ(std::fmod(*c.most, 256), 0);
  const double at_most = l->weights + l->non_torch_high + l->activation + *c.most * (131072 + 512 * 32 * 4);
  EXPECT_LE(at_most, 6 * kGiB);
  EXPECT_GT(at_most + 256 * (131072 + 512 * 32 * 4), 6 * kGiB);
}

TEST(ServeWeights, QuantisedFormats) {
  auto w = ParseWeightsDtype("", Engine::kLlamacpp);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->name, "q4_k_m");
  EXPECT_FALSE(ParseWeightsDtype("q4_k_m", Engine::kVllm).has_value());
  EXPECT_FALSE(ParseWeightsDtype("fp8", Engine::kLlamacpp).has_value());
  ServeOptions o;
  o.max_model_len = 8192;
  o.weights_dtype = "fp8";
  auto f = SizeServer(Load("llama-3-8b"), o);
  ASSERT_TRUE(f.has_value());
  // Embeddings and the head (2 x 525M) stay bf16; the 6.98B block parameters take 1 B.
  const ParamCounts pc = CountParams(Spec("llama-3-8b"));
  const double kept = double(pc.embedding + pc.head + pc.other);
  EXPECT_DOUBLE_EQ(f->weights, kept * 2 + (8030261248.0 - kept));
}

// GGUF averages against llama.cpp's own figures: ggml's block sizes (Q4_0 18 B and Q8_0 34 B per
// 32 weights, Q6_K 210 B per 256) and the quantize README's Llama-3.1-8B table (bits/weight of the
// whole file). Q4_0 is not in that table: llama-quant.cpp makes output.weight Q6_K, so the file
// averages above the 4.5 of its blocks.
TEST(ServeWeights, GgufBitsMatchLlamaCpp) {
  auto bits = [](const char* name) { return ParseWeightsDtype(name, Engine::kLlamacpp)->bits; };
  EXPECT_NEAR(bits("q8_0"), 8.5008, 0.01);  // 34 B / 32 weights = 8.5
  EXPECT_NEAR(bits("q6_k"), 6.5633, 0.01);  // 210 B / 256 = 6.5625
  EXPECT_NEAR(bits("q5_k_m"), 5.7036, 0.01);
  EXPECT_NEAR(bits("q4_k_m"), 4.8944, 0.01);
  EXPECT_NEAR(bits("f16"), 16.0005, 0.01);
  const ParamCounts pc = CountParams(Spec("llama-3.1-8b"));
  const double total = double(pc.total()), head = double(pc.head);
  const double q4_0_file = ((total - head) * 18 * 8 / 32 + head * 210 * 8 / 256) / total;
  EXPECT_NEAR(q4_0_file, 4.635, 0.005);
  EXPECT_NEAR(bits("q4_0"), q4_0_file, 0.01);
}

}  // namespace
}  // namespace sparkops::memory

namespace sparkops {
namespace {

using testing::CheckGolden;
using testing::Fixture;
using testing::RunInProcess;

TEST(ServeSpecTest, ParsesEngineModelAndKeys) {
  auto s = ParseServeSpec("vllm:llama-3.1-8b,max-model-len=32768,kv-dtype=fp8,max-num-seqs=4");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->model, "llama-3.1-8b");
  EXPECT_EQ(s->options.engine, memory::Engine::kVllm);
  EXPECT_EQ(s->options.max_model_len, 32768u);
  EXPECT_EQ(s->options.max_num_seqs, 4u);
  EXPECT_EQ(s->options.kv_dtype, memory::KvDtype::kFp8);
  auto l = ParseServeSpec("llamacpp:qwen3-8b,weights-dtype=q8_0");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->options.weights_dtype, "q8_0");
  for (const char* bad :
       {"llama-3-8b", "tgi:llama-3-8b", "vllm:", "vllm:llama-3-8b,max-model-len=0", "vllm:llama-3-8b,max-model-len=nan",
        "vllm:llama-3-8b,max-model-len=99999999999", "vllm:llama-3-8b,max-num-seqs=-1", "vllm:llama-3-8b,block-size=16",
        "vllm:llama-3-8b,kv-dtype=int3", "vllm:llama-3-8b,weights-dtype=q4_k_m", "vllm:llama-3-8b,max-model-len"}) {
    auto r = ParseServeSpec(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message.find("--beside"), std::string::npos) << r.error().message;
  }
}

TEST(ServeCli, ServeTextJsonAndGolden) {
  auto text = RunInProcess({"plan", "--serve", "llama-3-8b", "--max-model-len", "8192", "--root", Fixture("gb10")});
  EXPECT_EQ(text.rc, 0) << text.err;
  EXPECT_EQ(CheckGolden("memory/plan_serve_llama-3-8b_vllm.txt", text.out), "");
  auto json = RunInProcess({"--json", "plan", "--serve", "qwen3-8b", "--engine", "sglang", "--kv-dtype", "fp8",
                            "--max-num-seqs", "8", "--root", Fixture("gb10")});
  EXPECT_EQ(json.rc, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["schema"], 3);
  EXPECT_EQ(j["serve"]["engine"], "sglang");
  EXPECT_EQ(j["serve"]["kv_bytes_per_token"], 36 * 8 * 128 * 2);  // 36 layers x 8 x 128 x 2 x 1 B
  EXPECT_EQ(j["serve"]["flag"]["name"], "--mem-fraction-static");
  EXPECT_TRUE(j["serve"]["flag"]["fits"].get<bool>());
  EXPECT_EQ(j["verdict"], "fits");
  auto gguf = RunInProcess({"plan", "--serve", "gemma-2-9b", "--engine", "llamacpp", "--root", Fixture("gb10")});
  EXPECT_EQ(gguf.rc, 0) << gguf.err;
  EXPECT_NE(gguf.out.find("-c 4096"), std::string::npos) << gguf.out;
  EXPECT_NE(gguf.out.find("21 of 42 layers keep a 4096-token window"), std::string::npos) << gguf.out;
}

TEST(ServeCli, BesideTrainerGoldenAndJson) {
  auto text = RunInProcess({"plan", "llama-3.1-8b", "--method", "lora", "--beside",
                            "vllm:qwen3-8b,max-model-len=32768,kv-dtype=fp8", "--root", Fixture("gb10")});
  EXPECT_EQ(text.rc, 0) << text.err;
  EXPECT_EQ(CheckGolden("memory/plan_beside_llama-3.1-8b_vllm_qwen3-8b.txt", text.out), "");
  auto json = RunInProcess({"--json", "plan", "llama-3.1-8b", "--method", "lora", "--beside",
                            "vllm:qwen3-8b,max-model-len=32768,kv-dtype=fp8", "--root", Fixture("gb10")});
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["schema"], 3);
  EXPECT_EQ(j["model"], "llama-3.1-8b");  // the trainer's plan keys stay
  ASSERT_TRUE(j.contains("beside"));
  EXPECT_EQ(j["beside"]["serve"]["model"], "qwen3-8b");
  EXPECT_NEAR(j["beside"]["room_gib"].get<double>(),
              j["budget_gib"].get<double>() - j["verdict_peak_gib"].get<double>(), 0.002);
  const double most = j["beside"]["serve"]["flag"]["most"].get<double>();
  const double total = j["beside"]["serve"]["flag"]["basis_gib"].get<double>();
  EXPECT_LE(most * total, j["beside"]["room_gib"].get<double>() + 0.001);
  // A 70B full fine-tune leaves no room: no-fit, exit 1.
  auto nofit = RunInProcess(
      {"plan", "llama-3.1-70b", "--method", "full", "--beside", "vllm:llama-3-8b", "--root", Fixture("gb10")});
  EXPECT_EQ(nofit.rc, 1);
  EXPECT_NE(nofit.out.find("does not fit"), std::string::npos) << nofit.out;
}

TEST(ServeCli, BudgetGibIsTheFractionsBasis) {
  // A discrete GPU: the fraction is of the budget given, not of the host's MemTotal.
  auto r = RunInProcess({"--json", "plan", "--serve", "llama-3-8b", "--max-model-len", "8192", "--budget-gib", "80",
                         "--root", Fixture("gb10")});
  EXPECT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["serve"]["flag"]["basis"], "--budget-gib");
  EXPECT_DOUBLE_EQ(j["serve"]["flag"]["basis_gib"].get<double>(), 80);
  EXPECT_DOUBLE_EQ(j["serve"]["flag"]["most"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["serve"]["flag"]["needed"].get<double>(), 0.27);  // 20.94 GiB high end / 80
}

TEST(ServeCli, BadInputExits2NamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    const char* names;
  } cases[] = {
      {{"plan", "--serve", "llama-3-8b", "--engine", "tgi"}, "--engine"},
      {{"plan", "--serve", "llama-3-8b", "--max-model-len", "0"}, "--max-model-len"},
      {{"plan", "--serve", "llama-3-8b", "--max-model-len", "nan"}, "--max-model-len"},
      {{"plan", "--serve", "llama-3-8b", "--max-model-len", "1e30"}, "--max-model-len"},
      {{"plan", "--serve", "llama-3-8b", "--max-model-len", "16000"}, "--max-model-len"},  // > 8192 positions
      {{"plan", "--serve", "llama-3-8b", "--max-num-seqs", "0"}, "--max-num-seqs"},
      {{"plan", "--serve", "llama-3-8b", "--kv-dtype", "int4"}, "--kv-dtype"},
      {{"plan", "--serve", "llama-3-8b", "--weights-dtype", "q4_k_m"}, "--weights-dtype"},
      {{"plan", "--serve", "no-such-model"}, "--serve"},
      {{"plan", "llama-3-8b", "--beside", "vllm:llama-3-8b,max-model-len=0"}, "--beside"},
      {{"plan", "llama-3-8b", "--beside", "tgi:llama-3-8b"}, "--beside"},
      {{"plan", "llama-3-8b", "--serve", "llama-3-8b"}, "--serve"},
      {{"plan", "llama-3-8b", "--engine", "sglang"}, "--engine"},  // a server flag without --serve
      {{"plan", "llama-3-8b", "--beside", "vllm:llama-3-8b", "--kv-dtype", "fp8"}, "--kv-dtype"},
  };
  for (auto& c : cases) {
    c.args.insert(c.args.end(), {"--root", Fixture("gb10")});
    auto r = RunInProcess(c.args);
    EXPECT_EQ(r.rc, 2) << c.args[2] << " " << r.out;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace sparkops
