// ReadGpuSnapshot through the stub NVML (GB10, discrete, old driver, not-NVML, init failing, GPU lost)
// and through the nvidia-smi fallback; G3's GPU memory and G4 through preflight.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <sstream>

#include "cli/context.h"
#include "host/gpu.h"
#include "host/nvml.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::Fixture;
using testing::RunInProcess;

std::string Fake(const std::string& name) { return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/fake/" + name; }
std::string Stub() { return BuildArtifact("libnvidia-ml-stub.so"); }

using testing::ScopedEnv;

struct Ctx {
  std::ostringstream out, err;
  Context ctx;
  Ctx(const std::string& nvml, const std::string& smi)
      : ctx{{"/", nvml, smi, false}, HostFs(Fixture("gb10")), {}, out, err} {}
};

TEST(GpuSnapshot, StubGb10) {
  Ctx c(Stub(), "none");
  GpuSnapshot s = ReadGpuSnapshot(c.ctx);
  ASSERT_TRUE(s.any()) << s.why_none;
  EXPECT_EQ(s.source, "nvml");
  const GpuReading& g = s.gpus.front();
  EXPECT_EQ(g.name, "NVIDIA GB10");
  EXPECT_EQ(g.cc_major, 12);
  EXPECT_EQ(g.cc_minor, 1);
  EXPECT_EQ(g.cuda_driver_version, 13000);
  EXPECT_EQ(g.driver_version, "580.95.05");
  EXPECT_TRUE(g.unified_memory);
  EXPECT_FALSE(g.mem_total_bytes);  // NOT_SUPPORTED is absent, never 0
  EXPECT_FALSE(g.power_limit_w);
  EXPECT_EQ(g.power_w, 4.5);
  EXPECT_EQ(g.temp_c, 41.0);
  EXPECT_EQ(g.sm_clock_max_mhz, 3003u);
  EXPECT_EQ(g.clock_event_reasons, 0x1u);
  EXPECT_EQ(g.energy_mj, 1000000u);
  ASSERT_TRUE(g.processes_known);
  ASSERT_EQ(g.processes.size(), 1u);
  EXPECT_EQ(g.processes[0].pid, 4242u);
  EXPECT_EQ(g.processes[0].used_bytes, 12ull << 30);
}

TEST(GpuSnapshot, StubDiscrete) {
  ScopedEnv mode("SPARKOPS_STUB_NVML_MODE", "discrete");
  Ctx c(Stub(), "none");
  GpuSnapshot s = ReadGpuSnapshot(c.ctx);
  ASSERT_TRUE(s.any()) << s.why_none;
  const GpuReading& g = s.gpus.front();
  EXPECT_FALSE(g.unified_memory);
  EXPECT_EQ(g.mem_total_bytes, 25757220864ull);
  EXPECT_EQ(g.mem_used_bytes, 6442450944ull);
  EXPECT_EQ(g.power_limit_w, 450.0);
  EXPECT_EQ(g.cc_major, 8);
}

TEST(GpuSnapshot, OldDriverUsesLegacySymbols) {
  Ctx c(BuildArtifact("libnvidia-ml-stub-min.so"), "none");
  GpuSnapshot s = ReadGpuSnapshot(c.ctx);
  ASSERT_TRUE(s.any()) << s.why_none;
  const GpuReading& g = s.gpus.front();
  EXPECT_EQ(g.temp_c, 41.0);                  // nvmlDeviceGetTemperature (no TemperatureV)
  EXPECT_EQ(g.clock_event_reasons, 0x1u);     // ...ClocksThrottleReasons
  ASSERT_EQ(g.processes.size(), 1u);          // v1 16-byte process records
  EXPECT_EQ(g.processes[0].used_bytes, 12ull << 30);
  EXPECT_FALSE(g.power_w);                    // symbol missing: absent
  EXPECT_TRUE(g.name.empty());
  EXPECT_FALSE(g.unified_memory);             // a missing memory symbol says nothing about the GPU
}

TEST(GpuSnapshot, NoNvmlReasons) {
  {
    Ctx c(BuildArtifact("libnvidia-ml-empty.so"), "none");
    GpuSnapshot s = ReadGpuSnapshot(c.ctx);
    EXPECT_FALSE(s.any());
    EXPECT_NE(s.why_none.find("no NVML: "), std::string::npos);
    EXPECT_NE(s.why_none.find("lacks nvmlInit_v2"), std::string::npos) << s.why_none;
  }
  {
    Ctx c("/nonexistent/libnvidia-ml.so.1", "none");
    GpuSnapshot s = ReadGpuSnapshot(c.ctx);
    EXPECT_EQ(s.source, "none");
    EXPECT_NE(s.why_none.find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos) << s.why_none;
    EXPECT_NE(s.why_none.find("nvidia-smi disabled"), std::string::npos);
  }
  {
    ScopedEnv mode("SPARKOPS_STUB_NVML_MODE", "init_fail");
    Ctx c(Stub(), "none");
    GpuSnapshot s = ReadGpuSnapshot(c.ctx);
    EXPECT_FALSE(s.any());
    EXPECT_NE(s.why_none.find("nvmlInit failed: DRIVER_NOT_LOADED (9): Driver Not Loaded"), std::string::npos)
        << s.why_none;
  }
}

TEST(GpuSnapshot, NvidiaSmiFallbackWhenNoNvml) {
  Ctx c("none", Fake("nvidia-smi-gb10"));
  GpuSnapshot s = ReadGpuSnapshot(c.ctx);
  ASSERT_TRUE(s.any()) << s.why_none;
  EXPECT_EQ(s.source, "nvidia-smi");
  EXPECT_EQ(s.gpus[0].temp_c, 38.0);
  EXPECT_TRUE(s.gpus[0].unified_memory);
  EXPECT_FALSE(s.gpus[0].power_limit_w);
  Ctx bad("none", Fake("nvidia-smi-garbage"));
  GpuSnapshot g = ReadGpuSnapshot(bad.ctx);
  EXPECT_FALSE(g.any());
  EXPECT_NE(g.why_none.find("nvidia-smi output line 1"), std::string::npos) << g.why_none;
}

TEST(GpuSnapshot, NvidiaSmiFillsOnlyWhatNvmlLacksAndIsProbedOnce) {
  testing::TempDir dir;
  std::string log = dir.path() + "/smi.log";
  ScopedEnv smi_log("SPARKOPS_FAKE_SMI_LOG", log);
  ScopedEnv mode("SPARKOPS_STUB_NVML_MODE", "discrete");
  // Old-driver NVML lacks power, name, max clock: nvidia-smi fills those; NVML's values win elsewhere.
  Ctx c(BuildArtifact("libnvidia-ml-stub-min.so"), Fake("nvidia-smi-gb10"));
  GpuReader reader(c.ctx);
  GpuSnapshot s = reader.Read();
  ASSERT_TRUE(s.any()) << s.why_none;
  EXPECT_EQ(s.source, "nvml+nvidia-smi");
  EXPECT_EQ(s.gpus[0].temp_c, 52.0);   // NVML (discrete stub), not nvidia-smi's 38
  EXPECT_EQ(s.gpus[0].power_w, 4.0);   // from nvidia-smi
  EXPECT_EQ(s.gpus[0].sm_clock_max_mhz, 3003u);
  reader.Read();
  EXPECT_EQ(testing::ReadFileOrDie(log).size() > 0, true);
  // GB10 (full stub) lacks only the power limit, which nvidia-smi cannot give there either: not run.
  unsetenv("SPARKOPS_STUB_NVML_MODE");
  std::string log2 = dir.path() + "/smi2.log";
  ScopedEnv smi_log2("SPARKOPS_FAKE_SMI_LOG", log2);
  {
    Ctx full(Stub(), Fake("nvidia-smi-gb10"));
    GpuReader r2(full.ctx);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(r2.Read().source, "nvml");
    EXPECT_FALSE(ReadLocalFile(log2));  // never called
  }
  // A discrete card without a power limit: nvidia-smi is asked on the first read, adds nothing,
  // and is not asked again.
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", dir.Write("s.txt", "mode discrete\nstep limit=none\n"));
  Ctx d(Stub(), Fake("nvidia-smi-gb10"));
  GpuReader r3(d.ctx);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(r3.Read().gpus[0].power_limit_w);
  std::string calls = testing::ReadFileOrDie(log2);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), '\n'), 1) << calls;
}

