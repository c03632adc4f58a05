#include <gtest/gtest.h>

#include "test_util.h"
#include "workloads/argv.h"
#include "workloads/caps.h"
#include "workloads/workload.h"

namespace sparkops {
namespace {

using testing::Fixture;

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMemTotal = 127600748ull * 1024;  // the gb10 fixture's MemTotal

std::vector<Workload> ClassifyFixture(const std::string& name, const GpuMemByPid& gpu = {}) {
  HostFs fs(Fixture(name));
  auto procs = ReadProcessTable(fs);
  EXPECT_TRUE(procs) << name;
  if (!procs) return {};
  for (auto& p : *procs) p.script_head = ReadScriptHead(fs, p);
  return ClassifyProcesses(*procs, gpu, kMemTotal);
}

struct KindCase {
  const char* fixture;
  uint32_t pid;
  WorkloadKind kind;
  Verdict verdict;
  size_t children;
  const char* cap_text;
};

class EveryKind : public ::testing::TestWithParam<KindCase> {};

TEST_P(EveryKind, ClassifiesGroupsAndJudges) {
  const KindCase& c = GetParam();
  auto ws = ClassifyFixture(std::string("workloads/") + c.fixture);
  ASSERT_EQ(ws.size(), 1u) << c.fixture;
  const Workload& w = ws[0];
  EXPECT_EQ(w.main.pid, c.pid);
  EXPECT_EQ(w.kind, c.kind) << KindName(w.kind);
  EXPECT_EQ(w.verdict, c.verdict) << VerdictName(w.verdict) << ": " << w.reason;
  EXPECT_EQ(w.children.size(), c.children);
  EXPECT_EQ(w.cap.text, c.cap_text);
  EXPECT_FALSE(w.reason.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, EveryKind,
    ::testing::Values(
        KindCase{"vllm-default", 3101, WorkloadKind::kVllm, Verdict::kNearCapacity, 1, "default 0.92"},
        KindCase{"vllm-kv-bytes", 3201, WorkloadKind::kVllm, Verdict::kCapped, 0,
                 "KV 16.0 GiB (--kv-cache-memory-bytes)"},
        KindCase{"sglang", 3301, WorkloadKind::kSglang, Verdict::kNearCapacity, 1, "0.80 (--mem-fraction-static)"},
        KindCase{"ollama-loaded", 1201, WorkloadKind::kOllama, Verdict::kUncapped, 1, "none (sized by loaded models)"},
        KindCase{"llama-cpp", 3501, WorkloadKind::kLlamaCpp, Verdict::kCapped, 0, "fixed (-c 16384)"},
        KindCase{"tgi", 3601, WorkloadKind::kTgi, Verdict::kCapped, 1, "0.45 (--cuda-memory-fraction)"},
        KindCase{"torchrun", 4101, WorkloadKind::kTorchrun, Verdict::kUncapped, 1, "none"},
        KindCase{"accelerate-axolotl", 4201, WorkloadKind::kAccelerate, Verdict::kUncapped, 1, "none"},
        KindCase{"deepspeed", 4301, WorkloadKind::kDeepspeed, Verdict::kUncapped, 2, "none"},
        KindCase{"trl", 4401, WorkloadKind::kTrl, Verdict::kUncapped, 0, "none"},
        KindCase{"torchtune", 4501, WorkloadKind::kTorchtune, Verdict::kUncapped, 0, "none"},
        KindCase{"llamafactory", 4601, WorkloadKind::kLlamaFactory, Verdict::kUncapped, 0, "none"},
        KindCase{"unsloth", 4701, WorkloadKind::kUnsloth, Verdict::kUncapped, 0, "none"},
        KindCase{"python-gpu", 4801, WorkloadKind::kPython, Verdict::kUncapped, 0, "none"},
        KindCase{"edge", 5001, WorkloadKind::kVllm, Verdict::kCapped, 0, "0.35 (--gpu-memory-utilization)"}));

TEST(Classify, Gb10FixtureIsTheSeedsSafeExample) {
  auto ws = ClassifyFixture("gb10");
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].kind, WorkloadKind::kOllama);
  EXPECT_EQ(ws[0].verdict, Verdict::kIdle);
  EXPECT_EQ(ws[1].kind, WorkloadKind::kVllm);
  EXPECT_EQ(ws[1].verdict, Verdict::kCapped);
  EXPECT_EQ(ws[1].model, "Qwen/Qwen2.5-7B-Instruct");
  ASSERT_EQ(ws[1].children.size(), 1u);
  EXPECT_EQ(ws[1].children[0].pid, 2160u);
}

TEST(Classify, RanksAreNamedAndAllocatorConfIsANoteNotACap) {
  auto ws = ClassifyFixture("workloads/torchrun");
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].children[0].role, "rank 0");
  EXPECT_EQ(ws[0].detail, "train.py");
  bool noted = false;
  for (const auto& n : ws[0].notes)
    noted |= n.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_EQ(ws[0].verdict, Verdict::kUncapped);
}

