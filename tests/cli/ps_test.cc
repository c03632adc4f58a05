// `sparkops ps` and preflight G6/G10 end to end on fixture trees (--root: no GPU is read).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "checks/check.h"
#include "cli/context.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::CheckGolden;
using testing::Fixture;
using testing::RunInProcess;

TEST(Ps, GoldenText) {
  for (const char* f : {"gb10", "workloads/contention", "workloads/ollama-loaded", "workloads/deepspeed"}) {
    auto r = RunInProcess({"--root", Fixture(f), "ps"});
    EXPECT_EQ(r.rc, 0) << f << r.err;
    std::string name = std::string("ps_") + (std::string(f) == "gb10" ? "gb10" : std::string(f).substr(10)) + ".txt";
    EXPECT_EQ(CheckGolden(name, r.out), "");
  }
}

TEST(Ps, GoldenJsonWithAbsentValuesOmitted) {
  auto r = RunInProcess({"--root", Fixture("gb10"), "ps", "--json"});
  EXPECT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // Why no GPU is readable is the GPU layer's wording: not part of this golden.
  auto stable = nlohmann::ordered_json::parse(r.out);
  stable.erase("gpu_why_none");
  EXPECT_EQ(CheckGolden("ps_gb10.json", stable.dump(2) + "\n"), "");
  ASSERT_EQ(j["workloads"].size(), 2u);
  const auto& vllm = j["workloads"][1];
  EXPECT_EQ(vllm["kind"], "vllm");
  EXPECT_EQ(vllm["verdict"], "capped");
  EXPECT_EQ(vllm["cap"]["fraction"], 0.5);
  EXPECT_FALSE(vllm.contains("gpu_bytes"));  // not reported: omitted, never 0
  EXPECT_EQ(vllm["children"][0]["pid"], 2160);
}

TEST(Ps, EveryScenarioExitsZeroAndNamesItsKind) {
  const std::pair<const char*, const char*> cases[] = {{"vllm-default", "vllm"},
                                                       {"vllm-kv-bytes", "vllm"},
                                                       {"sglang", "sglang"},
                                                       {"ollama-loaded", "ollama"},
                                                       {"llama-cpp", "llama.cpp"},
                                                       {"tgi", "tgi"},
                                                       {"torchrun", "torchrun"},
                                                       {"accelerate-axolotl", "accelerate"},
                                                       {"deepspeed", "deepspeed"},
                                                       {"trl", "trl"},
                                                       {"torchtune", "torchtune"},
                                                       {"llamafactory", "llamafactory"},
                                                       {"unsloth", "unsloth"},
                                                       {"python-gpu", "python"},
                                                       {"edge", "vllm"}};
  for (const auto& [dir, kind] : cases) {
    auto r = RunInProcess({"--root", Fixture(std::string("workloads/") + dir), "ps", "--json"});
    EXPECT_EQ(r.rc, 0) << dir << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["workloads"].size(), 1u) << dir;
    EXPECT_EQ(j["workloads"][0]["kind"], kind) << dir;
  }
}

// Command lines and paths are bytes, not UTF-8: --json replaces what is not UTF-8 instead of
// aborting (nlohmann's dump throws type_error 316 on such bytes: exit 134 before this was fixed).
TEST(Ps, CommandLineOrPathThatIsNotUtf8GivesValidJson) {
  testing::TempDir root;
  std::filesystem::copy(Fixture("workloads/vllm-default"), root.path(), std::filesystem::copy_options::recursive);
  static const char kCmdline[] = "/home/user/venv/bin/python3\0/home/user/venv/bin/vllm\0serve\0mod\xff\xfel";
  std::ofstream(root.path() + "/proc/3101/cmdline", std::ios::trunc | std::ios::binary)
      << std::string(kCmdline, sizeof kCmdline);  // with the final NUL
  auto ps = RunInProcess({"--root", root.path(), "ps", "--json"});
  ASSERT_EQ(ps.rc, 0) << ps.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(ps.out)) << ps.out;
  EXPECT_EQ(j["workloads"][0]["model"], "mod\uFFFD\uFFFDl") << ps.out;

  std::string config = root.Write("conf\xff.json", R"({"tensor_parallel": {"autotp_size": 2}})");
  auto pf = RunInProcess({"--root", root.path(), "preflight", "--only", "G10", "--config", config, "--json"});
  EXPECT_LE(pf.rc, 1) << pf.err;
  ASSERT_NO_THROW(j = nlohmann::json::parse(pf.out)) << pf.out;
  EXPECT_NE(pf.out.find("conf\uFFFD.json"), std::string::npos) << pf.out;
}

TEST(Ps, NothingRunningAndNoProcAndBadFlag) {
  auto none = RunInProcess({"--root", Fixture("laptop"), "ps"});
  EXPECT_EQ(none.rc, 0);
  EXPECT_NE(none.out.find("no ML workloads found among 0 processes"), std::string::npos) << none.out;
  testing::TempDir empty;
  auto noproc = RunInProcess({"--root", empty.path(), "ps"});
  EXPECT_EQ(noproc.rc, 1);
  EXPECT_NE(noproc.err.find("/proc"), std::string::npos);
  EXPECT_EQ(RunInProcess({"ps", "--bogus"}).rc, 2);
}