TEST(GpuSnapshot, Gb10MemoryTotalThatIsTheSystemPoolIsUnified) {
  // The unverified counter-claim: SUCCESS with total ~ MemTotal (gb10 fixture: 127600748 kB).
  testing::TempDir dir;
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", dir.Write("s.txt", "step mem_total=130000000000 mem_used=9000000000\n"));
  Ctx c(Stub(), "none");
  GpuSnapshot s = ReadGpuSnapshot(c.ctx);
  ASSERT_TRUE(s.any());
  EXPECT_TRUE(s.gpus[0].unified_memory);
  EXPECT_FALSE(s.gpus[0].mem_total_bytes);
  // The same total on a discrete card is its own memory.
  ScopedEnv sc2("SPARKOPS_STUB_NVML_SCENARIO", dir.Write("d.txt", "mode discrete\nstep mem_total=130000000000\n"));
  Ctx d(Stub(), "none");
  GpuSnapshot ds = ReadGpuSnapshot(d.ctx);
  EXPECT_FALSE(ds.gpus[0].unified_memory);
  EXPECT_EQ(ds.gpus[0].mem_total_bytes, 130000000000ull);
}

TEST(GpuSnapshot, GpuLostMidRunBecomesAbsentWithReason) {
  testing::TempDir dir;
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", dir.Write("s.txt", "step temp=50\nstep temp=51\nstep lost=1\n"));
  Ctx c(Stub(), "none");
  GpuReader reader(c.ctx);
  EXPECT_EQ(reader.Read().gpus[0].temp_c, 50.0);
  EXPECT_EQ(reader.Read().gpus[0].temp_c, 51.0);
  for (int i = 0; i < 2; ++i) {
    GpuSnapshot s = reader.Read();
    ASSERT_TRUE(s.any());
    const GpuReading& g = s.gpus[0];
    EXPECT_NE(g.error.find("GPU_IS_LOST"), std::string::npos) << g.error;
    EXPECT_FALSE(g.temp_c);
    EXPECT_FALSE(g.power_w);
    EXPECT_TRUE(g.processes.empty());
    EXPECT_EQ(g.name, "NVIDIA GB10");  // identity is kept
  }
}