TEST(Classify, PlainPythonOnlyWhenHoldingGpuMemory) {
  HostFs fs(Fixture("workloads/python-gpu"));
  auto procs = ReadProcessTable(fs);
  ASSERT_TRUE(procs);
  for (auto& p : *procs) p.nvidia_fd = false;  // no fd evidence: only NVML decides
  EXPECT_TRUE(ClassifyProcesses(*procs, {}, kMemTotal).empty());
  auto ws = ClassifyProcesses(*procs, {{4850, 3 * kGiB}}, kMemTotal);
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].main.pid, 4850u);
  EXPECT_EQ(ws[0].kind, WorkloadKind::kPython);
  EXPECT_EQ(ws[0].TotalGpuBytes(), 3 * kGiB);
}

TEST(Classify, InjectedGpuMemorySumsOverTheGroupAndListedWithoutFigureIsAbsent) {
  auto ws = ClassifyFixture("workloads/vllm-default", {{3101, std::nullopt}, {3140, 60 * kGiB}});
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_TRUE(ws[0].main.gpu_listed);
  EXPECT_FALSE(ws[0].main.gpu_bytes);
  EXPECT_EQ(ws[0].TotalGpuBytes(), 60 * kGiB);
  EXPECT_EQ(ws[0].PoolBytes(), 60 * kGiB);
  EXPECT_EQ(ws[0].TotalRssBytes(), 103 * kGiB);
  auto none = ClassifyFixture("workloads/vllm-default");
  EXPECT_FALSE(none[0].TotalGpuBytes());
  EXPECT_EQ(none[0].PoolBytes(), 103 * kGiB);  // falls back to RSS
}

TEST(Classify, LlamaCppFixedSizeJudgedByWhatItHolds) {
  auto small = ClassifyFixture("workloads/llama-cpp", {{3501, 20 * kGiB}});
  EXPECT_EQ(small[0].verdict, Verdict::kCapped);
  EXPECT_EQ(small[0].cap.bytes, 20 * kGiB);
  auto big = ClassifyFixture("workloads/llama-cpp", {{3501, 90 * kGiB}});
  EXPECT_EQ(big[0].verdict, Verdict::kNearCapacity);
}

ProcessInfo Proc(uint32_t pid, uint32_t ppid, std::vector<std::string> argv,
                 std::map<std::string, std::string> env = {}) {
  ProcessInfo p;
  p.pid = pid;
  p.ppid = ppid;
  p.argv = std::move(argv);
  p.env = std::move(env);
  p.env_readable = true;
  p.name = std::string(BaseName(p.argv.empty() ? "" : p.argv[0])).substr(0, 15);
  p.rss_bytes = kGiB;
  return p;
}

Workload One(std::vector<ProcessInfo> procs, std::optional<uint64_t> total = kMemTotal) {
  auto ws = ClassifyProcesses(procs, {}, total);
  EXPECT_EQ(ws.size(), 1u);
  return ws.empty() ? Workload{} : ws[0];
}

TEST(Caps, VllmFractionBoundaryAtExactlyHalf) {
  EXPECT_EQ(One({Proc(10, 1, {"vllm", "serve", "m", "--gpu-memory-utilization", "0.5"})}).verdict, Verdict::kCapped);
  EXPECT_EQ(One({Proc(10, 1, {"vllm", "serve", "m", "--gpu-memory-utilization=0.51"})}).verdict,
            Verdict::kNearCapacity);
  EXPECT_EQ(One({Proc(10, 1, {"vllm", "serve", "m", "--gpu_memory_utilization", "0.35"})}).verdict, Verdict::kCapped);
  auto w = One({Proc(10, 1, {"vllm", "serve", "m", "--gpu-memory-utilization", "0.5"})});
  EXPECT_EQ(w.cap.bytes, static_cast<uint64_t>(0.5 * static_cast<double>(kMemTotal)));
  // A bad value is ignored (noted) and the default applies.
  auto bad = One({Proc(10, 1, {"vllm", "serve", "m", "--gpu-memory-utilization", "1.5"})});
  EXPECT_EQ(bad.verdict, Verdict::kNearCapacity);
  EXPECT_TRUE(bad.cap.is_default);
}