TEST(PreflightG6, PassWhenAllCappedWarnNamingEachPidAndCap) {
  auto ok = RunInProcess({"--root", Fixture("gb10"), "preflight", "--only", "G6"});
  EXPECT_EQ(ok.rc, 0);
  EXPECT_EQ(ok.out.rfind("G6 PASS all capped or idle", 0), 0u) << ok.out;
  EXPECT_NE(ok.out.find("vllm pid 2101 capped at 0.50"), std::string::npos);

  auto warn = RunInProcess({"--root", Fixture("workloads/contention"), "preflight", "--only", "G6"});
  EXPECT_EQ(warn.rc, 0);  // WARN is not a failure
  EXPECT_EQ(warn.out.rfind("G6 WARN 2 uncapped or near-capacity", 0), 0u) << warn.out;
  EXPECT_NE(warn.out.find("vllm pid 3101 (near-capacity, cap default 0.92)"), std::string::npos) << warn.out;
  EXPECT_NE(warn.out.find("trl pid 4401 (uncapped, cap none)"), std::string::npos) << warn.out;

  auto js = RunInProcess({"--root", Fixture("workloads/contention"), "--json", "preflight", "--only", "G6"});
  auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j[0]["status"], "WARN");
  EXPECT_NE(j[0]["fix"].get<std::string>().find("--gpu-memory-utilization 0.5"), std::string::npos);

  auto none = RunInProcess({"--root", Fixture("laptop"), "preflight", "--only", "G6"});
  EXPECT_EQ(none.out.rfind("G6 PASS no inference server or trainer running", 0), 0u) << none.out;
  testing::TempDir empty;
  auto skip = RunInProcess({"--root", empty.path(), "preflight", "--only", "G6"});
  EXPECT_EQ(skip.out.rfind("G6 SKIP cannot read the process table", 0), 0u) << skip.out;
}

TEST(PreflightG6, UsesInjectedGpuMemoryThroughTheSameCode) {
  std::ostringstream out, err;
  Context ctx{GlobalOptions{}, HostFs(Fixture("workloads/python-gpu")), {}, out, err};
  HostFacts facts(ctx, {});
  GpuSnapshot snap;
  GpuReading g;
  g.unified_memory = true;
  g.processes.push_back({4850, 5ull << 30});
  snap.gpus.push_back(g);
  snap.source = "nvml";
  facts.SetGpu(snap);
  auto r = CheckG6(facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn);
  // 4801 holds /dev/nvidia* (fd evidence), 4850 is listed by NVML: both are plain Python trainers.
  EXPECT_NE(r.summary.find("python pid 4801"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("python pid 4850"), std::string::npos) << r.summary;
  bool from_nvml = false;
  for (const auto& e : r.evidence) from_nvml |= e == "GPU per-process memory from nvml";
  EXPECT_TRUE(from_nvml);
}

TEST(PreflightG10, SkipFailInfoAndInputError) {
  auto skip = RunInProcess({"--root", Fixture("laptop"), "preflight", "--only", "G10"});
  EXPECT_EQ(skip.rc, 0);
  EXPECT_EQ(skip.out.rfind("G10 SKIP nothing to read", 0), 0u) << skip.out;

  auto fail = RunInProcess({"--root", Fixture("laptop"), "preflight", "--only", "G10", "--config",
                            Fixture("configs/accelerate_megatron_tp2.yaml")});
  EXPECT_EQ(fail.rc, 1);
  EXPECT_NE(fail.out.find("G10 FAIL"), std::string::npos);
  EXPECT_NE(fail.out.find("TP=2 across 2 machines in a training job"), std::string::npos) << fail.out;

  auto info = RunInProcess({"--root", Fixture("laptop"), "preflight", "--only", "G10", "--config",
                            Fixture("configs/launch_vllm_tp2_ray.sh")});
  EXPECT_EQ(info.rc, 0);
  EXPECT_EQ(info.out.rfind("G10 INFO: ", 0), 0u) << info.out;

  // Two files of one job: the axolotl YAML has TP=2, the launch script spans 2 machines.
  auto combined =
      RunInProcess({"--root", Fixture("laptop"), "preflight", "--only", "G10", "--config",
                    Fixture("configs/axolotl_tp2.yml"), "--config", Fixture("configs/launch_torchrun_2nodes.sh")});
  EXPECT_EQ(combined.rc, 1) << combined.out;

  auto env = RunInProcess({"--root", Fixture("laptop"), "preflight", "--only", "G10"},
                          {{"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "1"}});
  EXPECT_EQ(env.out.rfind("G10 PASS environment", 0), 0u) << env.out;

  auto running = RunInProcess({"--root", Fixture("workloads/torchrun"), "preflight", "--only", "G10"});
  EXPECT_EQ(running.out.rfind("G10 PASS pid 4101 (torchrun): data parallel across 2 machines", 0), 0u) << running.out;
}

TEST(PreflightG10, UnreadableConfigStillPrintsTenLinesAndExitsTwo) {
  auto r = RunInProcess({"--root", Fixture("gb10"), "preflight", "--config", Fixture("configs/broken.yaml")});
  EXPECT_EQ(r.rc, 2);
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  EXPECT_EQ(lines, 11) << r.out;
  EXPECT_NE(r.out.find("G10 FAIL cannot check " + Fixture("configs/broken.yaml") + ": YAML parse error at line 3"),
            std::string::npos)
      << r.out;
  auto missing = RunInProcess({"--root", Fixture("gb10"), "preflight", "--only", "G10", "--config", "/no/such.yaml"});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.out.find("/no/such.yaml"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
