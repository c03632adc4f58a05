// G1 against the fake environments (built by tests/pyenv.cmake), with the GPU
// facts preset: no test touches the real GPU or the real Python.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "checks/check.h"
#include "host/container.h"
#include "host/cudalink.h"
#include "host/ldso.h"
#include "host/ptxas.h"
#include "host/pyenv.h"
#include "pyenv_world.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::FakeDir;
using testing::Fixture;
using testing::Gb10;
using testing::Joined;
using testing::NoGpu;
using testing::Site;
using testing::World;

TEST(G1, CleanCuda13Passes) {
  World w(Fixture("gb10"), {Site("cu13")});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);
  EXPECT_NE(r.summary.find("2.9.1+cu130"), std::string::npos);
  std::string all = Joined(r);
  EXPECT_NE(all.find("libcudart.so.13 -> "), std::string::npos);
  EXPECT_NE(all.find("(RPATH)"), std::string::npos) << all;
  // bitsandbytes ships a cuda126 object too; only the one it would load counts
  EXPECT_NE(all.find("counted only libbitsandbytes_cuda130.so"), std::string::npos);
  EXPECT_EQ(all.find("libbitsandbytes_cuda126.so NEEDs"), std::string::npos);
}

TEST(G1, BnbCudaVersionOverrideCountsTheOtherObject) {
  World w(Fixture("gb10"), {Site("cu13")}, {{"BNB_CUDA_VERSION", "126"}});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(r.summary.find("bitsandbytes 0.49.2"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("libcudart.so.12"), std::string::npos);
  World missing(Fixture("gb10"), {Site("cu13")}, {{"BNB_CUDA_VERSION", "118"}});
  auto m = CheckG1(missing.facts);
  EXPECT_EQ(m.status, CheckStatus::kFail);
  EXPECT_NE(m.summary.find("libbitsandbytes_cuda118.so"), std::string::npos) << m.summary;
}

TEST(G1, TwoCudaMajorsInOneInterpreterFail) {
  // The CUDA 12 runtime becomes findable through LD_LIBRARY_PATH: nothing is missing any more,
  // but torch loads libcudart.so.13 and flash-attn libcudart.so.12 into one process.
  World w(Fixture("gb10"), {Site("mixed")}, {{"LD_LIBRARY_PATH", Site("cu12") + "/nvidia/cuda_runtime/lib"}});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(r.summary.find("mixed CUDA majors"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("CUDA 12 (flash_attn 2.8.3"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("CUDA 13 (torch 2.9.1+cu130"), std::string::npos) << r.summary;
}

TEST(G1, MissingRuntimeFailsNamingPackageAndFile) {
  World w(Fixture("gb10"), {Site("mixed")});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_NE(r.summary.find("flash_attn 2.8.3 needs libcudart.so.12"), std::string::npos) << r.summary;
  EXPECT_NE(Joined(r).find("flash_attn 2.8.3: flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so NEEDs "
                           "libcudart.so.12"),
            std::string::npos)
      << Joined(r);
  // The fix names the package whose objects need the CUDA 12 runtime, not torch (whose objects resolve).
  EXPECT_NE(r.fix.find("flash_attn 2.8.3 is built for CUDA 12 (torch is CUDA 13.0): install a cu130 build of "
                       "flash_attn or uninstall it"),
            std::string::npos)
      << r.fix;
  EXPECT_EQ(r.fix.find("reinstall torch"), std::string::npos) << r.fix;
  EXPECT_NE(Joined(r).find("2 distinct CUDA libraries (libcudart.so.12, libcudart.so.13) linked by 2 objects in 2 "
                           "packages: torch 2.9.1+cu130, flash_attn 2.8.3"),
            std::string::npos)
      << Joined(r);
}

TEST(G1, VenvRootWithHashedVendoredRuntimeBlamesItsPackage) {
  // --site-packages at a venv root; xformers vendors an auditwheel-renamed CUDA 12 runtime.
  World w(Fixture("gb10"), {Site("venv")});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(Joined(r).find("lib/python3.12/site-packages"), std::string::npos) << Joined(r);
  EXPECT_NE(r.summary.find("mixed CUDA majors"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("CUDA 12 (xformers 0.0.35: xformers/_C.so)"), std::string::npos) << r.summary;
  EXPECT_NE(r.fix.find("xformers 0.0.35 is built for CUDA 12 (torch is CUDA 13.0): install a cu130 build of "
                       "xformers or uninstall it (pip uninstall -y xformers)"),
            std::string::npos)
      << r.fix;
  EXPECT_NE(Joined(r).find("libcudart-1a2b3c4d.so.12.3.101 -> "), std::string::npos) << Joined(r);
  EXPECT_NE(Joined(r).find("(libcudart.so.12.3.101, libcudart.so.13)"), std::string::npos) << Joined(r);
}

TEST(G1, ForeignCpuObjectsFailForEveryPackage) {
  std::string other = std::string(UNAME_MACHINE_FOR_TEST) == "aarch64" ? "x86_64" : "aarch64";
  World w(Fixture("gb10"), {Site("cu13")});
  w.facts.SetHostMachine(other);
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(r.summary.find("native code for another CPU"), std::string::npos) << r.summary;
  for (const char* pkg : {"torch 2.9.1+cu130", "vllm 0.13.0+cu130", "bitsandbytes 0.49.2", "triton"})
    EXPECT_NE(r.summary.find(pkg), std::string::npos) << pkg << ": " << r.summary;
  EXPECT_NE(r.summary.find("this host is " + other), std::string::npos) << r.summary;
}

TEST(Ldso, HashedVendoredSonamesAreCudaLibraries) {
  EXPECT_EQ(CanonicalSoname("libcudart-1a2b3c4d.so.12.3.101"), "libcudart.so.12.3.101");
  EXPECT_EQ(CanonicalSoname("libcudart.5e6f7a8b.so.13"), "libcudart.so.13");
  EXPECT_EQ(CanonicalSoname("libcudart.so.13"), "libcudart.so.13");
  EXPECT_EQ(CanonicalSoname("libcublasLt-0123456789abcdef.so.12"), "libcublasLt.so.12");
  EXPECT_EQ(CanonicalSoname("libfoo-1a2b.so.1"), "libfoo-1a2b.so.1");      // too short for a hash
  EXPECT_EQ(CanonicalSoname("libcudart-1A2B3C4D.so.12"), "libcudart-1A2B3C4D.so.12");  // not lowercase hex
  EXPECT_EQ(CanonicalSoname("libsomething.sox"), "libsomething.sox");
  EXPECT_TRUE(IsCudaLibrary("libcudart-1a2b3c4d.so.12.3.101"));
  EXPECT_EQ(CudaMajorOfSoname("libcudart-1a2b3c4d.so.12.3.101"), 12);
  EXPECT_EQ(CudaMajorOfSoname("libcudart.5e6f7a8b.so.13"), 13);
  EXPECT_FALSE(IsCudaLibrary("libc10-deadbeef.so"));
}

TEST(HostCuda, ToolkitVersionSaysWhereItCameFrom) {
  testing::TempDir root;
  EXPECT_FALSE(ReadCudaToolkitVersion(HostFs(root.path())));  // nothing: unknown, never guessed
  root.Write("usr/local/cuda-13.0/lib64/libcudart.so.13", "x");
  std::filesystem::create_directory_symlink("cuda-13.0", root.path() + "/usr/local/cuda");
  auto link = ReadCudaToolkitVersion(HostFs(root.path()));
  ASSERT_TRUE(link);
  EXPECT_EQ(link->version, "13.0");
  EXPECT_NE(link->file.find("/usr/local/cuda -> cuda-13.0 (no version.json)"), std::string::npos) << link->file;
  testing::TempDir plain;  // a toolkit dir without version files or a versioned link: the soname's major
  plain.Write("usr/local/cuda/lib64/libcudart.so.12", "x");
  auto so = ReadCudaToolkitVersion(HostFs(plain.path()));
  ASSERT_TRUE(so);
  EXPECT_EQ(so->version, "12");
  EXPECT_NE(so->file.find("libcudart.so.12 soname"), std::string::npos) << so->file;
  plain.Write("usr/local/cuda/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.8.1"}})");
  EXPECT_EQ(ReadCudaToolkitVersion(HostFs(plain.path()))->version, "12.8.1");
}

TEST(PyEnv, SitePackagesArgumentResolvesOrSaysWhatWasLookedFor) {
  World venv(Fixture("gb10"), {Site("venv")});
  ASSERT_TRUE(venv.facts.python()) << venv.facts.python().error().message;
  EXPECT_EQ(venv.facts.python()->site_dirs, std::vector<std::string>{Site("venv") + "/lib/python3.12/site-packages"});
  testing::TempDir empty;
  empty.Write("README", "no distributions here");
  World e(Fixture("gb10"), {empty.path()});
  ASSERT_FALSE(e.facts.python());
  EXPECT_EQ(e.facts.python().error().kind, Error::Kind::kInput);
  EXPECT_NE(e.facts.python().error().message.find("no *.dist-info or *.egg-info directory"), std::string::npos);
  auto g1 = CheckG1(e.facts);
  EXPECT_TRUE(g1.input_error);
  testing::TempDir conda;
  conda.Write("conda-meta/history", "");
  World c(Fixture("gb10"), {conda.path()});
  ASSERT_FALSE(c.facts.python());
  EXPECT_NE(c.facts.python().error().message.find("conda root (conda-meta/) without lib/python3.*/site-packages"),
            std::string::npos)
      << c.facts.python().error().message;
  World py(Fixture("gb10"), {});
  HostFacts bad(py.ctx, PreflightOptions{"/nonexistent/python3", {}, {}});
  ASSERT_FALSE(bad.python());
  EXPECT_NE(bad.python().error().message.find("ran `/nonexistent/python3 -S -c"), std::string::npos)
      << bad.python().error().message;
}

TEST(G1, Cuda12TorchWarnsOnCuda13HostAndPassesElsewhere) {
  World spark(Fixture("gb10"), {Site("cu12")});
  auto r = CheckG1(spark.facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_NE(Joined(r).find("already loaded by torch"), std::string::npos);  // flash-attn rides on torch's cudart
  GpuSnapshot h100 = Gb10();
  h100.gpus[0].cc_major = 9;
  h100.gpus[0].cc_minor = 0;
  h100.gpus[0].cuda_driver_version = 12080;
  World discrete(Fixture("discrete"), {Site("cu12")}, {}, h100);
  EXPECT_EQ(CheckG1(discrete.facts).status, CheckStatus::kPass);
  // A CUDA 13 torch on a CUDA 12 driver cannot start.
  World old(Fixture("discrete"), {Site("cu13")}, {}, h100);
  auto o = CheckG1(old.facts);
  EXPECT_EQ(o.status, CheckStatus::kFail);
  EXPECT_NE(o.summary.find("host reports CUDA 12.8"), std::string::npos) << o.summary;
  // ... but an old toolkit in /usr/local/cuda says nothing about the driver.
  testing::TempDir root;
  root.Write("usr/local/cuda/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}})");
  World toolkit(root.path(), {Site("cu13")}, {}, NoGpu());
  EXPECT_EQ(CheckG1(toolkit.facts).status, CheckStatus::kPass);
}

TEST(G1, CpuOnlyTorchFailsOnlyOnGpuHosts) {
  World gpu(Fixture("gb10"), {Site("cpu")});
  EXPECT_EQ(CheckG1(gpu.facts).status, CheckStatus::kFail);
  World driver_only(Fixture("gb10"), {Site("cpu")}, {}, NoGpu());  // /proc/driver/nvidia/version
  EXPECT_EQ(CheckG1(driver_only.facts).status, CheckStatus::kFail);
  World laptop(Fixture("laptop"), {Site("cpu")}, {}, NoGpu());
  auto r = CheckG1(laptop.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);
}

TEST(G1, DebianEggInfoComparesPublicVersions) {
  World w(Fixture("laptop"), {Site("egg")}, {}, NoGpu());
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);  // 1.13.0a0 == 1.13.0a0+gitunknown
  EXPECT_NE(r.summary.find("torch 1.13.0a0+gitunknown"), std::string::npos);
  const Package* t = w.facts.packages().Find("torch");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->egg);
  EXPECT_EQ(t->shared_objects.size(), 2u);  // found by walking the tree (no RECORD)
}

TEST(G1, HalfOverwrittenAndDamagedInstallsFail) {
  testing::TempDir d;
  d.Write("torch-2.9.1+cu130.dist-info/METADATA", "Name: torch\nVersion: 2.9.1+cu130\n");
  d.Write("torch/version.py", "__version__ = '2.8.0+cu128'\ncuda = '12.8'\n");
  World w(Fixture("gb10"), {d.path()});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_NE(r.summary.find("half-overwritten"), std::string::npos) << r.summary;
  d.Write("torch/version.py", "debug = False\n");
  World w2(Fixture("gb10"), {d.path()});
  auto r2 = CheckG1(w2.facts);
  EXPECT_EQ(r2.status, CheckStatus::kFail);
  EXPECT_NE(r2.summary.find("torch/version.py: no __version__ line"), std::string::npos) << r2.summary;
}

TEST(G1, DamagedRecordIsReportedWithFileAndLine) {
  testing::TempDir d;
  d.Write("torch-2.9.1+cu130.dist-info/METADATA", "Name: torch\nVersion: 2.9.1+cu130\n");
  d.Write("torch-2.9.1+cu130.dist-info/RECORD", "torch/version.py,,\ntorch/lib/x.so,sha256=a\n");
  d.Write("torch/version.py", "__version__ = '2.9.1+cu130'\ncuda = '13.0'\n");
  World w(Fixture("gb10"), {d.path()});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_NE(r.summary.find("RECORD: line 2: expected path,hash,size"), std::string::npos) << r.summary;
  // the other checks still run on the same facts
  EXPECT_EQ(CheckG2(w.facts).status, CheckStatus::kPass);
}

TEST(G1, OldTritonPtxasWarnsOnGb10) {
  testing::TempDir d;
  d.Write("triton-3.3.0.dist-info/METADATA", "Name: triton\nVersion: 3.3.0\n");
  std::string px = d.Write("triton/backends/nvidia/bin/ptxas-blackwell",
                           "#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n"
                           "echo 'Cuda compilation tools, release 12.8, V12.8.93'\n");
  std::filesystem::permissions(px, std::filesystem::perms::owner_all);
  World w(Fixture("gb10"), {Site("cu13"), d.path()});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);  // cu13's own triton 3.5.1 has no ptxas: unknown
  World old(Fixture("gb10"), {d.path(), Site("cu13")});
  auto o = CheckG1(old.facts);
  EXPECT_EQ(o.status, CheckStatus::kWarn) << Joined(o);
  EXPECT_NE(o.summary.find("ptxas is CUDA 12.8"), std::string::npos) << o.summary;
  EXPECT_NE(o.fix.find("TRITON_PTXAS_PATH"), std::string::npos);
  // the documented workaround: point Triton at a CUDA 13 ptxas
  std::string good = d.Write("cuda13/ptxas", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n");
  std::filesystem::permissions(good, std::filesystem::perms::owner_all);
  World fixed(Fixture("gb10"), {d.path(), Site("cu13")}, {{"TRITON_PTXAS_PATH", good}});
  EXPECT_EQ(CheckG1(fixed.facts).status, CheckStatus::kPass);
  EXPECT_EQ(ParsePtxasRelease("Cuda compilation tools, release 12.9, V12.9.41"), (std::pair{12, 9}));
  EXPECT_EQ(ParsePtxasRelease("garbage"), std::nullopt);
}

TEST(G1, DistInfoWithoutRecordIsWalked) {
  testing::TempDir d;
  d.Write("torch-2.8.0+cu128.dist-info/METADATA", "Name: torch\nVersion: 2.8.0+cu128\n");
  d.Write("torch/version.py", "__version__ = '2.8.0+cu128'\ncuda = '12.8'\n");
  std::filesystem::create_directories(d.path() + "/torch/lib");
  std::filesystem::copy_file(BuildArtifact("pyenv-libs/libext_cu12.so"), d.path() + "/torch/lib/libtorch_cuda.so");
  World w(Fixture("gb10"), {d.path()});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(r.summary.find("torch 2.8.0+cu128 needs libcudart.so.12"), std::string::npos) << r.summary;
  EXPECT_NE(Joined(r).find("torch 2.8.0+cu128: torch/lib/libtorch_cuda.so NEEDs libcudart.so.12"), std::string::npos)
      << Joined(r);
  EXPECT_NE(r.fix.find("reinstall torch"), std::string::npos) << r.fix;  // torch's own object does not resolve
  // ... and the wheel that provides the missing library is named (issue 35)
  EXPECT_NE(r.fix.find("pip install nvidia-cuda-runtime-cu12 (provides libcudart.so.12)"), std::string::npos) << r.fix;
}

TEST(G1, NoEnvironmentSkips) {
  World w(Fixture("laptop"), {}, {}, NoGpu());
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kSkip);
  EXPECT_FALSE(r.input_error);
  World bad(Fixture("laptop"), {"/nonexistent/site-packages"}, {}, NoGpu());
  auto b = CheckG1(bad.facts);
  EXPECT_EQ(b.status, CheckStatus::kSkip);
  EXPECT_TRUE(b.input_error);
  EXPECT_NE(b.summary.find("/nonexistent/site-packages"), std::string::npos);
}

TEST(G1, NgcContainerRootPasses) {
  std::string root = BuildArtifact("roots/ngc");
  World w(root, {});
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);
  EXPECT_NE(Joined(r).find("NGC build 25.10"), std::string::npos);
  EXPECT_NE(Joined(r).find("(system dirs)"), std::string::npos);  // /usr/local/cuda/lib64 under --root
}
}  // namespace
}  // namespace sparkops