TEST(Caps, KvBytesOverridesFractionAndByteBoundaryIsHalfOfMemTotal) {
  auto half = One({Proc(10, 1,
                        {"vllm", "serve", "m", "--kv-cache-memory-bytes", std::to_string(kMemTotal / 2),
                         "--gpu-memory-utilization", "0.95"})});
  EXPECT_EQ(half.verdict, Verdict::kCapped);
  EXPECT_FALSE(half.cap.fraction);
  bool ignored = false;
  for (const auto& n : half.notes) ignored |= n.find("0.95 is ignored") != std::string::npos;
  EXPECT_TRUE(ignored);
  auto over = One({Proc(10, 1, {"vllm", "serve", "m", "--kv-cache-memory-bytes", std::to_string(kMemTotal / 2 + 1)})});
  EXPECT_EQ(over.verdict, Verdict::kNearCapacity);
  auto unknown_total = One({Proc(10, 1, {"vllm", "serve", "m", "--kv-cache-memory-bytes", "1024"})}, std::nullopt);
  EXPECT_EQ(unknown_total.verdict, Verdict::kNearCapacity);
  auto suffix = One({Proc(10, 1, {"vllm", "serve", "m", "--kv-cache-memory-bytes", "16GiB"})});
  EXPECT_EQ(suffix.cap.bytes, 16 * kGiB);
}

TEST(Caps, SglangTgiDefaultsAndEnv) {
  auto sg = One({Proc(10, 1, {"python3", "-m", "sglang.launch_server", "--model-path", "m"})});
  EXPECT_EQ(sg.verdict, Verdict::kNearCapacity);
  EXPECT_TRUE(sg.cap.is_default);
  auto sg5 = One({Proc(10, 1, {"python3", "-m", "sglang.launch_server", "--mem-fraction-static", "0.5"})});
  EXPECT_EQ(sg5.verdict, Verdict::kCapped);
  auto tgi = One({Proc(10, 1, {"text-generation-launcher", "--model-id", "m"})});
  EXPECT_EQ(tgi.verdict, Verdict::kNearCapacity);
  EXPECT_EQ(tgi.cap.fraction, 1.0);
  auto tgi_env = One({Proc(10, 1, {"text-generation-launcher"}, {{"CUDA_MEMORY_FRACTION", "0.4"}})});
  EXPECT_EQ(tgi_env.verdict, Verdict::kCapped);
  EXPECT_NE(tgi_env.cap.text.find("CUDA_MEMORY_FRACTION"), std::string::npos);
}

TEST(Caps, OllamaIdleLoadedLegacyRunnerAndKeepAlive) {
  auto idle = One({Proc(10, 1, {"/usr/local/bin/ollama", "serve"})});
  EXPECT_EQ(idle.verdict, Verdict::kIdle);
  auto legacy = One({Proc(10, 1, {"/usr/local/bin/ollama", "serve"}, {{"OLLAMA_KEEP_ALIVE", "-1"}}),
                     Proc(11, 10,
                          {"/tmp/ollama123/runners/cuda_v12/ollama_llama_server", "--model", "/m.gguf",
                           "--n-gpu-layers", "33", "--parallel", "4", "--port", "1"})});
  EXPECT_EQ(legacy.verdict, Verdict::kUncapped);
  ASSERT_EQ(legacy.children.size(), 1u);
  EXPECT_EQ(legacy.children[0].role, "runner");
  bool resident = false;
  for (const auto& n : legacy.notes) resident |= n.find("resident until the server stops") != std::string::npos;
  EXPECT_TRUE(resident);
}

TEST(Caps, LlamaCppWithoutFixedContextIsUncapped) {
  EXPECT_EQ(One({Proc(10, 1, {"llama-server", "-m", "x.gguf", "-c", "0"})}).verdict, Verdict::kUncapped);
  EXPECT_EQ(One({Proc(10, 1, {"llama-server", "-m", "x.gguf"})}).verdict, Verdict::kUncapped);
  auto env = One({Proc(10, 1, {"llama-server", "-m", "x.gguf"}, {{"LLAMA_ARG_CTX_SIZE", "4096"}})});
  EXPECT_EQ(env.cap.text, "fixed (-c 4096)");
}

