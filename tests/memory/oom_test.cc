#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/oom_signature.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::RunInProcess;

// Message texts as PyTorch, the CUDA runtime, the NVIDIA driver and the kernel print them
// (docs/analyze.md).
const char kTorchOom[] =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 19.68 GiB. GPU 0 has a total capacity of 23.68 "
    "GiB of which 11.88 GiB is free. Including non-PyTorch memory, this process has 11.79 GiB memory in use. Of the "
    "allocated memory 11.44 GiB is allocated by PyTorch, and 43.59 MiB is reserved by PyTorch but unallocated.";

TEST(OomSignature, TorchMessageNumbers) {
  auto s = ParseOomSignature(kTorchOom);
  EXPECT_EQ(s.kind, OomKind::kTorchCuda);
  EXPECT_DOUBLE_EQ(*s.tried_gib, 19.68);
  EXPECT_DOUBLE_EQ(*s.total_gib, 23.68);
  EXPECT_DOUBLE_EQ(*s.free_gib, 11.88);
  EXPECT_DOUBLE_EQ(*s.process_in_use_gib, 11.79);
  EXPECT_DOUBLE_EQ(*s.allocated_by_torch_gib, 11.44);
  EXPECT_NEAR(*s.reserved_unallocated_gib, 43.59 / 1024, 1e-9);
  EXPECT_EQ(s.phase, OomPhase::kUnknown);  // no traceback, no step line
}

TEST(OomSignature, Table) {
  struct Case {
    const char* name;
    std::string log;
    OomKind kind;
    OomPhase phase;
  } cases[] = {
      {"older text",
       "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; "
       "20.1 GiB already allocated; 1.2 GiB free; 21.0 GiB reserved in total by PyTorch)",
       OomKind::kTorchCuda, OomPhase::kUnknown},
      {"load",
       "Loading checkpoint shards:  40%\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
       "    model = AutoModelForCausalLM.from_pretrained(name)\n  File \"modeling_utils.py\", in "
       "_load_pretrained_model\n" +
           std::string(kTorchOom),
       OomKind::kTorchCuda, OomPhase::kLoad},
      {"qlora quantise",
       "Traceback (most recent call last):\n  File \"modeling_utils.py\", in from_pretrained\n"
       "  File \"bitsandbytes/nn/modules.py\", line 331, in _quantize\n"
       "  File \"bitsandbytes/functional.py\", line 1234, in quantize_4bit\n" +
           std::string(kTorchOom),
       OomKind::kTorchCuda, OomPhase::kDequant},
      {"step after tqdm",
       " 12%|#         | 120/1000 [02:11<16:03,  1.09s/it]\n{'loss': 1.234, 'learning_rate': 2e-05}\n"
       "Traceback (most recent call last):\n  File \"trainer.py\", in training_step\n"
       "    self.accelerator.backward(loss)\n" +
           std::string(kTorchOom),
       OomKind::kTorchCuda, OomPhase::kStep},
      {"kernel killer",
       "[12345.6] python invoked oom-killer: gfp_mask=0x140cca\n[12345.7] Out of memory: Killed process 4567 "
       "(python) total-vm:123456789kB, anon-rss:98765432kB, file-rss:0kB",
       OomKind::kKernelOomKiller, OomPhase::kUnknown},
      {"nvrm",
       "NVRM: nvAssertFailed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from _memdescAllocInternal",
       OomKind::kNvrmNoMemory, OomPhase::kUnknown},
      {"cuda runtime", "step 40 loss 1.2\nRuntimeError: CUDA error: out of memory", OomKind::kCudaRuntime,
       OomPhase::kStep},
      {"sigkill", "step 12 loss 2.1\nKilled", OomKind::kKilled, OomPhase::kStep},
      {"clean", "step 1 loss 2.0\nstep 2 loss 1.9\ndone", OomKind::kNone, OomPhase::kUnknown},
      {"garbled figures",
       "OutOfMemoryError: CUDA out of memory. Tried to allocate . GiB. total capacity of 1.2.3 GiB\n"
       "Out of memory: Killed process 99999999999999999999999 (x) anon-rss:1kB",
       OomKind::kTorchCuda, OomPhase::kUnknown},
  };
  for (const auto& c : cases) {
    auto s = ParseOomSignature(c.log);
    EXPECT_EQ(s.kind, c.kind) << c.name;
    EXPECT_EQ(s.phase, c.phase) << c.name << ": " << ToString(s.phase);
  }
  auto garbled = ParseOomSignature(cases[9].log);
  EXPECT_FALSE(garbled.tried_gib);  // "." is not a figure: absent, not 0, and no exception
  EXPECT_FALSE(garbled.total_gib);
  auto k = ParseOomSignature(cases[4].log);
  EXPECT_EQ(*k.killed_pid, 4567);
  EXPECT_EQ(*k.killed_name, "python");
  EXPECT_NEAR(*k.killed_anon_rss_gib, 98765432.0 / 1048576, 1e-6);
}

