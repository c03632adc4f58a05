// Planner v2 (issue 20): bitsandbytes version, adapter dtype, torch.compile, the three counters,
// the per-phase full fine-tune and the widened range whose high end the verdict uses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "memory/accounting.h"
#include "test_util.h"

namespace sparkops {
namespace {

using nlohmann::json;
using testing::RunInProcess;

json Plan(std::vector<std::string> args, int expect_rc = 0) {
  args.insert(args.begin(), {"--json", "plan"});
  auto r = RunInProcess(args);
  EXPECT_EQ(r.rc, expect_rc) << r.err;
  return r.rc == 2 ? json() : json::parse(r.out);
}
double C(const json& j, const char* k) { return j["components"][k].get<double>(); }
double High(const json& j, const char* k) { return j["range"][k]["high"].get<double>(); }
double Low(const json& j, const char* k) { return j["range"][k]["low"].get<double>(); }

TEST(PlanV2, BnbVersionSelectsWhetherFourBitMatmulsKeepTheirInputs) {
  using memory::BnbInputs;
  EXPECT_EQ(memory::BnbInputsFor("0.42.0"), BnbInputs::kKept);
  EXPECT_EQ(memory::BnbInputsFor("0.43.1"), BnbInputs::kKept);
  EXPECT_EQ(memory::BnbInputsFor("0.43.2"), BnbInputs::kFreed);
  EXPECT_EQ(memory::BnbInputsFor("0.49.2+cu130"), BnbInputs::kFreed);
  EXPECT_EQ(memory::BnbInputsFor(""), BnbInputs::kUnknown);
  EXPECT_EQ(memory::BnbInputsFor("latest"), BnbInputs::kUnknown);
  EXPECT_EQ(memory::BnbInputsFor("0..1"), BnbInputs::kUnknown);
  EXPECT_EQ(memory::BnbInputsFor(".42"), BnbInputs::kUnknown);
  EXPECT_EQ(memory::BnbInputsFor("0.43.2rc1"), BnbInputs::kKept);  // a pre-release sorts before 0.43.2
  // q,v only: the frozen o, MLP and down inputs are what old bnb keeps.
  const std::vector<std::string> base = {"llama-3.1-8b", "--method",    "qlora", "--lora-targets", "q,v", "--seq",
                                         "4096",         "--grad-ckpt", "off",   "--budget-gib",   "500"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return Plan(a);
  };
  auto old_bnb = with({"--bnb-version", "0.42.0"}), new_bnb = with({"--bnb-version", "0.45.5"});
  EXPECT_GT(C(old_bnb, "bnb_inputs_gib"), 0.5);
  EXPECT_EQ(C(new_bnb, "bnb_inputs_gib"), 0);
  EXPECT_GT(old_bnb["allocated_peak_gib"].get<double>(), new_bnb["allocated_peak_gib"].get<double>() + 1);
  EXPECT_EQ(old_bnb["options"]["bnb_version_source"], "--bnb-version");
  EXPECT_EQ(old_bnb["widened"].dump().find("bitsandbytes version unknown"), std::string::npos);
  // Unknown (no flag, no environment under an empty --root): central = current behaviour, high = old.
  testing::TempDir empty_root;
  auto unknown = with({"--root", empty_root.path()});
  EXPECT_TRUE(unknown["options"]["bnb_version"].is_null());
  EXPECT_NEAR(unknown["allocated_peak_gib"].get<double>(), new_bnb["allocated_peak_gib"].get<double>(), 0.01);
  EXPECT_NEAR(High(unknown, "allocated_peak_gib"), High(old_bnb, "allocated_peak_gib"), 0.01);
  EXPECT_NE(unknown["widened"].dump().find("bitsandbytes version unknown"), std::string::npos) << unknown["widened"];
  EXPECT_EQ(RunInProcess({"plan", "llama-3.1-8b", "--method", "qlora", "--bnb-version", "x.y"}).rc, 2);
}

TEST(PlanV2, BnbVersionIsReadFromTheEnvironmentPreflightFinds) {
  testing::TempDir site;
  site.Write("bitsandbytes-0.42.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: bitsandbytes\nVersion: 0.42.0\n");
  auto j = Plan({"llama-3.1-8b", "--method", "qlora", "--site-packages", site.path(), "--budget-gib", "500"});
  EXPECT_EQ(j["options"]["bnb_version"], "0.42.0");
  EXPECT_NE(j["options"]["bnb_version_source"].get<std::string>().find("dist-info in " + site.path()),
            std::string::npos);
  EXPECT_GT(C(j, "bnb_inputs_gib"), 0);
  auto cu13 = Plan({"llama-3.1-8b", "--method", "qlora", "--site-packages",
                    testing::Fixture("site-packages/trees/cu13"), "--budget-gib", "500"});
  EXPECT_EQ(cu13["options"]["bnb_version"], "0.49.2");
  EXPECT_EQ(C(cu13, "bnb_inputs_gib"), 0);
  // --bnb-version wins over the environment; LoRA never looks.
  auto flag = Plan({"llama-3.1-8b", "--method", "qlora", "--site-packages", site.path(), "--bnb-version", "0.44.1",
                    "--budget-gib", "500"});
  EXPECT_EQ(flag["options"]["bnb_version"], "0.44.1");
  auto lora = Plan({"llama-3.1-8b", "--site-packages", site.path(), "--budget-gib", "500"});
  EXPECT_TRUE(lora["options"]["bnb_version"].is_null());
}

TEST(PlanV2, AdapterDtypeDoublesAdapterStateAndDropoutKeepsCopies) {
  auto fp32 = Plan({"llama-3.1-8b", "--budget-gib", "500"});
  auto bf16 = Plan({"llama-3.1-8b", "--adapter-dtype", "bf16", "--budget-gib", "500"});
  EXPECT_NEAR(C(fp32, "adapter_gib"), 2 * C(bf16, "adapter_gib"), 0.002);
  EXPECT_NEAR(C(fp32, "optimizer_gib"), 2 * C(bf16, "optimizer_gib"), 0.002);
  // PEFT's fp32 cast gives each adapted linear its own fp32 input copy: more activations than bf16.
  EXPECT_GT(C(fp32, "activations_gib"), C(bf16, "activations_gib"));
  auto drop = Plan({"llama-3.1-8b", "--adapter-dtype", "bf16", "--lora-dropout", "0.05", "--budget-gib", "500"});
  EXPECT_GT(C(drop, "activations_gib"), C(bf16, "activations_gib"));
  EXPECT_EQ(RunInProcess({"plan", "llama-3.1-8b", "--adapter-dtype", "fp8"}).rc, 2);
}

TEST(PlanV2, CompileWidensTheRangeAndTheVerdictUsesItsHighEnd) {
  const std::vector<std::string> a = {"llama-3.2-3b", "--method", "full",        "--seq", "4096",
                                      "--batch",      "2",        "--grad-ckpt", "off"};
  auto eager_args = a, compiled_args = a;
  eager_args.insert(eager_args.end(), {"--budget-gib", "500"});
  compiled_args.insert(compiled_args.end(), {"--compile", "--budget-gib", "500"});
  auto eager = Plan(eager_args), compiled = Plan(compiled_args);
  EXPECT_LT(compiled["allocated_peak_gib"].get<double>(), eager["allocated_peak_gib"].get<double>() - 5);
  EXPECT_NEAR(High(compiled, "allocated_peak_gib"), High(eager, "allocated_peak_gib"), 0.01);
  EXPECT_TRUE(compiled["options"]["compile"].get<bool>());
  // A budget between the central figure and the high end: the verdict follows the high end.
  const double mid = (compiled["process_peak_gib"].get<double>() + High(compiled, "process_peak_gib")) / 2;
  auto between = a;
  between.insert(between.end(), {"--compile", "--budget-gib", std::to_string(mid)});
  EXPECT_EQ(Plan(between, 1)["verdict"], "no-fit");
}

TEST(PlanV2, FullFineTunePeakIsTheLargerPhaseNotTheSum) {
  // Long context: activations dominate, the backward phase is the peak; short: the step is.
  auto longc = Plan({"llama-3.1-8b", "--method", "full", "--seq", "8192", "--grad-ckpt", "off", "--budget-gib", "900"});
  auto shortc = Plan({"llama-3.1-8b", "--method", "full", "--seq", "64", "--budget-gib", "900"});
  const double sum = C(longc, "weights_gib") + C(longc, "gradients_gib") + C(longc, "optimizer_gib") +
                     C(longc, "activations_gib") + C(longc, "logits_gib");
  EXPECT_LT(longc["allocated_peak_gib"].get<double>(), sum - 10);  // 8B: 15 GB of gradients not summed
  EXPECT_GT(longc["backward_phase_gib"].get<double>(), longc["step_phase_gib"].get<double>());
  EXPECT_GT(shortc["step_phase_gib"].get<double>(), shortc["backward_phase_gib"].get<double>());
  EXPECT_EQ(shortc["allocated_peak_gib"], shortc["step_phase_gib"]);
  // Checkpointing keeps layer inputs + one layer: more than 1/L of the unckpt'd activations.
  auto ckpt = Plan({"llama-3.1-8b", "--method", "full", "--seq", "8192", "--budget-gib", "900"});
  EXPECT_GT(C(ckpt, "activations_gib"), C(longc, "activations_gib") / 32);
}

TEST(PlanV2, TextNamesTheThreeCounters) {
  auto r =
      RunInProcess({"plan", "llama-3.1-8b", "--method", "qlora", "--budget-gib", "100", "--bnb-version", "0.42.0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* s :
       {"allocated peak", "torch.cuda.max_memory_allocated", "reserved peak", "torch.cuda.max_memory_reserved",
        "process peak", "bitsandbytes 0.42.0 (--bnb-version)", "bnb-kept inputs", "phases"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  auto j = Plan({"llama-3.1-8b", "--method", "qlora", "--budget-gib", "100", "--bnb-version", "0.42.0"});
  EXPECT_LE(j["allocated_peak_gib"].get<double>(), j["reserved_peak_gib"].get<double>());
  EXPECT_LT(j["reserved_peak_gib"].get<double>(), j["process_peak_gib"].get<double>());
  EXPECT_LE(Low(j, "process_peak_gib"), j["process_peak_gib"].get<double>());
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

TEST(PlanCalibrate, PredictedVsMeasuredWithResiduals) {
  testing::TempDir run;
  auto plan = testing::RunInProcess({"--json", "plan", "llama-3.2-1b", "--budget-gib", "50"});
  ASSERT_EQ(plan.rc, 0) << plan.err;
  run.Write("plan.json", plan.out);
  const double predicted = json::parse(plan.out)["process_peak_gib"].get<double>();
  // Measured 1 GiB above the plan (GB10 pool drop preferred over the RSS also given).
  const double measured = (predicted + 1) * 1073741824.0;
  run.Write("peak.json", "{\"pool_drop_peak_bytes\": " + std::to_string(measured) +
                             ", \"gpu_process_peak_bytes\": null, \"process_rss_peak_bytes\": 1000}");
  auto r = testing::RunInProcess({"plan", "--calibrate", run.path()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("pool drop (MemAvailable)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("residual     +1.00 GiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("as activations + logits"), std::string::npos) << r.out;
  auto j = testing::RunInProcess({"--json", "plan", "--calibrate", run.path()});
  ASSERT_EQ(j.rc, 0);
  EXPECT_NEAR(json::parse(j.out)[0]["residual_gib"].get<double>(), 1.0, 0.002);
  // Bad inputs name the file: missing peak, no figure, negative, not JSON; no MODEL without --calibrate.
  testing::TempDir bad;
  bad.Write("plan.json", plan.out);
  auto missing = testing::RunInProcess({"plan", "--calibrate", bad.path()});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("peak.json"), std::string::npos) << missing.err;
  for (const char* peak : {"{}", "{\"pool_drop_peak_bytes\": -5}", "[1]", "nan"}) {
    bad.Write("peak.json", peak);
    auto e = testing::RunInProcess({"plan", "--calibrate", bad.path()});
    EXPECT_EQ(e.rc, 2) << peak;
    EXPECT_NE(e.err.find("peak.json"), std::string::npos) << peak << ": " << e.err;
  }
  EXPECT_EQ(testing::RunInProcess({"plan"}).rc, 2);
}

}  // namespace
}  // namespace sparkops