TEST(Classify, LauncherNamesTheFrameworkAndChildrenFollowParentsWithHigherPids) {
  // The parent has a higher pid than its child (pid reuse): grouping must not depend on order.
  auto w = One({Proc(20, 900, {"python3", "-m", "axolotl.cli.train", "cfg.yml"}, {{"RANK", "0"}}),
                Proc(900, 1, {"accelerate", "launch", "--num_processes", "1", "-m", "axolotl.cli.train", "cfg.yml"})});
  EXPECT_EQ(w.kind, WorkloadKind::kAccelerate);
  EXPECT_EQ(w.main.pid, 900u);
  ASSERT_EQ(w.children.size(), 1u);
  EXPECT_EQ(w.children[0].role, "rank 0");
  EXPECT_EQ(w.detail, "-m axolotl.cli.train");
}

TEST(Classify, ParentCycleDoesNotHang) {
  auto ws = ClassifyProcesses({Proc(30, 31, {"vllm", "serve", "m"}), Proc(31, 30, {"python3", "x.py"})}, {}, kMemTotal);
  EXPECT_FALSE(ws.empty());
}

TEST(Classify, OtherGpuProcessesCountFromOneGiB) {
  std::vector<ProcessInfo> procs{Proc(40, 1, {"/opt/app/render"}), Proc(41, 1, {"/opt/app/small"})};
  auto ws = ClassifyProcesses(procs, {{40, kGiB}, {41, kGiB - 1}}, kMemTotal);
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].main.pid, 40u);
  EXPECT_EQ(ws[0].kind, WorkloadKind::kOtherGpu);
  EXPECT_EQ(ws[0].verdict, Verdict::kUncapped);
  EXPECT_EQ(ws[0].cap.text, "unknown");
  EXPECT_TRUE(ClassifyProcesses(procs, {{40, std::nullopt}}, kMemTotal).empty());  // listed, no figure
}

TEST(Classify, RankEnvironmentIsKeptForTheLauncher) {
  auto w = One({Proc(50, 1, {"accelerate", "launch", "train.py"}),
                Proc(51, 50, {"python3", "train.py"}, {{"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "1"}})});
  EXPECT_EQ(w.rank_env.at("WORLD_SIZE"), "2");
}

TEST(Classify, NonMlProcessesAreIgnored) {
  EXPECT_TRUE(ClassifyProcesses({Proc(5, 1, {"sshd"}), Proc(6, 1, {"python3", "-m", "http.server"}),
                                 Proc(7, 1, {"vllm", "bench", "latency"}), Proc(8, 2, {})},
                                {}, kMemTotal)
                  .empty());
}

TEST(Argv, FlagValueForms) {
  std::vector<std::string> a{"x", "--gpu_memory_utilization=0.4", "-c", "8192", "--flag"};
  EXPECT_EQ(FlagValue(a, {"--gpu-memory-utilization"}), "0.4");
  EXPECT_EQ(FlagValue(a, {"-c"}), "8192");
  EXPECT_EQ(FlagValue(a, {"--flag"}), "");
  EXPECT_FALSE(FlagValue(a, {"--absent"}));
  EXPECT_TRUE(HasFlag(a, {"--flag"}));
  EXPECT_EQ(KeyValueArg({"tune", "run", "tensor_parallel_dim=2"}, "tensor_parallel_dim"), "2");
  EXPECT_EQ(ParseByteSize("17179869184"), 17179869184ull);
  EXPECT_EQ(ParseByteSize("512MiB"), 512ull << 20);
  EXPECT_EQ(ParseByteSize("2GB"), 2000000000ull);
  EXPECT_FALSE(ParseByteSize("lots"));
  Launch l = ParseLaunch({"/venv/bin/python3", "-u", "-X", "dev", "-m", "vllm.entrypoints.openai.api_server"});
  EXPECT_EQ(l.module, "vllm.entrypoints.openai.api_server");
  EXPECT_TRUE(l.python);
  Launch s = ParseLaunch({"python3", "/venv/bin/torchrun", "--nnodes", "2"});
  EXPECT_EQ(s.program, "torchrun");
  EXPECT_EQ(s.next, 2u);
}

}  // namespace
}  // namespace sparkops