// The matchers are hand-written (they were std::regex: 57 exec/s in the fuzz target); these pin
// the regexes' behaviour at their edges. ECMAScript '.' stops at '\r', \s includes '\v', \b and
// greedy repetition as libstdc++ implements them.
TEST(OomSignature, MatcherEdgesKeepTheRegexMeaning) {
  auto kind = [](std::string_view log) { return ParseOomSignature(log).kind; };
  // NVRM: .*NV_ERR_NO_MEMORY
  EXPECT_EQ(kind("NVRM: x NV_ERR_NO_MEMORY"), OomKind::kNvrmNoMemory);
  EXPECT_EQ(kind("NVRM: NV_ERR_NO_MEMORY"), OomKind::kNvrmNoMemory);
  EXPECT_EQ(kind("NV_ERR_NO_MEMORY NVRM: x"), OomKind::kNone);
  EXPECT_EQ(kind("NVRM: x\rNV_ERR_NO_MEMORY"), OomKind::kNone);  // '.' does not cross '\r'
  EXPECT_EQ(kind("NVRM: x\rNVRM: NV_ERR_NO_MEMORY"), OomKind::kNvrmNoMemory);
  // [Oo]ut of memory: Killed process (\d+) \(([^)]+)\)(?:.*anon-rss:(\d+)kB)?
  auto k = ParseOomSignature("Memory cgroup out of memory: Killed process 12 (py\rthon) anon-rss:5kB x anon-rss:7kB");
  EXPECT_EQ(k.kind, OomKind::kKernelOomKiller);
  EXPECT_EQ(*k.killed_pid, 12);
  EXPECT_EQ(*k.killed_name, "py\rthon");  // [^)] takes '\r'
  EXPECT_NEAR(*k.killed_anon_rss_gib, 7.0 / 1048576, 1e-12);  // greedy '.*': the last one
  k = ParseOomSignature("Out of memory: Killed process 3 (a) anon-rss:5kB\r anon-rss:9kB anon-rss:x");
  EXPECT_NEAR(*k.killed_anon_rss_gib, 5.0 / 1048576, 1e-12);  // not past '\r'
  k = ParseOomSignature("Out of memory: Killed process 3 (a) anon-rss:kB");
  EXPECT_EQ(*k.killed_name, "a");
  EXPECT_FALSE(k.killed_anon_rss_gib);
  EXPECT_EQ(kind("Out of memory: Killed process 3 ()"), OomKind::kNone);
  EXPECT_EQ(kind("Out of memory: Killed process 3 (a"), OomKind::kNone);
  EXPECT_EQ(kind("Out of memory: Killed process x (a)"), OomKind::kNone);
  k = ParseOomSignature("Out of memory: Killed process x (a) out of memory: Killed process 8 (b)");
  EXPECT_EQ(*k.killed_pid, 8);  // the first occurrence that matches
  // ^\s*Killed\s*$|exit (status|code) 137|exitcode\s*:?\s*-9\b
  EXPECT_EQ(kind(" \t\vKilled \r"), OomKind::kKilled);
  EXPECT_EQ(kind("Killed."), OomKind::kNone);
  EXPECT_EQ(kind("x Killed"), OomKind::kNone);
  EXPECT_EQ(kind("exit code 1370"), OomKind::kKilled);  // no \b after 137 in the pattern
  EXPECT_EQ(kind("exitcode : -9"), OomKind::kKilled);
  EXPECT_EQ(kind("exitcode:-9, signal"), OomKind::kKilled);
  EXPECT_EQ(kind("exitcode -90"), OomKind::kNone);
  EXPECT_EQ(kind("exitcode -9_"), OomKind::kNone);
  EXPECT_EQ(kind("exitcode :: -9"), OomKind::kNone);
  // Step lines before the OOM: \d+/\d+ \[\d+:\d+ | 'loss': | "loss": | \b[Ss]tep[ =:]+\d+ | \biter \d+
  auto phase = [](std::string before) { return ParseOomSignature(before + "\nKilled").phase; };
  for (const char* step : {" 3/10 [00:01<", "{'loss': 1}", R"({"loss": 1})", "Step: 5", "step=5", "iter 7", "(iter 7)"})
    EXPECT_EQ(phase(step), OomPhase::kStep) << step;
  for (const char* other : {"3/10 [:01", "3/ [00:01", "/10 [00:01", "3/10 [00:", "xstep 5", "step x5", "step5",
                            "literate 7", "iter x", "'loss' :"})
    EXPECT_EQ(phase(other), OomPhase::kUnknown) << other;
  // Figures: the leftmost match; a number is the whole run of [\d.] before its unit.
  auto f = ParseOomSignature(
      "CUDA out of memory. Tried to allocate 1.5 KiB; v1.2 MiB is allocated by PyTorch, "
      "3 GiB is allocated by PyTorch; 2 MiB total capac; 4 KiB free; 5 GiB free;");
  EXPECT_NEAR(*f.tried_gib, 1.5 / 1048576, 1e-15);
  EXPECT_NEAR(*f.allocated_by_torch_gib, 1.2 / 1024, 1e-12);
  EXPECT_NEAR(*f.total_gib, 2.0 / 1024, 1e-12);
  EXPECT_NEAR(*f.free_gib, 4.0 / 1048576, 1e-15);
  EXPECT_FALSE(f.process_in_use_gib);
  f = ParseOomSignature(
      "CUDA out of memory. Tried to allocate 2 TiB. total capacity of 8 KiB, of which 1 GiB  is free");
  EXPECT_FALSE(f.tried_gib);
  EXPECT_FALSE(f.total_gib);  // KiB is not among total's units
  EXPECT_FALSE(f.free_gib);
}

