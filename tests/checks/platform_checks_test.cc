// issue 33: G3's fragmentation and pinned memory, G4's PROCHOT on the line, G11 platform, against
// the wedge fixture (tests/fixtures/wedge/README.md) and the plain gb10 one.
#include <gtest/gtest.h>

#include "checks/check.h"
#include "checks/g11_platform.h"
#include "pyenv_world.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::Joined;
using testing::World;

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(G3, WedgeFixtureWarnsOnFragmentationAndPinnedMemory) {
  World w(Fixture("wedge"), {});
  auto r = CheckG3(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_TRUE(Has(r.summary, "free blocks: 0 at 2 MiB (order 9), 0 at 4 MiB (order 10)")) << r.summary;
  EXPECT_TRUE(Has(r.summary, "Mlocked 61.5 GiB, Unevictable 61.5 GiB, Shmem 64.0 GiB, /dev/shm 64.0 GiB")) << r.summary;
  EXPECT_TRUE(Has(Joined(r), "no free 2 MiB block (order 9 on 4 KiB pages)")) << Joined(r);
  EXPECT_TRUE(Has(Joined(r), "MiaAI-Lab/GLM-5.3#193")) << Joined(r);
}

TEST(G3, PlainGb10StaysInfoAndSaysWhatIsNotReported) {
  World w(Fixture("gb10"), {});
  auto r = CheckG3(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kInfo) << Joined(r);
  EXPECT_TRUE(Has(r.summary, "free 2 MiB/4 MiB blocks not reported")) << r.summary;
  EXPECT_TRUE(Has(r.summary, "Mlocked 0.0 GiB")) << r.summary;
}

TEST(G4, ProchotOnIsOnTheLineAndWarns) {
  testing::TempDir dir;
  dir.Write("sys/class/hwmon/hwmon0/name", "spbm\n");
  dir.Write("sys/class/hwmon/hwmon0/prochot", "1\n");
  dir.Write("sys/class/hwmon/hwmon0/pl_level", "3\n");
  World w(dir.path(), {});
  auto r = CheckG4(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_TRUE(Has(r.summary, "PROCHOT ON (hardware brake), power-limit level 3")) << r.summary;
  dir.Write("sys/class/hwmon/hwmon0/prochot", "0\n");
  World off(dir.path(), {});
  auto o = CheckG4(off.facts);
  EXPECT_EQ(o.status, CheckStatus::kInfo) << Joined(o);
  EXPECT_FALSE(Has(o.summary, "PROCHOT")) << o.summary;
}

TEST(G11, WedgeFixtureFailsOnEveryPrecursor) {
  World w(Fixture("wedge"), {});
  HostFacts pair(w.ctx, PreflightOptions{"", {}, {}, true});
  pair.SetGpu(testing::Gb10());
  auto r = CheckG11(pair);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  for (const char* part : {"driver 590.48.01 (kernel module)", "590.x: known CUDA-graph defect",
                           "kernel 6.17.0-1008-nvidia", "2 nvrm_no_memory, 1 xid, 1 oom_kill, 1 hung_task, 1 lockup",
                           "CmaTotal 0 kB", "1 pstore record(s) from a crashed boot"})
    EXPECT_TRUE(Has(r.summary, part)) << part << "\n" << r.summary;
  for (const char* source : {"open-gpu-kernel-modules#1358", "luxingcom/aicad-nccl-optimization#1",
                             "dgx-forensic-collect", "/sys/fs/pstore/dmesg-efi-178902345601001"})
    EXPECT_TRUE(Has(Joined(r), source)) << source;
  // Without --pair the CMA size is not judged.
  auto single = CheckG11(w.facts);
  EXPECT_FALSE(Has(single.summary, "CmaTotal")) << single.summary;
}

TEST(G11, NvmlDisagreeingWithTheModuleWarns) {
  World w(Fixture("gb10"), {});
  GpuSnapshot g = testing::Gb10();
  g.gpus[0].driver_version = "580.95.05";
  w.facts.SetGpu(g);
  auto r = CheckG11(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_TRUE(Has(r.summary, "driver 580.173.02 (kernel module), NVML reports 580.95.05")) << r.summary;
}

TEST(G11, CleanHostPassesAndUnreadableLogIsInfo) {
  testing::TempDir dir;
  dir.Write("proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.173.02  Release Build\n");
  dir.Write("proc/sys/kernel/osrelease", "6.17.0-1029-nvidia\n");
  dir.Write("dev/kmsg", "6,0,0,-;Booting Linux on physical CPU 0x0000000000\n");
  World w(dir.path(), {});
  auto r = CheckG11(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);
  EXPECT_EQ(r.summary,
            "driver 580.173.02 (kernel module); kernel 6.17.0-1029-nvidia; this boot's kernel log: no "
            "NVRM/Xid/OOM-kill/hung-task/lockup records; no pstore records");
  testing::TempDir bad;
  bad.Write("dev/kmsg/x", "");  // a directory where the log should be
  World u(bad.path(), {});
  auto n = CheckG11(u.facts);
  EXPECT_EQ(n.status, CheckStatus::kInfo) << Joined(n);
  EXPECT_TRUE(Has(n.summary, "no NVIDIA driver loaded; kernel release not readable; kernel log not readable"))
      << n.summary;
}

}  // namespace
}  // namespace sparkops
