#include "workloads/parallelism.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace sparkops {
namespace {

std::string Config(const std::string& name) { return testing::ReadFileOrDie(testing::Fixture("configs/" + name)); }

LayoutLevel LevelOf(const std::string& name, std::optional<int> job_nodes = std::nullopt) {
  auto ls = ParseParallelConfig(name, Config(name));
  EXPECT_TRUE(ls) << (ls ? "" : ls.error().message);
  EXPECT_EQ(ls ? ls->size() : 0, 1u) << name;
  return ls ? JudgeLayout(ls->front(), job_nodes).level : LayoutLevel::kPass;
}

TEST(ParallelYaml, AccelerateConfigs) {
  auto fsdp = ParseParallelYaml(Config("accelerate_fsdp_2nodes.yaml"), "a.yaml");
  ASSERT_TRUE(fsdp);
  EXPECT_EQ(fsdp->nodes, 2);
  EXPECT_FALSE(fsdp->tp);
  EXPECT_EQ(fsdp->data_parallel, "FSDP");
  EXPECT_TRUE(fsdp->training);
  EXPECT_EQ(JudgeLayout(*fsdp, std::nullopt).level, LayoutLevel::kPass);

  auto tp = ParseParallelYaml(Config("accelerate_megatron_tp2.yaml"), "m.yaml");
  ASSERT_TRUE(tp);
  EXPECT_EQ(tp->tp, 2);
  EXPECT_EQ(tp->nodes, 2);
  auto j = JudgeLayout(*tp, std::nullopt);
  EXPECT_EQ(j.level, LayoutLevel::kFail);
  EXPECT_NE(j.line.find("m.yaml"), std::string::npos);
  EXPECT_NE(j.line.find("TP=2"), std::string::npos);

  EXPECT_EQ(LevelOf("accelerate_nd_tp2_1node.yaml"), LayoutLevel::kPass);
}

TEST(ParallelYaml, OtherTrainersTakeTheMachineCountFromTheJob) {
  EXPECT_EQ(LevelOf("axolotl_tp2.yml"), LayoutLevel::kWarn);
  EXPECT_EQ(LevelOf("axolotl_tp2.yml", 2), LayoutLevel::kFail);
  EXPECT_EQ(LevelOf("torchtune_tp2.yaml", 1), LayoutLevel::kPass);
  EXPECT_EQ(LevelOf("torchtune_tp2.yaml", 2), LayoutLevel::kFail);
}

TEST(ParallelYaml, ErrorsNameFileAndField) {
  auto bad = ParseParallelConfig("accelerate_bad_field.yaml", Config("accelerate_bad_field.yaml"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, Error::Kind::kInput);
  EXPECT_NE(bad.error().message.find("accelerate_bad_field.yaml: field num_machines"), std::string::npos);
  auto broken = ParseParallelConfig("broken.yaml", Config("broken.yaml"));
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("broken.yaml: YAML parse error at line"), std::string::npos);
  EXPECT_FALSE(ParseParallelYaml("- a\n- b\n", "list.yaml"));
}

TEST(DeepSpeedJson, ZeroAutoTpAndErrors) {
  auto z3 = ParseDeepSpeedJson(Config("deepspeed_zero3.json"), "z.json");
  ASSERT_TRUE(z3);
  EXPECT_EQ(z3->data_parallel, "DeepSpeed ZeRO-3");
  EXPECT_FALSE(z3->tp);
  EXPECT_EQ(JudgeLayout(*z3, 2).level, LayoutLevel::kPass);
  auto tp = ParseDeepSpeedJson(Config("deepspeed_autotp2.json"), "t.json");
  ASSERT_TRUE(tp);
  EXPECT_EQ(tp->tp, 2);
  EXPECT_EQ(JudgeLayout(*tp, 2).level, LayoutLevel::kFail);
  auto inf = ParseDeepSpeedJson(R"({"mp_size": 2})", "i.json");
  ASSERT_TRUE(inf);
  EXPECT_FALSE(inf->training);
  EXPECT_EQ(JudgeLayout(*inf, 2).level, LayoutLevel::kInfo);

  auto bad = ParseParallelConfig("deepspeed_bad_field.json", Config("deepspeed_bad_field.json"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("field zero_optimization.stage"), std::string::npos);
  auto broken = ParseParallelConfig("broken.json", Config("broken.json"));
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("broken.json: not valid JSON"), std::string::npos);
  EXPECT_FALSE(ParseDeepSpeedJson("[1,2]", "arr.json"));
}

TEST(LaunchScript, TorchrunWithExportedVariablesAndContinuations) {
  auto ls = ParseLaunchScript(Config("launch_torchrun_2nodes.sh"), "run.sh");
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0].what, "torchrun");
  EXPECT_EQ(ls[0].nodes, 2);  // --nnodes=$NNODES resolved from `export NNODES=2`
  EXPECT_EQ(ls[0].source, "run.sh line 5");
  EXPECT_EQ(JudgeLayout(ls[0], std::nullopt).level, LayoutLevel::kPass);
}