TEST(GpuSnapshot, UnknownReturnCodesArePrintedNumerically) {
  EXPECT_EQ(NvmlReturnName(3), "NOT_SUPPORTED (3)");
  EXPECT_EQ(NvmlReturnName(30), "error 30");
}

TEST(PreflightGpu, G3AndG4OnGb10) {
  auto r = RunInProcess(
      {"--root", Fixture("gb10"), "--nvml", Stub(), "--nvidia-smi", "none", "preflight", "--only", "G3,G4"});
  EXPECT_NE(r.out.find("GPU memory: not reported (unified memory), 12.0 GiB held by 1 GPU process"), std::string::npos)
      << r.out << r.err;
  EXPECT_NE(r.out.find("G4 INFO: NVIDIA GB10: 41 degC, power 4.5 W, power limit not reported, SM clock 208 of 3003 "
                       "MHz max, clock-event reasons 0x1 (gpu_idle), not throttling"),
            std::string::npos)
      << r.out;
}

TEST(PreflightGpu, G4ThrottlingAndDiscreteMemory) {
  testing::TempDir dir;
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO",
               dir.Write("s.txt", "mode discrete\nstep temp=88 power=300 sm=1900 reasons=0x60\n"));
  auto r = RunInProcess({"--root", Fixture("discrete"), "--nvml", Stub(), "--nvidia-smi", "none", "preflight", "--only",
                         "G3,G4", "--json"});
  EXPECT_NE(r.out.find("24.0 GiB device memory, 6.0 GiB used"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("power limit 450 W, SM clock 1900 of 2520 MHz max, clock-event reasons 0x60 (sw_thermal, "
                       "hw_thermal), THROTTLING: sw_thermal+hw_thermal"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("86-87 degC"), std::string::npos);
}

TEST(PreflightGpu, G4SkipsWithoutGpuAndSaysWhy) {
  auto r = RunInProcess({"--root", Fixture("laptop"), "preflight", "--only", "G3,G4"});
  EXPECT_NE(r.out.find("G4 SKIP no GPU readable: no NVML: disabled (--nvml none); nvidia-smi disabled"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPU memory: not reported (no GPU readable)"), std::string::npos);
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

TEST(GpuSnapshot, MissingNvidiaSmiIsNotRetriedEverySample) {
  Ctx c("none", "/nonexistent/nvidia-smi");
  GpuReader reader(c.ctx);
  for (int i = 0; i < 3; ++i) {
    GpuSnapshot s = reader.Read();
    EXPECT_FALSE(s.any());
    EXPECT_NE(s.why_none.find("nvidia-smi: "), std::string::npos) << s.why_none;  // the reason is kept
  }
}

TEST(GpuSnapshot, NoPermissionHandleIsAReasonNotACrash) {
  ScopedEnv np("SPARKOPS_STUB_NVML_NO_PERMISSION", "1");
  Ctx c(Stub(), "none");
  GpuSnapshot s = ReadGpuSnapshot(c.ctx);
  ASSERT_TRUE(s.any());
  EXPECT_EQ(s.gpus[0].error, "NVML gives no handle for this GPU: NO_PERMISSION (4)");
  EXPECT_FALSE(s.gpus[0].temp_c);
  auto r =
      RunInProcess({"--root", Fixture("gb10"), "--nvml", Stub(), "--nvidia-smi", "none", "preflight", "--only", "G4"});
  EXPECT_NE(r.out.find("G4 SKIP GPU 0 cannot be read: NVML gives no handle"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sparkops

#include "telemetry/sampler.h"

namespace sparkops {
namespace {

TEST(GpuSnapshot, ProcessMemoryNotAvailableIsAbsentAndNoPartialSum) {
  testing::TempDir dir;
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", dir.Write("s.txt", "step procs=4242:1073741824,4343:na\n"));
  Ctx c(Stub(), "none");
  GpuSnapshot s = ReadGpuSnapshot(c.ctx);
  ASSERT_EQ(s.gpus[0].processes.size(), 2u);
  EXPECT_EQ(s.gpus[0].processes[0].used_bytes, 1073741824u);
  EXPECT_FALSE(s.gpus[0].processes[1].used_bytes);
  EXPECT_FALSE(GpuAttributedBytes(s.gpus[0]));
  auto r =
      RunInProcess({"--root", Fixture("gb10"), "--nvml", Stub(), "--nvidia-smi", "none", "preflight", "--only", "G3"});
  EXPECT_NE(r.out.find("2 GPU processes (1 not reporting memory; 1.0 GiB held by the others)"), std::string::npos)
      << r.out;
  ScopedEnv none("SPARKOPS_STUB_NVML_SCENARIO", dir.Write("n.txt", "step procs=none\n"));
  Ctx c2(Stub(), "none");
  GpuSnapshot idle = ReadGpuSnapshot(c2.ctx);
  EXPECT_TRUE(idle.gpus[0].processes_known);
  EXPECT_EQ(GpuAttributedBytes(idle.gpus[0]), 0u);  // a real zero: nothing holds GPU memory
}

}  // namespace
}  // namespace sparkops
