#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "memory/catalogue.h"
#include "memory/planner.h"
#include "test_util.h"

namespace sparkops {
namespace {

using nlohmann::json;
using testing::Fixture;
using testing::RunInProcess;

json PlanJson(std::vector<std::string> args, int expect_rc = 0) {
  args.insert(args.begin(), {"--json", "plan"});
  auto r = RunInProcess(args);
  EXPECT_EQ(r.rc, expect_rc) << r.err;
  return json::parse(r.out);
}

TEST(Plan, JsonHasEveryKeyTheIssueLists) {
  auto j = PlanJson({"llama-3.3-70b", "--method", "qlora", "--seq", "4096", "--root", Fixture("gb10")});
  for (const char* k : {"params", "params_source", "components", "allocated_peak_gib", "reserved_peak_gib",
                        "process_peak_gib", "range", "widened", "load_peak_gib", "budget_gib", "mem_free_gib",
                        "verdict", "max_seq_that_fits", "max_batch_that_fits", "anchor"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"weights_gib", "adapter_gib", "gradients_gib", "optimizer_gib", "master_weights_gib",
                        "activations_gib", "logits_gib", "dequant_gib", "overhead_gib"})
    EXPECT_TRUE(j["components"].contains(k)) << k;
  // Budget = MemAvailable (118566368 kB in the gb10 fixture) - 4 GiB.
  EXPECT_NEAR(j["budget_gib"].get<double>(), 118566368.0 / 1048576 - 4, 0.01);
  EXPECT_NEAR(j["mem_free_gib"].get<double>(), 62144512.0 / 1048576, 0.01);
  EXPECT_EQ(j["verdict"], "fits");
  EXPECT_EQ(j["anchor"]["source"], "quoted");
  // 70B NF4 lands near the seed's ~40 GB weights anchor (within 10 %).
  EXPECT_NEAR(j["components"]["weights_gib"].get<double>() * 1.073741824, 40.0, 4.0);
  // The counters nest: allocated is the larger phase, reserved adds slack and the 4-bit load
  // cache, the process adds the CUDA context (no paged state here).
  auto c = [&](const char* k) { return j["components"][k].get<double>(); };
  EXPECT_NEAR(j["allocated_peak_gib"].get<double>(),
              std::max(j["backward_phase_gib"].get<double>(), j["step_phase_gib"].get<double>()), 0.002);
  EXPECT_NEAR(j["reserved_peak_gib"].get<double>(),
              j["allocated_peak_gib"].get<double>() + c("slack_gib") + c("load_cache_gib"), 0.003);
  EXPECT_NEAR(j["process_peak_gib"].get<double>(), j["reserved_peak_gib"].get<double>() + c("overhead_gib"), 0.003);
  EXPECT_GT(c("slack_gib"), 0);
  EXPECT_GT(c("load_cache_gib"), 0);
}

TEST(Plan, LoraAdapterCountsMatchPublishedTrainableParams) {
  struct Case {
    std::vector<std::string> args;
    uint64_t trainable;
  } cases[] = {
      {{"llama-2-7b", "--lora-rank", "8", "--lora-targets", "q,v"}, 4194304},       // LitGPT resource table
      {{"llama-3.1-8b", "--lora-rank", "16", "--lora-targets", "all"}, 41943040},   // research B2
      {{"llama-3.2-3b", "--lora-rank", "32", "--lora-targets", "q,v"}, 9175040},    // PEFT MetaMathQA (PF-02)
  };
  for (auto& c : cases) {
    c.args.insert(c.args.end(), {"--budget-gib", "500"});
    EXPECT_EQ(PlanJson(c.args)["trainable_params"].get<uint64_t>(), c.trainable) << c.args[0];
  }
}

TEST(Plan, FullFineTuneBytesPerParamFollowPrecision) {
  // Model states per parameter: pure bf16 8 B, mixed 16 B (2+2+4+8), fp32 16 B (research B1).
  auto states = [](const char* precision) {
    auto j = PlanJson({"llama-3.1-8b", "--method", "full", "--precision", precision, "--budget-gib", "1000"});
    auto& c = j["components"];
    return (c["weights_gib"].get<double>() + c["gradients_gib"].get<double>() + c["optimizer_gib"].get<double>() +
            c["master_weights_gib"].get<double>()) *
           1073741824.0 / j["params"].get<double>();
  };
  EXPECT_NEAR(states("bf16"), 8, 0.01);
  EXPECT_NEAR(states("mixed"), 16, 0.01);
  EXPECT_NEAR(states("fp32"), 16, 0.01);
}

TEST(Plan, KnobsMoveTheRightComponents) {
  auto base = PlanJson({"llama-3.1-8b", "--seq", "4096", "--budget-gib", "500"});
  auto off = PlanJson({"llama-3.1-8b", "--seq", "4096", "--grad-ckpt", "off", "--budget-gib", "500"});
  auto eager = PlanJson({"llama-3.1-8b", "--seq", "4096", "--attention", "eager", "--budget-gib", "500"});
  auto chunked = PlanJson({"llama-3.1-8b", "--seq", "4096", "--loss", "chunked", "--budget-gib", "500"});
  auto a = [](const json& j, const char* k) { return j["components"][k].get<double>(); };
  EXPECT_GT(a(off, "activations_gib"), 5 * a(base, "activations_gib"));
  EXPECT_GT(a(eager, "activations_gib"), a(base, "activations_gib"));
  EXPECT_LT(a(chunked, "logits_gib"), a(base, "logits_gib") / 2);
  EXPECT_EQ(a(base, "weights_gib"), a(off, "weights_gib"));
  auto drop = PlanJson({"llama-3.1-8b", "--seq", "4096", "--lora-dropout", "0.05", "--budget-gib", "500"});
  EXPECT_GT(a(drop, "activations_gib"), a(base, "activations_gib"));
  EXPECT_EQ(RunInProcess({"plan", "llama-3.1-8b", "--lora-dropout", "1.5"}).rc, 2);
  auto paged = PlanJson({"llama-3.1-8b", "--optimizer", "paged_adamw8bit", "--budget-gib", "500"});
  // Paged state lives in the pool but not in torch's allocated counter.
  EXPECT_NEAR(paged["process_peak_gib"].get<double>() - paged["reserved_peak_gib"].get<double>(),
              a(paged, "optimizer_gib") + a(paged, "overhead_gib"), 0.01);
}

TEST(Plan, VerdictAndExitCodes) {
  using memory::Judge;
  using memory::Verdict;
  EXPECT_EQ(Judge(90, 100), Verdict::kFits);
  EXPECT_EQ(Judge(90.1, 100), Verdict::kTight);
  EXPECT_EQ(Judge(100, 100), Verdict::kTight);
  EXPECT_EQ(Judge(100.1, 100), Verdict::kNoFit);
  auto nofit = PlanJson({"llama-3.3-70b", "--method", "full", "--root", Fixture("gb10")}, 1);
  EXPECT_EQ(nofit["verdict"], "no-fit");
  auto r = RunInProcess({"plan", "llama-3.3-70b", "--method", "full", "--root", Fixture("gb10")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("verdict         no-fit"), std::string::npos) << r.out;
}

TEST(Plan, FitSearchIsTheBoundary) {
  auto j = PlanJson({"llama-3.1-8b", "--method", "full", "--seq", "65536", "--budget-gib", "100"}, 1);
  ASSERT_TRUE(j["max_seq_that_fits"].is_number());
  uint64_t s = j["max_seq_that_fits"].get<uint64_t>();
  EXPECT_GT(s, 1000u);
  EXPECT_LT(s, 65536u);
  auto at = PlanJson({"llama-3.1-8b", "--method", "full", "--seq", std::to_string(s), "--budget-gib", "100"});
  EXPECT_NE(at["verdict"], "no-fit");
  auto above = PlanJson({"llama-3.1-8b", "--method", "full", "--seq", std::to_string(s + 1), "--budget-gib", "100"}, 1);
  EXPECT_EQ(above["verdict"], "no-fit");
  ASSERT_TRUE(j["max_batch_that_fits"].is_null());  // not even batch 1 fits at 65536
  auto big = PlanJson({"qwen3-0.6b", "--budget-gib", "500"});
  EXPECT_EQ(big["max_seq_that_fits"].get<uint64_t>(), 40960u);  // capped at the model's context
  EXPECT_GT(big["max_batch_that_fits"].get<uint64_t>(), 1u);
  auto none = PlanJson({"llama-3.3-70b", "--method", "full", "--budget-gib", "10"}, 1);
  EXPECT_TRUE(none["max_seq_that_fits"].is_null());
}

TEST(Plan, AnchorsForTheSeedsThreeCases) {
  auto lora = PlanJson({"gemma-2-27b", "--budget-gib", "500"});
  EXPECT_EQ(lora["anchor"]["source"], "computed");
  EXPECT_NEAR(lora["anchor"]["diff_gib"].get<double>(), 0, 0.01);  // it is the anchor itself
  auto full = PlanJson({"gemma-2-9b", "--method", "full", "--seq", "4096", "--budget-gib", "500"});
  EXPECT_EQ(full["anchor"]["source"], "computed");
  EXPECT_GT(full["anchor"]["diff_gib"].get<double>(), 0);  // longer seq than the anchor's 2048
}

TEST(Plan, BadOptionsAreExit2NamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    const char* flag;
  } cases[] = {
      {{"plan", "llama-3.1-8b", "--lora-rank", "0"}, "--lora-rank"},
      {{"plan", "llama-3.1-8b", "--seq", "0"}, "--seq"},
      {{"plan", "llama-3.1-8b", "--batch=-3"}, "--batch"},
      {{"plan", "llama-3.1-8b", "--budget-gib=-5"}, "--budget-gib"},
      {{"plan", "llama-3.1-8b", "--reserve-gib=-1"}, "--reserve-gib"},
      {{"plan", "llama-3.1-8b", "--optimizer", "lion"}, "--optimizer"},
      {{"plan", "llama-3.1-8b", "--lora-targets", "q,zz"}, "--lora-targets"},
      {{"plan", "llama-3.1-8b", "--grad-ckpt", "maybe"}, "--grad-ckpt"},
      {{"plan", "llama-3.1-8b", "--root", Fixture("gb10"), "--reserve-gib", "500"}, "--reserve-gib"},
      {{"plan", "lama-3.1-8b"}, "did you mean 'llama-3.1-8b'"},
  };
  for (const auto& c : cases) {
    auto r = RunInProcess(c.args);
    EXPECT_EQ(r.rc, 2) << c.flag << ": " << r.err;
    EXPECT_NE(r.err.find(c.flag), std::string::npos) << r.err;
  }
}

TEST(Plan, MalformedModelFilesAreExit2NamingTheFile) {
  testing::TempDir d;
  const std::string cfg = R"({"model_type":"llama","vocab_size":100,"hidden_size":64,"intermediate_size":128,
    "num_hidden_layers":2,"num_attention_heads":4})";
  d.Write("bad/config.json", "{\"model_type\": ");
  d.Write("unknown/config.json", R"({"model_type":"rwkv"})");
  d.Write("beyond/config.json", cfg);
  d.Write("beyond/model.safetensors", std::string("\xff\x00\x00\x00\x00\x00\x00\x00{}", 10));
  d.Write("huge/config.json", cfg);
  d.Write("huge/model.safetensors", std::string("\x00\x00\x00\x10\x00\x00\x00\x00{}", 10));
  d.Write("dtype/config.json", cfg);
  const std::string h = R"({"w":{"dtype":"INT3","shape":[2]}})";
  std::string st(8, '\0');
  st[0] = static_cast<char>(h.size());
  d.Write("dtype/model.safetensors", st + h);
  d.Write("json/config.json", cfg);
  d.Write("json/model.safetensors", std::string("\x05\x00\x00\x00\x00\x00\x00\x00{abc}", 13));
  // Shapes whose product wraps 2^64 (read as "1.0 M params, fits" before), and a tensor whose data
  // lies past the end of the file.
  auto with_header = [](const std::string& hdr, size_t data) {
    std::string st(8, '\0');
    for (int i = 0; i < 8; ++i) st[static_cast<size_t>(i)] = static_cast<char>((hdr.size() >> (8 * i)) & 0xff);
    return st + hdr + std::string(data, '\0');
  };
  d.Write("wrap/config.json", cfg);
  d.Write("wrap/model.safetensors",
          with_header(R"({"w":{"dtype":"BF16","shape":[4294967296,4294967296,1048576],"data_offsets":[0,2097152]}})",
                      2097152));
  d.Write("outside/config.json", cfg);
  d.Write("outside/model.safetensors",
          with_header(R"({"w":{"dtype":"BF16","shape":[1000],"data_offsets":[0,2000]}})", 100));
  struct Case {
    const char* dir;
    const char* file;
    const char* what;
  } cases[] = {{"bad", "config.json", "not valid JSON"},
               {"unknown", "config.json", "'rwkv'"},
               {"beyond", "model.safetensors", "beyond the end"},
               {"huge", "model.safetensors", "100 MB"},
               {"dtype", "model.safetensors", "unknown dtype 'INT3'"},
               {"json", "model.safetensors", "header: not valid JSON at byte 2"},
               {"wrap", "model.safetensors", "tensor 'w' shape is implausibly large"},
               {"outside", "model.safetensors", "tensor 'w' data_offsets [0, 2000] lie outside"}};
  for (const auto& c : cases) {
    auto r = RunInProcess({"plan", d.path() + "/" + c.dir, "--budget-gib", "100"});
    EXPECT_EQ(r.rc, 2) << c.dir << ": " << r.err;
    EXPECT_NE(r.err.find(std::string(c.dir) + "/" + c.file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << r.err;
  }
}

TEST(Models, ListsTheCatalogueInTextAndJson) {
  auto t = RunInProcess({"models"});
  EXPECT_EQ(t.rc, 0);
  EXPECT_NE(t.out.find("llama-3.3-70b"), std::string::npos);
  auto j = RunInProcess({"--json", "models"});
  ASSERT_EQ(j.rc, 0);
  auto arr = json::parse(j.out);
  EXPECT_EQ(arr.size(), memory::Catalogue().size());
  bool moe = false;
  for (auto& e : arr)
    if (e["name"] == "gpt-oss-120b") moe = e["active_params"].get<double>() < e["params"].get<double>() / 10;
  EXPECT_TRUE(moe);
}

}  // namespace
}  // namespace sparkops