TEST(Oom, WithoutModelGivesStepOneWithPageCacheAndTheOrder) {
  auto r = RunInProcess({"oom", "--root", Fixture("gb10")});
  EXPECT_EQ(r.rc, 0);
  // gb10 fixture: Cached 54839112 + Buffers 412344 - Shmem (fixture) kB.
  EXPECT_NE(r.out.find("-> 1. flush the page cache"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sparkops flush"), std::string::npos);
  EXPECT_LT(r.out.find("2. shorter packing"), r.out.find("3. downgrade"));
  EXPECT_LT(r.out.find("3. downgrade"), r.out.find("4. smaller model"));
  EXPECT_NE(r.out.find("never tensor parallelism"), std::string::npos);
}

TEST(Oom, QloraLoadOomPointsToBf16LoraWhenItFits) {
  testing::TempDir d;
  std::string log = d.Write("train.log",
                            "Traceback (most recent call last):\n  File \"x.py\", in from_pretrained\n"
                            "  File \"bitsandbytes/functional.py\", in quantize_4bit\n" +
                                std::string(kTorchOom) + "\n");
  auto r = RunInProcess({"--json", "oom", "llama-3.2-3b", "--method", "qlora", "--log", log, "--root",
                         Fixture("memory/lowcache"), "--framework-version", "4.57.1", "--kbit-prep",
                         "off"});  // inputs known: the ladder's logic is under test
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["next_step"], 3);
  EXPECT_EQ(j["oom"]["phase"], "dequantisation");
  EXPECT_NE(j["why"].get<std::string>().find("not proof"), std::string::npos);
  EXPECT_LT(j["page_cache_gib"].get<double>(), 1.0);
}

TEST(Oom, StepOomThatDoesNotFitShrinksPackFirst) {
  auto r = RunInProcess({"--json", "oom", "llama-3.1-8b", "--method", "full", "--seq", "2048", "--root",
                         Fixture("memory/lowcache"), "--framework-version", "4.57.1", "--kbit-prep", "off"});
  ASSERT_EQ(r.rc, 0) << r.err;  // oom exits 0 whatever it finds
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["verdict"], "no-fit");
  // Full FT of 8B needs ~60 GiB of states; the 16.5 GiB budget cannot hold it at any pack length,
  // but QLoRA at seq 2048 does.
  EXPECT_EQ(j["next_step"], 3);
  auto huge = nlohmann::json::parse(
      RunInProcess({"--json", "oom", "llama-3.3-70b", "--method", "qlora", "--root", Fixture("memory/lowcache")}).out);
  EXPECT_EQ(huge["next_step"], 4);  // nothing on the ladder fits 70B in 16.5 GiB
  auto lora = RunInProcess({"--json", "oom", "llama-3.2-1b", "--seq", "65536", "--root", Fixture("memory/lowcache")});
  auto jl = nlohmann::json::parse(lora.out);
  EXPECT_EQ(jl["next_step"], 2);
  EXPECT_NE(jl["steps"][1]["detail"].get<std::string>().find("pack length 65536 -> "), std::string::npos);
}

TEST(Oom, InvalidUtf8InTheLogStillGivesJson) {
  testing::TempDir d;
  std::string log = d.Write("bad.log", std::string("step 3 \xff\xfe\nRuntimeError: CUDA error: out of memory \xc3\n"));
  auto r = RunInProcess({"--json", "oom", "--log", log});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["oom"]["kind"], "cuda_runtime_oom");
  EXPECT_EQ(j["oom"]["phase"], "step");
}

TEST(Oom, BadLogOrOptionIsExit2) {
  EXPECT_EQ(RunInProcess({"oom", "--log", "/no/such/train.log"}).rc, 2);
  EXPECT_EQ(RunInProcess({"oom", "--seq", "0"}).rc, 2);
  EXPECT_EQ(RunInProcess({"oom", "nosuchmodel"}).rc, 2);
}

}  // namespace
}  // namespace sparkops
