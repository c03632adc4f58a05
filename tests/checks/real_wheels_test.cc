// Preflight on real aarch64 wheels' headers (tests/fixtures/real-wheels, made by extract.py from
// sgl-kernel 0.3.21, flashinfer-cubin 0.6.13, cupy-cuda12x 13.6.0 manylinux aarch64 wheels):
// G7 per object and role, standalone cubins, G1's fix for CUDA-major-named distributions, G9
// markers judged for the machine, --machine and --gpu gb10.
#include <gtest/gtest.h>

#include "checks/check.h"
#include "cli/dispatch.h"
#include "host/elf.h"
#include "host/ldso.h"
#include "host/markers.h"
#include "host/pyenv.h"
#include "pyenv_world.h"
#include "real_wheels.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::Gb10;
using testing::Joined;
using testing::World;

GpuSnapshot WithCc(int major, int minor) {
  GpuSnapshot g = Gb10();
  g.gpus[0].cc_major = major;
  g.gpus[0].cc_minor = minor;
  return g;
}

std::string Lines(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

/// A torch 2.9.1+cu130 known only from its metadata and version.py (no objects).
void MetadataOnlyTorch(const testing::TempDir& d, const std::string& requires_dist = "") {
  d.Write("torch-2.9.1+cu130.dist-info/METADATA", "Name: torch\nVersion: 2.9.1+cu130\n" + requires_dist);
  d.Write("torch-2.9.1+cu130.dist-info/RECORD", "torch/version.py,,\n");
  d.Write("torch/version.py", "__version__ = '2.9.1+cu130'\ncuda: Optional[str] = '13.0'\n");
}

TEST(RealWheelsG7, SglKernelKernelsCannotRunOn121WhateverItsCommsLibraryHolds) {
  testing::TempDir d;
  testing::RealWheelTree("sgl-kernel", d.path());
  World w(Fixture("gb10"), {d.path()});
  auto r = CheckG7(w.facts);
  // Was: WARN "sgl-kernel 0.3.21 runs on 12.1 only via PTX JIT" (mscclpp's PTX pooled with the kernels).
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(r.summary.find("no kernels for compute capability 12.1 in sgl-kernel 0.3.21 (only "), std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("sm_120a"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("PTX JIT"), std::string::npos) << r.summary;
  EXPECT_NE(Joined(r).find("lib/mscclpp.so.0.6.0 (fatbin scan; bundled communication/runtime library"),
            std::string::npos)
      << Joined(r);
  // On a B200 (10.0) the sm_100a kernels run natively.
  World b(Fixture("gb10"), {d.path()}, {}, WithCc(10, 0));
  auto rb = CheckG7(b.facts);
  EXPECT_NE(rb.status, CheckStatus::kFail) << Joined(rb);
}

TEST(RealWheelsG7, FlashinferCubinsAreReadAndMustJitOn121) {
  testing::TempDir d;
  testing::RealWheelTree("flashinfer-cubin", d.path());
  World w(Fixture("gb10"), {d.path()});
  auto r = CheckG7(w.facts);
  // Was: PASS "no NVFP4 kernel package with device code installed" (cubins never looked at).
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_NE(r.summary.find("no prebuilt cubin in flashinfer-cubin 0.6.13 (only sm_100 sm_100a sm_103a) runs on 12.1"),
            std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("must JIT-compile"), std::string::npos) << r.summary;
  EXPECT_NE(Joined(r).find("3 standalone cubins (ELF e_flags)"), std::string::npos) << Joined(r);
  World b(Fixture("gb10"), {d.path()}, {}, WithCc(10, 0));
  auto rb = CheckG7(b.facts);
  EXPECT_EQ(rb.status, CheckStatus::kPass) << Joined(rb);
  EXPECT_NE(rb.summary.find("flashinfer-cubin 0.6.13 (sm_100a)"), std::string::npos) << rb.summary;
}

TEST(RealWheelsElf, CubinSmFromEFlags) {
  // Values read with readelf -h from flashinfer-cubin 0.6.13 (ELF ABI version 8), names *_sm100a/f, *_sm103a.
  EXPECT_EQ(CubinArchFromHeader(8, 0x1000640c)->name, "sm_100a");
  EXPECT_EQ(CubinArchFromHeader(8, 0x6006402)->name, "sm_100");  // named *_sm100f: no family bit
  EXPECT_EQ(CubinArchFromHeader(8, 0xf00670c)->name, "sm_103a");
  EXPECT_EQ(CubinArchFromHeader(8, 0x7900)->name, "sm_121");
  EXPECT_EQ(CubinArchFromHeader(7, 0x500550)->name, "sm_80");  // pre-12.8 layout: EF_CUDA_SM in the low byte
  EXPECT_FALSE(CubinArchFromHeader(8, 0x0c));
  testing::TempDir d;
  d.Write("x.cubin", std::string(200, 'x'));
  auto bad = ReadCubinArch(d.path() + "/x.cubin");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("x.cubin"), std::string::npos);
}

TEST(RealWheelsG1, CudaMajorNamedDistributionsGetTheSiblingNotACu130Build) {
  testing::TempDir d;
  MetadataOnlyTorch(d);
  testing::RealWheelTree("cupy-cuda12x", d.path());
  testing::RealWheelTree("sgl-kernel", d.path());
  World w(Fixture("gb10"), {d.path()});
  w.facts.SetHostMachine("aarch64");
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(r.fix.find("pip uninstall -y cupy-cuda12x && pip install cupy-cuda13x"), std::string::npos) << r.fix;
  EXPECT_EQ(r.fix.find("cu130 build of cupy"), std::string::npos) << r.fix;
  EXPECT_NE(r.fix.find("the PyPI sgl-kernel wheel is built for CUDA 12"), std::string::npos) << r.fix;
  // distinct libraries (libcublas.so.12, libcublasLt.so.12, libcudart.so.12, libnvrtc.so.12; readelf -d),
  // not object x library references
  EXPECT_EQ(r.summary.rfind("4 CUDA libraries will not load", 0), 0u) << r.summary;
}

TEST(RealWheelsG1, MissingRuntimeLibraryNamesTheWheelThatProvidesIt) {
  // A CUDA 12.8 torch whose runtime wheels are missing, and sgl-kernel's deep_gemm object (NEEDs
  // libcudart.so.12, libnvrtc.so.12): the fix names the wheels, with torch's own pins.
  testing::TempDir d;
  d.Write("torch-2.8.0+cu128.dist-info/METADATA",
          "Name: torch\nVersion: 2.8.0+cu128\nRequires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == "
          "\"Linux\"\nRequires-Dist: nvidia-cuda-nvrtc-cu12==12.8.93; platform_system == \"Linux\"\n");
  d.Write("torch-2.8.0+cu128.dist-info/RECORD", "torch/version.py,,\n");
  d.Write("torch/version.py", "__version__ = '2.8.0+cu128'\ncuda: Optional[str] = '12.8'\n");
  d.Write("ext-1.0.dist-info/METADATA", "Name: ext\nVersion: 1.0\n");
  d.Write("ext-1.0.dist-info/RECORD", "deep_gemm/deep_gemm_cpp.abi3.so,,\n");
  std::filesystem::create_directories(d.path() + "/deep_gemm");
  testing::MaterializeRegions(Fixture("real-wheels/sgl-kernel/deep_gemm/deep_gemm_cpp.abi3.so.regions"),
                              d.path() + "/deep_gemm/deep_gemm_cpp.abi3.so");
  World w(Fixture("gb10"), {d.path()});
  w.facts.SetHostMachine("aarch64");
  auto r = CheckG1(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(r.fix.find("pip install nvidia-cuda-runtime-cu12==12.8.90"), std::string::npos) << r.fix;
  EXPECT_NE(r.fix.find("nvidia-cuda-nvrtc-cu12==12.8.93"), std::string::npos) << r.fix;
}

TEST(RealWheelsInventory, EditableInstallsAreFollowed) {
  testing::TempDir site, proj, proj2;
  testing::RealWheelTree("sgl-kernel", proj.path());  // the project checkout: sgl_kernel/*.so built in place
  site.Write("sgl_kernel-0.3.21.dist-info/METADATA", "Name: sgl-kernel\nVersion: 0.3.21\n");
  // pip install -e with a path .pth (setuptools develop / path-based PEP 660)
  site.Write("sgl_kernel-0.3.21.dist-info/RECORD", "__editable__.sgl_kernel-0.3.21.pth,,\n");
  site.Write("__editable__.sgl_kernel-0.3.21.pth", proj.path() + "\n");
  site.Write("sgl_kernel-0.3.21.dist-info/direct_url.json",
             "{\"url\": \"file://" + proj.path() + "\", \"dir_info\": {\"editable\": true}}");
  Inventory inv = ScanSitePackages({site.path()});
  ASSERT_EQ(inv.packages.size(), 1u);
  EXPECT_EQ(inv.packages[0].shared_objects.size(), 3u) << Lines(inv.packages[0].shared_objects);
  // a PEP 660 finder module mapping the package to its source dir
  testing::TempDir site2;
  testing::RealWheelTree("sgl-kernel", proj2.path());
  site2.Write("sgl_kernel-0.3.21.dist-info/METADATA", "Name: sgl-kernel\nVersion: 0.3.21\n");
  site2.Write("sgl_kernel-0.3.21.dist-info/RECORD",
              "__editable__.sgl_kernel-0.3.21.pth,,\n__editable___sgl_kernel_0_3_21_finder.py,,\n");
  site2.Write("__editable__.sgl_kernel-0.3.21.pth",
              "import __editable___sgl_kernel_0_3_21_finder; "
              "__editable___sgl_kernel_0_3_21_finder.install()\n");
  site2.Write("__editable___sgl_kernel_0_3_21_finder.py",
              "MAPPING: dict[str, str] = {'sgl_kernel': '" + proj2.path() + "/sgl_kernel'}\nNAMESPACES = {}\n");
  Inventory inv2 = ScanSitePackages({site2.path()});
  ASSERT_EQ(inv2.packages.size(), 1u);
  EXPECT_EQ(inv2.packages[0].shared_objects.size(), 3u) << Lines(inv2.packages[0].shared_objects);
  // G7 then judges it (was: "no NVFP4 kernel package with device code installed")
  World w(Fixture("gb10"), {site2.path()});
  EXPECT_EQ(CheckG7(w.facts).status, CheckStatus::kFail);
}

TEST(Markers, EvaluatedForTheJudgedMachine) {
  MarkerEnv arm = LinuxMarkerEnv("aarch64", "3.12"), x86 = LinuxMarkerEnv("x86_64", "3.12");
  const char* torch290 = R"(platform_system == "Linux" and platform_machine == "x86_64")";
  EXPECT_EQ(EvaluateMarker(torch290, arm), false);
  EXPECT_EQ(EvaluateMarker(torch290, x86), true);
  EXPECT_EQ(EvaluateMarker(
                R"(sys_platform == 'linux' and (platform_machine == 'aarch64' or platform_machine == 'arm64'))", arm),
            true);
  EXPECT_EQ(EvaluateMarker(R"(python_version < "3.10")", arm), false);
  EXPECT_EQ(EvaluateMarker(R"(python_version >= "3.9")", arm), true);  // as versions: 3.12 > 3.9
  EXPECT_EQ(EvaluateMarker(R"(extra == "all")", arm), false);
  EXPECT_EQ(EvaluateMarker(R"("arm" in platform_machine)", x86), false);
  EXPECT_EQ(EvaluateMarker(R"(platform_machine not in "x86_64 AMD64")", arm), true);
  EXPECT_EQ(EvaluateMarker(R"(python_version < "3.10")", LinuxMarkerEnv("aarch64", "")), std::nullopt);
  EXPECT_EQ(EvaluateMarker(R"(platform_machine == "x86_64" and python_version < "3.10")",
                           LinuxMarkerEnv("aarch64", "")),
            false);  // false and unknown
  EXPECT_EQ(EvaluateMarker(R"(platform_machine == )", arm), std::nullopt);
  EXPECT_EQ(EvaluateMarker(std::string(100, '(') + "os_name == 'posix'" + std::string(100, ')'), arm), std::nullopt);
  EXPECT_EQ(PythonVersionFromSiteDir("/v/lib/python3.12/site-packages"), "3.12");
  EXPECT_EQ(PythonVersionFromSiteDir("/usr/lib/python3/dist-packages"), "");
}

/// torch 2.9.0's x86-64-only CUDA 12 pins beside a differing nvidia-cublas-cu12.
void Torch290(const testing::TempDir& d) {
  d.Write("torch-2.9.0.dist-info/METADATA",
          "Name: torch\nVersion: 2.9.0\nRequires-Dist: nvidia-cublas-cu12==12.8.4.1; platform_system == \"Linux\" and "
          "platform_machine == \"x86_64\"\n");
  d.Write("torch-2.9.0.dist-info/RECORD", "");
  d.Write("nvidia_cublas_cu12-12.9.1.4.dist-info/METADATA", "Name: nvidia-cublas-cu12\nVersion: 12.9.1.4\n");
  d.Write("nvidia_cublas_cu12-12.9.1.4.dist-info/RECORD", "");
}

TEST(RealWheelsG9, PlatformPinsAreJudgedForTheMachine) {
  testing::TempDir d;
  Torch290(d);
  World arm(Fixture("gb10"), {d.path()});
  arm.facts.SetHostMachine("aarch64");
  auto r = CheckG9(arm.facts);
  EXPECT_EQ(Joined(r).find("DISAGREES"), std::string::npos) << Joined(r);  // was: reported as disagreeing
  World x86(Fixture("gb10"), {d.path()});
  x86.facts.SetHostMachine("x86_64");
  auto x = CheckG9(x86.facts);
  EXPECT_NE(x.summary.find("torch 2.9.0 requires nvidia-cublas-cu12==12.8.4.1; installed 12.9.1.4"), std::string::npos)
      << x.summary;
}

TEST(RealWheelsG9, ExtensionPinsAreCheckedInsideAContainerToo) {
  testing::TempDir d;
  d.Write("torch-2.9.0.dist-info/METADATA", "Name: torch\nVersion: 2.9.0\n");
  d.Write("torch-2.9.0.dist-info/RECORD", "");
  d.Write("vllm-0.11.0.dist-info/METADATA", "Name: vllm\nVersion: 0.11.0\nRequires-Dist: torch==2.8.0\n");
  d.Write("vllm-0.11.0.dist-info/RECORD", "");
  World w(testing::BuildArtifact("roots/ngc"), {d.path()});
  auto r = CheckG9(w.facts);
  // Was: PASS "running in a container" with no pin compared.
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_NE(r.summary.find("vllm 0.11.0 requires torch==2.8.0; installed 2.9.0"), std::string::npos) << r.summary;
}

TEST(MachineOption, GlobalFlagAndEnvironment) {
  GlobalOptions a, b, c;
  ASSERT_TRUE(ExtractGlobalOptions({"--machine", "arm64", "preflight"}, {}, a));
  EXPECT_EQ(a.machine, "aarch64");
  ASSERT_TRUE(ExtractGlobalOptions({"preflight"}, {{"SPARKOPS_MACHINE", "x86_64"}}, b));
  EXPECT_EQ(b.machine, "x86_64");
  auto bad = ExtractGlobalOptions({"--machine=sparc", "preflight"}, {}, c);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--machine: unknown machine 'sparc'"), std::string::npos);
}

TEST(MachineOption, JudgesAnAarch64EnvironmentFromAnyHostWithGpuGb10) {
  testing::TempDir d;
  testing::RealWheelTree("sgl-kernel", d.path());
  GlobalOptions o;
  o.root = Fixture("laptop");
  o.nvml = o.nvidia_smi = "none";
  std::ostringstream out, err;
  Context ctx(o, HostFs(o.root), {}, out, err);
  HostFacts f(ctx, PreflightOptions{"", {d.path()}, {}, false, "aarch64", "gb10"});
  EXPECT_EQ(f.host_machine(), "aarch64");
  auto r = CheckG7(f);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(Joined(r).find("compute capability 12.1 (--gpu gb10, no GPU readable)"), std::string::npos) << Joined(r);
  HostFacts nogpu(ctx, PreflightOptions{"", {d.path()}, {}});
  EXPECT_EQ(CheckG7(nogpu).status, CheckStatus::kSkip);
}

TEST(Ldso, CudaLib64IsNoDefaultDirAndWrongMachineLibrariesAreSkipped) {
  testing::TempDir root;
  root.Write("usr/local/cuda/lib64/.keep", "");
  HostView h{HostOptions{root.path(), "none", "none"}, HostFs(root.path()), {}};
  auto has = [&](const LdsoEnv& e) {
    for (const auto& d : e.system_dirs)
      if (d.find("/usr/local/cuda/lib64") != std::string::npos) return true;
    return false;
  };
  EXPECT_FALSE(has(MakeLdsoEnv(h, {})));
  root.Write("etc/ld.so.conf.d/988_cuda-13.conf", "/usr/local/cuda/lib64\n");
  EXPECT_TRUE(has(MakeLdsoEnv(h, {})));
  // An aarch64 libcudart (sgl-kernel's mscclpp, renamed) in the search path of an x86-64 object: skipped.
  testing::MaterializeRegions(Fixture("real-wheels/sgl-kernel/lib/mscclpp.so.0.6.0.regions"),
                              root.path() + "/usr/local/cuda/lib64/libcudart.so.12");
  LdsoEnv env = MakeLdsoEnv(h, {});
  ElfInfo x86;
  x86.machine = ElfMachineFromUname("x86_64");
  EXPECT_FALSE(ResolveNeeded("libcudart.so.12", x86, root.path() + "/o.so", env).path);
  ElfInfo arm;
  arm.machine = ElfMachineFromUname("aarch64");
  EXPECT_TRUE(ResolveNeeded("libcudart.so.12", arm, root.path() + "/o.so", env).path);
}

TEST(Ldso, TheInterpretersOwnRpathIsSearched) {
  // conda's python carries DT_RPATH $ORIGIN/../lib; the test's "python" is a built object whose
  // DT_RPATH is $ORIGIN/../xformers.libs, with the runtime placed there.
  testing::TempDir prefix;
  const std::string site = prefix.path() + "/lib/python3.12/site-packages";
  std::filesystem::create_directories(site);
  std::filesystem::create_directories(prefix.path() + "/bin");
  std::filesystem::create_directories(prefix.path() + "/xformers.libs");
  std::filesystem::copy_file(testing::BuildArtifact("pyenv-libs/libext_vendored.so"),
                             prefix.path() + "/bin/python3.12");
  HostView h{HostOptions{Fixture("gb10"), "none", "none"}, HostFs(Fixture("gb10")), {}};
  LdsoEnv env = MakeLdsoEnv(h, {site});
  ASSERT_EQ(env.exe_rpath.size(), 1u);
  EXPECT_EQ(env.exe_rpath[0], prefix.path() + "/bin/../xformers.libs");
  std::filesystem::copy_file(testing::BuildArtifact("pyenv-libs/cuda13/libcudart.so.13"),
                             prefix.path() + "/xformers.libs/libcudart.so.13");
  ElfInfo ext;  // an extension with no RPATH/RUNPATH of its own
  auto r = ResolveNeeded("libcudart.so.13", ext, site + "/ext.so", env);
  ASSERT_TRUE(r.path);
  EXPECT_EQ(r.via, "interpreter RPATH");
  ext.runpath = "";  // DT_RUNPATH present: the interpreter's DT_RPATH is not used
  EXPECT_FALSE(ResolveNeeded("libcudart.so.13", ext, site + "/ext.so", env).path);
}

}  // namespace
}  // namespace sparkops
