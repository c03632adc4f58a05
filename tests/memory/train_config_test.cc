// `plan --from FILE` (issue 36): a real config of each format, written from each project's
// documented schema (tests/fixtures/train-configs/), what it takes, what it assumes, flags
// overriding it, and hostile files.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "memory/train_config.h"
#include "test_util.h"

namespace sparkops {
namespace {

using nlohmann::json;
using testing::Fixture;
using testing::RunInProcess;

std::string Cfg(const char* name) { return Fixture(std::string("train-configs/") + name); }

/// flag -> value of what plan --from took (not overridden).
std::map<std::string, std::string> Took(const json& j) {
  std::map<std::string, std::string> m;
  for (const auto& t : j["from"]["taken"])
    if (!t["overridden"].get<bool>()) m[t["flag"]] = t["value"];
  return m;
}

json PlanFrom(std::vector<std::string> args) {
  args.insert(args.begin(), {"--json", "plan"});
  args.insert(args.end(), {"--budget-gib", "1000"});
  auto r = RunInProcess(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.rc == 0 ? json::parse(r.out) : json();
}

TEST(PlanFrom, TrlSftYaml) {
  auto j = PlanFrom({"--from", Cfg("trl_sft.yaml")});
  EXPECT_EQ(j["from"]["format"], "HF TrainingArguments/TRL");
  EXPECT_EQ(j["from"]["model"], "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(j["from"]["model_key"], "model_name_or_path");
  const auto o = j["options"];
  EXPECT_EQ(o["method"], "qlora");
  EXPECT_EQ(o["seq"], 2048);
  EXPECT_EQ(o["batch"], 2);
  EXPECT_EQ(o["lora_rank"], 16);
  EXPECT_EQ(o["lora_targets"].size(), 7u);  // all-linear
  EXPECT_EQ(o["optimizer"], "paged_adamw8bit");
  EXPECT_EQ(o["precision"], "bf16");
  EXPECT_EQ(o["double_quant"], true);
  EXPECT_DOUBLE_EQ(o["lora_dropout"].get<double>(), 0.05);
}

TEST(PlanFrom, HfTrainingArgumentsJson) {
  auto j = PlanFrom({"--from", Cfg("hf_training_args.json")});
  EXPECT_EQ(j["model_type"], "qwen2");
  EXPECT_EQ(j["options"]["method"], "full");
  EXPECT_EQ(j["options"]["seq"], 4096);
  EXPECT_EQ(j["options"]["optimizer"], "adamw_fused");
  EXPECT_EQ(j["options"]["grad_accum"], 16);  // gradient_accumulation_steps
  EXPECT_GT(j["components"]["accum_gradients_gib"].get<double>(), 10);  // a full fine-tune's gradients
  EXPECT_EQ(j["optimizer_paged"], false);
  EXPECT_NE(j["from"]["assumed"].dump().find("full fine-tune"), std::string::npos);
}

TEST(PlanFrom, AxolotlYaml) {
  auto j = PlanFrom({"--from", Cfg("axolotl_qlora.yml")});
  EXPECT_EQ(j["from"]["format"], "axolotl");
  const auto t = Took(j);
  EXPECT_EQ(t.at("--method"), "qlora");
  EXPECT_EQ(t.at("--seq"), "2048");
  EXPECT_EQ(t.at("--lora-targets"), "all");
  EXPECT_EQ(t.at("--attention"), "flash");
  EXPECT_EQ(j["options"]["modules_to_save"], json({"embed", "head"}));
  EXPECT_EQ(j["options"]["batch"], 1);
}

TEST(PlanFrom, TorchtuneRecipe) {
  auto j = PlanFrom({"--from", Cfg("torchtune_lora.yaml")});
  EXPECT_EQ(j["from"]["format"], "torchtune recipe");
  EXPECT_EQ(j["from"]["model"], "llama-3.2-3b");  // the checkpoint dir is absent here; the builder's name
  const auto o = j["options"];
  EXPECT_EQ(o["method"], "lora");
  EXPECT_EQ(o["lora_targets"], json({"down", "gate", "k", "o", "q", "up", "v"}));
  EXPECT_EQ(o["optimizer"], "adamw_fused");
  EXPECT_EQ(o["loss"], "chunked");
  EXPECT_EQ(o["adapter_dtype"], "bf16");
  EXPECT_EQ(o["seq"], 4096);
  EXPECT_EQ(o["batch"], 2);
}

TEST(PlanFrom, TorchtuneQloraRecipePlansTorchtuneItself) {
  // torchtune 0.1.0's llama2/7B_qlora_single_device.yaml; alpaca's max_seq_len 512 given as a flag.
  auto j = PlanFrom(
      {"llama-2-7b", "--from", Cfg("torchtune_qlora_llama2.yaml"), "--seq", "512", "--framework-version", "0.1.0"});
  EXPECT_EQ(j["from"]["format"], "torchtune recipe");
  const auto o = j["options"];
  EXPECT_EQ(o["framework"], "torchtune");
  EXPECT_EQ(o["method"], "qlora");
  EXPECT_EQ(o["lora_targets"], json({"down", "gate", "k", "o", "q", "up", "v"}));
  EXPECT_EQ(o["batch"], 2);
  EXPECT_EQ(o["optimizer"], "adamw");
  EXPECT_EQ(Took(j).at("--framework"), "torchtune");
  EXPECT_GT(j["components"]["host_state_dict_gib"].get<double>(), 12);
}

TEST(PlanFrom, AxolotlDoraOnAGptqBase) {
  // axolotl's schema: `gptq: true` (a GPTQ checkpoint as the base) and `peft_use_dora`.
  auto j = PlanFrom({"llama-2-7b", "--from", Cfg("axolotl_dora_gptq.yml")});
  EXPECT_EQ(j["from"]["format"], "axolotl");
  auto t = Took(j);
  EXPECT_EQ(t.at("--dora"), "on");
  EXPECT_EQ(t.at("--quant"), "gptq4");
  EXPECT_EQ(j["options"]["dora"], true);
  EXPECT_EQ(j["options"]["quant"], "gptq4");
  EXPECT_EQ(j["options"]["method"], "lora");
  EXPECT_GT(j["components"]["saved_weights_gib"].get<double>(), 0);
  // Flags still win: --quant none plans the same run on a bf16 base.
  auto plain = PlanFrom({"llama-2-7b", "--from", Cfg("axolotl_dora_gptq.yml"), "--quant", "none"});
  EXPECT_EQ(plain["options"]["quant"], "none");
}

TEST(PlanFrom, AccelerateConfigTakesPrecisionAndCompileAndSaysWhatItCannotModel) {
  // Written from accelerate 1.16.0's ClusterConfig (commands/config/config_args.py): the keys
  // `accelerate config` saves with yaml.safe_dump.
  auto j = PlanFrom({"llama-3.2-1b", "--from", Cfg("accelerate_bf16.yaml")});
  EXPECT_EQ(j["from"]["format"], "accelerate config");
  auto t = Took(j);
  EXPECT_EQ(t.at("--precision"), "mixed");
  EXPECT_TRUE(t.count("--compile"));
  EXPECT_EQ(j["options"]["precision"], "mixed");
  EXPECT_EQ(j["options"]["compile"], true);
  // Two Sparks under ZeRO-3 with CPU offload: planned unsharded, each limit said.
  auto z = PlanFrom({"llama-3.2-1b", "--from", Cfg("accelerate_zero3_two_sparks.yaml")});
  std::string assumed;
  for (const auto& a : z["from"]["assumed"]) assumed += a.get<std::string>() + "\n";
  EXPECT_NE(assumed.find("DEEPSPEED ZeRO-3 across 2 machines"), std::string::npos) << assumed;
  EXPECT_NE(assumed.find("offload_optimizer_device cpu"), std::string::npos) << assumed;
  EXPECT_FALSE(Took(z).count("--precision"));  // mixed_precision 'no': the model's own dtype
  // Four processes on one machine: a Spark has one GPU. Refused, naming the file and the field.
  auto r = RunInProcess({"plan", "llama-3.2-1b", "--from", Cfg("accelerate_multi_gpu.yaml")});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("accelerate_multi_gpu.yaml: field 'num_processes'"), std::string::npos) << r.err;
  // Without MODEL: the launch config names none.
  EXPECT_EQ(RunInProcess({"plan", "--from", Cfg("accelerate_bf16.yaml")}).rc, 2);
}

TEST(PlanFrom, LitgptFinetuneYaml) {
  auto j = PlanFrom({"--from", Cfg("litgpt_qlora.yaml")});
  EXPECT_EQ(j["from"]["format"], "LitGPT finetune");
  EXPECT_EQ(j["from"]["model"], "meta-llama/Llama-3.2-1B");
  const auto o = j["options"];
  EXPECT_EQ(o["framework"], "litgpt");
  EXPECT_EQ(o["method"], "qlora");
  EXPECT_EQ(o["double_quant"], true);  // bnb.nf4-dq
  EXPECT_EQ(o["lora_targets"], json({"q", "v"}));
  EXPECT_EQ(o["seq"], 512);
  EXPECT_EQ(o["batch"], 2);
  EXPECT_EQ(o["grad_accum"], 4);  // global_batch_size 8 / micro_batch_size 2 on one device
  EXPECT_EQ(o["grad_ckpt"], false);
}

TEST(PlanFrom, FlagsOverrideTheFileAndTheTextSaysWhatItTookAndAssumed) {
  auto j = PlanFrom({"--from", Cfg("axolotl_qlora.yml"), "--seq", "1024", "--method", "lora"});
  EXPECT_EQ(j["options"]["seq"], 1024);
  EXPECT_EQ(j["options"]["method"], "lora");
  bool seq_overridden = false;
  for (const auto& t : j["from"]["taken"])
    if (t["flag"] == "--seq") seq_overridden = t["overridden"].get<bool>();
  EXPECT_TRUE(seq_overridden);
  // MODEL on the command line wins over the file's.
  auto m = PlanFrom({"llama-3.2-1b", "--from", Cfg("axolotl_qlora.yml")});
  EXPECT_EQ(m["model"], "llama-3.2-1b");
  auto text = RunInProcess({"plan", "--from", Cfg("hf_training_args.json"), "--budget-gib", "1000", "--batch", "2"});
  EXPECT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("from " + Cfg("hf_training_args.json") +
                          " (HF TrainingArguments/TRL): model Qwen/Qwen2.5-7B"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("took     --method"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("overridden by flags: --batch 1 (per_device_train_batch_size)"), std::string::npos);
  EXPECT_NE(text.out.find("assumed  no use_peft"), std::string::npos);
}

TEST(PlanFrom, BadFilesAreExit2NamingFileAndField) {
  testing::TempDir d;
  auto rc_err = [&](const std::string& name, const std::string& body) {
    auto r = RunInProcess({"plan", "--from", d.Write(name, body), "--budget-gib", "100"});
    return std::pair{r.rc, r.err};
  };
  auto [rc1, e1] = rc_err("a.yaml", "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: -3\n");
  EXPECT_EQ(rc1, 2);
  EXPECT_NE(e1.find("a.yaml: field 'micro_batch_size'"), std::string::npos) << e1;
  auto [rc2, e2] = rc_err("b.yaml", "hello: world\n");
  EXPECT_EQ(rc2, 2);
  EXPECT_NE(e2.find("not a training config"), std::string::npos) << e2;
  auto [rc3, e3] = rc_err("c.yaml", std::string(100, '[') + std::string(100, ']'));
  EXPECT_EQ(rc3, 2);
  EXPECT_NE(e3.find("nested deeper"), std::string::npos) << e3;
  auto [rc4, e4] = rc_err("d.yaml", "base_model: no/such-model-anywhere\n");
  EXPECT_EQ(rc4, 2);
  EXPECT_NE(e4.find("field 'base_model'"), std::string::npos) << e4;
  auto [rc5, e5] = rc_err("e.json", "{\"model_name_or_path\": \"meta-llama/Llama-3.1-8B\", \"bf16\": 7}");
  EXPECT_EQ(rc5, 2);
  EXPECT_NE(e5.find("field 'bf16'"), std::string::npos) << e5;
  auto [rc6, e6] = rc_err("f.yaml", "key: [unclosed\n");
  EXPECT_EQ(rc6, 2);
  EXPECT_NE(e6.find("f.yaml: parse error"), std::string::npos) << e6;
  // Not a regular file: a directory, /dev/zero; over 1 MiB.
  EXPECT_EQ(RunInProcess({"plan", "--from", d.path(), "--budget-gib", "100"}).rc, 2);
  EXPECT_EQ(RunInProcess({"plan", "--from", "/dev/zero", "--budget-gib", "100"}).rc, 2);
  auto big = RunInProcess(
      {"plan", "--from", d.Write("big.yaml", "a: " + std::string(2u << 20, 'x') + "\n"), "--budget-gib", "100"});
  EXPECT_EQ(big.rc, 2);
  EXPECT_NE(big.err.find("larger than 1 MiB"), std::string::npos) << big.err;
}

TEST(PlanFrom, RunRecordsThePlanOfTheConfig) {
  testing::TempDir d;
  const std::string dir = d.path() + "/r";
  auto r = testing::RunBinary({"--root", Fixture("gb10"), "run", "--out", dir, "--interval", "0.05", "--no-guard",
                               "--plan-from", Cfg("litgpt_qlora.yaml"), "--plan-args=--budget-gib 80", "--", "true"});
  EXPECT_EQ(r.rc, 0) << r.err;
  auto meta = json::parse(testing::ReadFileOrDie(dir + "/meta.json"));
  EXPECT_EQ(meta["plan_args"], "--from " + Cfg("litgpt_qlora.yaml") + " --budget-gib 80");
  auto plan = json::parse(testing::ReadFileOrDie(dir + "/plan.json"));
  EXPECT_EQ(plan["from"]["format"], "LitGPT finetune");
  EXPECT_EQ(plan["options"]["framework"], "litgpt");
  EXPECT_EQ(plan["budget_gib"], 80.0);
  EXPECT_EQ(testing::RunBinary({"run", "--plan-from", "a b.yaml", "--", "true"}).rc, 2);
}

TEST(PlanFrom, NodeBudgetBoundsAliasExpansion) {
  // Each level doubles the nodes a walk visits through aliases: bounded, not exponential.
  std::string y = "a0: &a0 {x: 1, y: 2}\n";
  for (int i = 1; i < 12; ++i)
    y += fmt::format("a{}: &a{} {{k0: *a{}, k1: *a{}, k2: *a{}, k3: *a{}}}\n", i, i, i - 1, i - 1, i - 1, i - 1);
  y += "base_model: x\n";
  auto c = memory::ParseTrainConfig(y, "alias.yaml");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("more than"), std::string::npos) << c.error().message;
}

}  // namespace
}  // namespace sparkops