TEST(LaunchScript, MegatronTpFailsPpWarnsVllmTpIsInfo) {
  EXPECT_EQ(LevelOf("launch_megatron_tp2.sh"), LayoutLevel::kFail);
  EXPECT_EQ(LevelOf("launch_megatron_pp2.sh"), LayoutLevel::kWarn);
  auto v = ParseLaunchScript(Config("launch_vllm_tp2_ray.sh"), "serve.sh");
  ASSERT_EQ(v.size(), 1u);  // `ray start` is not a launcher
  EXPECT_FALSE(v[0].training);
  EXPECT_EQ(v[0].tp, 2);
  auto j = JudgeLayout(v[0], std::nullopt);
  EXPECT_EQ(j.level, LayoutLevel::kInfo);
  EXPECT_NE(j.line.find("routine for serving"), std::string::npos);
}

TEST(LaunchScript, NothingRecognisedIsAnInputError) {
  EXPECT_TRUE(ParseLaunchScript(Config("launch_nothing.sh"), "n.sh").empty());
  auto r = ParseParallelConfig("n.sh", Config("launch_nothing.sh"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("n.sh: no launcher found"), std::string::npos);
}

TEST(LayoutFromArgv, LaunchersAndServers) {
  auto t = LayoutFromArgv({"torchrun", "--nnodes", "1:2", "--nproc_per_node", "1", "train.py"}, {}, "p");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->nodes, 2);
  auto sa = LayoutFromArgv({"torchrun", "--standalone", "--nproc_per_node=2", "train.py"}, {}, "p");
  ASSERT_TRUE(sa);
  EXPECT_EQ(sa->nodes, 1);
  auto acc = LayoutFromArgv({"accelerate", "launch", "--num_machines", "2", "--use_fsdp", "train.py"}, {}, "p");
  ASSERT_TRUE(acc);
  EXPECT_EQ(acc->data_parallel, "FSDP");
  EXPECT_EQ(JudgeLayout(*acc, std::nullopt).level, LayoutLevel::kPass);
  auto tune =
      LayoutFromArgv({"tune", "run", "--nnodes", "2", "full_finetune_distributed", "tensor_parallel_dim=2"}, {}, "p");
  ASSERT_TRUE(tune);
  EXPECT_EQ(JudgeLayout(*tune, std::nullopt).level, LayoutLevel::kFail);
  auto sg = LayoutFromArgv({"python3", "-m", "sglang.launch_server", "--tp-size", "2", "--nnodes", "2"}, {}, "p");
  ASSERT_TRUE(sg);
  EXPECT_EQ(JudgeLayout(*sg, std::nullopt).level, LayoutLevel::kInfo);
  auto tgi = LayoutFromArgv({"text-generation-launcher", "--num-shard", "2"}, {}, "p");
  ASSERT_TRUE(tgi);
  EXPECT_EQ(tgi->tp, 2);
  EXPECT_FALSE(LayoutFromArgv({"python3", "train.py"}, {}, "p"));
  EXPECT_FALSE(LayoutFromArgv({}, {}, "p"));
  // An unresolved variable is noted, not guessed.
  auto unresolved = LayoutFromArgv({"torchrun", "--nnodes", "$NNODES", "train.py"}, {}, "p");
  ASSERT_TRUE(unresolved);
  EXPECT_FALSE(unresolved->nodes);
}

TEST(LayoutFromEnv, WorldSizeOverLocalMeansSeveralNodes) {
  auto two = LayoutFromEnv({{"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "1"}}, "env");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->nodes, 2);
  auto one = LayoutFromEnv({{"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "4"}}, "env");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->nodes, 1);
  auto tp = LayoutFromEnv({{"NNODES", "2"}, {"PARALLELISM_CONFIG_TP_SIZE", "2"}}, "env");
  ASSERT_TRUE(tp);
  EXPECT_EQ(JudgeLayout(*tp, std::nullopt).level, LayoutLevel::kFail);
  EXPECT_FALSE(LayoutFromEnv({{"PATH", "/bin"}}, "env"));
}

}  // namespace
}  // namespace sparkops
