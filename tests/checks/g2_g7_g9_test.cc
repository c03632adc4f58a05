// G2, G7, G9, container detection and Python discovery against the fake environments (built by tests/pyenv.cmake), with
// the GPU facts preset: no test touches the real GPU or the real Python.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "checks/check.h"
#include "cli/context.h"
#include "host/container.h"
#include "host/cudalink.h"
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

TEST(G2, FlashAttnMachineIsComparedWithTheHost) {
  // The fixture objects are built for this machine: foreign on the other architecture.
  std::string native = UNAME_MACHINE_FOR_TEST;
  std::string other = native == "aarch64" ? "x86_64" : "aarch64";
  World same(BuildArtifact("roots/ngc"), {});
  same.facts.SetHostMachine(native);
  auto r = CheckG2(same.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);
  EXPECT_NE(r.summary.find("NGC build (+25.10)"), std::string::npos);
  World foreign(BuildArtifact("roots/ngc"), {});
  foreign.facts.SetHostMachine(other);
  auto f = CheckG2(foreign.facts);
  EXPECT_EQ(f.status, CheckStatus::kFail) << Joined(f);
  EXPECT_NE(f.summary.find("this host is " + other), std::string::npos) << f.summary;
}

TEST(G2, UnslothWithFlashAttnWarnsAndMissingRuntimeFails) {
  World w(Fixture("gb10"), {Site("cu12")});
  auto r = CheckG2(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_NE(r.fix.find("sys.modules['flash_attn'] = None"), std::string::npos);
  World m(Fixture("gb10"), {Site("mixed")});
  auto f = CheckG2(m.facts);
  EXPECT_EQ(f.status, CheckStatus::kFail);
  EXPECT_NE(f.summary.find("source/local build"), std::string::npos) << f.summary;
  World none(Fixture("gb10"), {Site("cu13")});
  EXPECT_EQ(CheckG2(none.facts).status, CheckStatus::kPass);
}

TEST(G2, ArchesWithoutSm12CodeFail) {
  auto make = [](const testing::TempDir& d, const std::string& lib) {
    d.Write("flash_attn-2.8.3.dist-info/METADATA", "Name: flash_attn\nVersion: 2.8.3\n");
    d.Write("flash_attn-2.8.3.dist-info/RECORD", "flash_attn_2_cuda.so,,\n");
    std::filesystem::copy_file(BuildArtifact("pyenv-libs/" + lib), d.path() + "/flash_attn_2_cuda.so");
  };
  testing::TempDir d;
  make(d, "libext_fatbin_90a.so");  // sm_90a + sm_100f: neither runs on 12.x
  World w(Fixture("gb10"), {d.path()});
  auto r = CheckG2(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kFail) << Joined(r);
  EXPECT_NE(r.summary.find("no kernel image"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("12.1"), std::string::npos) << r.summary;
  // sm_120 + compute_120: runs on 12.1.
  testing::TempDir ok;
  make(ok, "libext_fatbin_120.so");
  World scan(Fixture("gb10"), {ok.path()});
  auto s = CheckG2(scan.facts);
  EXPECT_EQ(s.status, CheckStatus::kPass) << Joined(s);
  EXPECT_NE(Joined(s).find("(fatbin scan): sm_120 compute_120"), std::string::npos) << Joined(s);
}

/// A one-package environment whose vllm/_C.abi3.so is the given built object.
void MakeVllm(const testing::TempDir& d, const std::string& lib, const std::string& arches) {
  d.Write("vllm-0.13.0+cu130.dist-info/METADATA", "Name: vllm\nVersion: 0.13.0+cu130\n");
  d.Write("vllm-0.13.0+cu130.dist-info/RECORD", "vllm/_C.abi3.so,,\n");
  std::filesystem::create_directories(d.path() + "/vllm");
  std::filesystem::copy_file(BuildArtifact("pyenv-libs/" + lib), d.path() + "/vllm/_C.abi3.so");
  if (!arches.empty()) d.Write("vllm/_C.abi3.so.arches", arches);
}

GpuSnapshot WithCc(int major, int minor) {
  GpuSnapshot g = Gb10();
  g.gpus[0].cc_major = major;
  g.gpus[0].cc_minor = minor;
  return g;
}

TEST(G7, GenericSm120RunsButHasNoNvfp4Kernels) {
  World warn(Fixture("gb10"), {Site("cu13")});
  auto r = CheckG7(warn.facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_NE(r.summary.find("vllm 0.13.0+cu130 runs on 12.1 but has no NVFP4-capable"), std::string::npos) << r.summary;
  EXPECT_NE(Joined(r).find("vllm/_C.abi3.so (fatbin scan): sm_120 compute_120"), std::string::npos) << Joined(r);
  EXPECT_NE(Joined(r).find("native sm_120; PTX JIT compute_120; NVFP4-capable none"), std::string::npos) << Joined(r);
}

TEST(G7, FamilyAndArchSpecificKernelsPassOnGb10) {
  // vLLM 0.33.0's layout: sm_120f cubins + compressed compute_80 PTX. 12.0f covers 12.1.
  testing::TempDir fam;
  MakeVllm(fam, "libext_fatbin_120f.so", "");
  World w(Fixture("gb10"), {fam.path()});
  auto r = CheckG7(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);
  EXPECT_NE(r.summary.find("vllm 0.13.0+cu130 (sm_120f)"), std::string::npos) << r.summary;
  EXPECT_NE(Joined(r).find("native sm_120f; PTX JIT compute_80; NVFP4-capable sm_120f"), std::string::npos);
  testing::TempDir a;
  MakeVllm(a, "libext_fatbin_121a.so", "");
  World wa(Fixture("gb10"), {a.path()});
  auto ra = CheckG7(wa.facts);
  EXPECT_EQ(ra.status, CheckStatus::kPass) << Joined(ra);
  EXPECT_NE(ra.summary.find("sm_121a compute_121a"), std::string::npos) << ra.summary;
  // The same sm_121a build on an RTX 50 (12.0): arch-specific code runs only on 12.1.
  World rtx(Fixture("gb10"), {a.path()}, {}, WithCc(12, 0));
  auto rr = CheckG7(rtx.facts);
  EXPECT_EQ(rr.status, CheckStatus::kFail) << Joined(rr);
  EXPECT_NE(rr.summary.find("no kernels for compute capability 12.0 in vllm 0.13.0+cu130 (only sm_121a compute_121a)"),
            std::string::npos)
      << rr.summary;
}

TEST(G7, SaysWhichFactFailed) {
  testing::TempDir dc;  // sm_90a + sm_100f: nothing for 12.1
  MakeVllm(dc, "libext_fatbin_90a.so", "");
  World none(Fixture("gb10"), {dc.path()});
  auto n = CheckG7(none.facts);
  EXPECT_EQ(n.status, CheckStatus::kFail) << Joined(n);
  EXPECT_NE(n.summary.find("(only sm_90a sm_100f)"), std::string::npos) << n.summary;
  // ... but on a B200 (10.0) the family cubin runs natively and is NVFP4-capable.
  World b200(Fixture("gb10"), {dc.path()}, {}, WithCc(10, 0));
  auto b = CheckG7(b200.facts);
  EXPECT_EQ(b.status, CheckStatus::kPass) << Joined(b);
  EXPECT_NE(b.summary.find("(sm_100f)"), std::string::npos) << b.summary;
  testing::TempDir jit;  // sm_90 + compute_90: only the PTX JIT reaches 12.1
  MakeVllm(jit, "libext_fatbin_90.so", "");
  World j(Fixture("gb10"), {jit.path()}, {{"CUDA_CACHE_PATH", "/scratch/jit"}});
  auto rj = CheckG7(j.facts);
  EXPECT_EQ(rj.status, CheckStatus::kWarn) << Joined(rj);
  EXPECT_NE(rj.summary.find("no NVFP4-capable"), std::string::npos) << rj.summary;
  EXPECT_NE(rj.summary.find("only via PTX JIT"), std::string::npos) << rj.summary;
  EXPECT_NE(rj.summary.find("/scratch/jit (CUDA_CACHE_PATH)"), std::string::npos) << rj.summary;
}

TEST(G7, UnreadableCodeSkipsWithTheRealReason) {
  testing::TempDir d;
  d.Write("vllm-0.13.0+cu130.dist-info/METADATA", "Name: vllm\nVersion: 0.13.0+cu130\n");
  d.Write("vllm-0.13.0+cu130.dist-info/RECORD", "vllm/_C.abi3.so,,\n");
  d.Write("vllm/_C.abi3.so", std::string(200, 'x'));
  World w(Fixture("gb10"), {d.path()});
  auto r = CheckG7(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kSkip) << Joined(r);
  EXPECT_NE(r.summary.find("not an ELF file"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("fatbin unreadable"), std::string::npos) << r.summary;
}

TEST(G7, SkipsWithoutBlackwell) {
  World none(Fixture("laptop"), {Site("cu13")}, {}, NoGpu());
  EXPECT_EQ(CheckG7(none.facts).status, CheckStatus::kSkip);
  World hopper(Fixture("discrete"), {Site("cu13")}, {}, WithCc(9, 0));
  auto r = CheckG7(hopper.facts);
  EXPECT_EQ(r.status, CheckStatus::kSkip);
  EXPECT_NE(r.summary.find("9.0"), std::string::npos);
  World no_pkg(Fixture("gb10"), {Site("cu12")});
  EXPECT_EQ(CheckG7(no_pkg.facts).status, CheckStatus::kPass);
}

TEST(G9, ContainerPassesBarePipWarnsWithPins) {
  World ngc(BuildArtifact("roots/ngc"), {},
            {{"NVIDIA_PRODUCT_NAME", "PyTorch"},
             {"NVIDIA_PYTORCH_VERSION", "25.10"},
             {"PIP_CONSTRAINT", "/etc/pip/constraint.txt"}});
  auto r = CheckG9(ngc.facts);
  EXPECT_EQ(r.status, CheckStatus::kPass) << Joined(r);
  EXPECT_EQ(r.summary, "running in an NGC PyTorch 25.10 container (docker)");
  World bare(Fixture("gb10"), {Site("mixed")});
  auto b = CheckG9(bare.facts);
  EXPECT_EQ(b.status, CheckStatus::kWarn);
  EXPECT_NE(b.summary.find("torch 2.9.1+cu130 requires triton==3.5.1; installed 3.4.0"), std::string::npos)
      << b.summary;
  World ok(Fixture("gb10"), {Site("cu12")});
  auto o = CheckG9(ok.facts);
  EXPECT_EQ(o.status, CheckStatus::kWarn);
  EXPECT_NE(o.summary.find("pin(s) agree"), std::string::npos) << o.summary;
  EXPECT_NE(Joined(o).find("xformers 0.0.32.post2 requires torch==2.8.0; installed 2.8.0+cu128"), std::string::npos);
}

TEST(G9, AnyExactPinThatDisagreesWarnsNamingBothPackages) {
  World w(Fixture("gb10"), {Site("venv")});
  auto r = CheckG9(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn) << Joined(r);
  EXPECT_NE(r.summary.find("torchao 0.9.0 requires torch==2.9.0; installed 2.9.1+cu130"), std::string::npos)
      << r.summary;
  EXPECT_EQ(Joined(r).find("pytest"), std::string::npos) << Joined(r);  // extras do not pin
}

TEST(G9, ShadowedTorchInstallsAreDrift) {
  World w(Fixture("gb10"), {Site("cu13"), Site("cu12")});
  auto r = CheckG9(w.facts);
  EXPECT_EQ(r.status, CheckStatus::kWarn);
  EXPECT_NE(r.summary.find("2 torch installs on sys.path"), std::string::npos) << r.summary;
  auto g1 = CheckG1(w.facts);  // the first torch on the path wins, as in Python
  EXPECT_NE(g1.summary.find("2.9.1+cu130"), std::string::npos) << g1.summary;
  EXPECT_NE(Joined(g1).find("2 torch installs on the path"), std::string::npos);
}

TEST(Container, MarkersUnderRoot) {
  struct Case {
    std::vector<std::pair<std::string, std::string>> files;
    Env env;
    std::string engine;  ///< "" = not a container
  };
  const Case cases[] = {
      {{{"run/.containerenv", "engine=\"podman-4.9\"\n"}}, {}, "podman"},
      {{{"proc/1/cgroup", "0::/\n"}}, {}, ""},  // cgroup v2 private namespace: no marker by itself
      {{{"proc/1/cgroup", "0::/\n"},
        {"proc/self/mountinfo", "22 1 0:21 / / rw,relatime - overlay overlay rw,lowerdir=/l\n"}},
       {},
       "container"},
      {{{"proc/self/mountinfo",
         "30 22 8:1 /var/lib/docker/containers/ab/hostname /etc/hostname rw - ext4 /dev/sda1 rw\n"}},
       {},
       "docker"},
      {{}, {{"container", "oci"}}, "oci"},
      {{{"proc/1/cgroup", "0::/user.slice\n"}}, {}, ""},
  };
  for (const auto& c : cases) {
    testing::TempDir root;
    for (const auto& [path, text] : c.files) root.Write(path, text);
    std::ostringstream o, e;
    Context ctx{GlobalOptions{root.path(), "none", "none", false}, HostFs(root.path()), c.env, o, e};
    ContainerInfo info = DetectContainer(ctx);
    EXPECT_EQ(info.in_container, !c.engine.empty()) << c.engine;
    if (!c.engine.empty()) {
      EXPECT_EQ(info.engine, c.engine);
    }
  }
  testing::TempDir ngc;
  ngc.Write(".dockerenv", "");
  ngc.Write("proc/1/environ", std::string("NVIDIA_PRODUCT_NAME=PyTorch\0NVIDIA_PYTORCH_VERSION=25.10\0", 57));
  std::ostringstream o, e;
  Context ctx{GlobalOptions{ngc.path(), "none", "none", false}, HostFs(ngc.path()), {}, o, e};
  ContainerInfo info = DetectContainer(ctx);
  EXPECT_EQ(info.ngc_release, "25.10");
  EXPECT_EQ(info.ngc_product, "PyTorch");
}

TEST(Container, ParsersAndEnvironment) {
  EXPECT_EQ(ParseCgroupEngine("12:memory:/docker/0123abcd\n"), "docker");
  EXPECT_EQ(ParseCgroupEngine("0::/kubepods/besteffort/pod1\n"), "kubernetes");
  EXPECT_EQ(ParseCgroupEngine("0::/machine.slice/libpod-1.scope\n"), "podman");
  EXPECT_EQ(ParseCgroupEngine("0::/\n"), "");  // cgroup v2 private namespace: no marker
  EXPECT_EQ(ParseCgroupEngine("0::/user.slice/user-1000.slice\n"), "");
  EXPECT_EQ(ParseCudaVersionJson(R"({"cuda": {"name": "CUDA SDK", "version": "13.0.2"}})"), "13.0.2");
  EXPECT_EQ(ParseCudaVersionJson("{}"), std::nullopt);
  EXPECT_EQ(ParseCudaVersionJson("garbage"), std::nullopt);
  EXPECT_EQ(BitsandbytesObjectName("13.0", ""), "libbitsandbytes_cuda130.so");
  EXPECT_EQ(BitsandbytesObjectName("12.8", "12.6"), "libbitsandbytes_cuda126.so");
  EXPECT_EQ(BitsandbytesObjectName("", ""), "libbitsandbytes_cpu.so");
}

TEST(PythonDiscovery, ProbeAndSiteDirs) {
  auto p = ParsePythonProbe("/v\n/usr\n3.12\n/usr/lib/python312.zip\n/usr/lib/python3.12\n/extra/site-packages\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, "3.12");
  auto venv = SiteDirsFromProbe(*p, "/home/u", false);
  EXPECT_EQ(venv, (std::vector<std::string>{"/extra/site-packages", "/v/lib/python3.12/site-packages",
                                            "/v/local/lib/python3.12/dist-packages", "/v/lib/python3/dist-packages"}));
  auto with_system = SiteDirsFromProbe(*p, "/home/u", true);
  EXPECT_NE(std::find(with_system.begin(), with_system.end(), "/usr/lib/python3/dist-packages"), with_system.end());
  PythonProbe sys{"/usr", "/usr", "3.11", {}};
  auto s = SiteDirsFromProbe(sys, "/home/u", false);
  EXPECT_EQ(s.front(), "/home/u/.local/lib/python3.11/site-packages");  // user site outside a venv
  EXPECT_FALSE(ParsePythonProbe("/usr\n"));
}

TEST(PythonDiscovery, OrderOfSources) {
  testing::TempDir venv;
  venv.Write("lib/python3.12/site-packages/x-1.0.dist-info/METADATA", "Name: x\nVersion: 1.0\n");
  testing::TempDir conda;
  conda.Write("lib/python3.11/site-packages/y-1.0.dist-info/METADATA", "Name: y\nVersion: 1.0\n");
  std::ostringstream o, e;
  Context ctx{GlobalOptions{Fixture("laptop"), "none", "none", false},
              HostFs(Fixture("laptop")),
              {{"VIRTUAL_ENV", venv.path()}, {"CONDA_PREFIX", conda.path()}},
              o,
              e};
  auto env = DiscoverPython(ctx, "", {});
  ASSERT_TRUE(env);
  EXPECT_EQ(env->source, "VIRTUAL_ENV=" + venv.path());
  ctx.env.erase("VIRTUAL_ENV");
  env = DiscoverPython(ctx, "", {});
  ASSERT_TRUE(env);
  EXPECT_EQ(env->site_dirs, std::vector<std::string>{conda.path() + "/lib/python3.11/site-packages"});
  ctx.env.clear();
  env = DiscoverPython(ctx, "", {});  // --root: the real python3 is never asked
  ASSERT_FALSE(env);
  EXPECT_EQ(env.error().kind, Error::Kind::kNotFound);
  auto bad = DiscoverPython(ctx, "/nonexistent/python3", {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, Error::Kind::kInput);
  EXPECT_NE(bad.error().message.find("--python /nonexistent/python3"), std::string::npos);
}

TEST(PythonDiscovery, RunsTheInterpreterWithMinusS) {
  // A fake interpreter that records its arguments and prints a probe answer.
  testing::TempDir d;
  d.Write("venv/lib/python3.12/site-packages/.keep", "");
  std::string py = d.Write("python3", "#!/bin/sh\necho \"$@\" > " + d.path() + "/args\necho " + d.path() +
                                          "/venv\necho /usr\necho 3.12\n");
  std::filesystem::permissions(py, std::filesystem::perms::owner_all);
  std::ostringstream o, e;
  Context ctx{GlobalOptions{}, HostFs("/"), {{"PATH", "/usr/bin:/bin"}}, o, e};
  auto env = DiscoverPython(ctx, py, {});
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->site_dirs, std::vector<std::string>{d.path() + "/venv/lib/python3.12/site-packages"});
  EXPECT_EQ(testing::ReadFileOrDie(d.path() + "/args").substr(0, 6), "-S -c ");
}

// A venv's python3 run with -S reports the BASE prefix (site is what moves sys.prefix into the
// venv): found on a real machine, where G1 read /usr's dist-packages and missed the venv's torch.
// Discovery finds the venv from pyvenv.cfg beside the interpreter, as site does.
TEST(PythonDiscovery, VenvInterpreterOnPathIsFoundThroughPyvenvCfg) {
  testing::TempDir d;
  d.Write("base/lib/python3.12/site-packages/.keep", "");
  d.Write("venv/lib/python3.12/site-packages/torch-2.11.0.dist-info/METADATA", "Name: torch\nVersion: 2.11.0\n");
  d.Write("venv/pyvenv.cfg", "home = /usr/bin\nimplementation = CPython\ninclude-system-site-packages = false\n");
  std::string py =
      d.Write("venv/bin/python3", "#!/bin/sh\necho " + d.path() + "/base\necho " + d.path() + "/base\necho 3.12\n");
  std::filesystem::permissions(py, std::filesystem::perms::owner_all);
  std::ostringstream o, e;
  Context ctx{GlobalOptions{}, HostFs("/"), {{"PATH", d.path() + "/venv/bin:/usr/bin:/bin"}}, o, e};
  auto env = DiscoverPython(ctx, "", {});
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->source, "python3 on PATH (" + py + ")");
  EXPECT_EQ(env->site_dirs, std::vector<std::string>{d.path() + "/venv/lib/python3.12/site-packages"});
  // include-system-site-packages = true: the base prefix's site-packages follow the venv's.
  d.Write("venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = true\n");
  env = DiscoverPython(ctx, "", {});
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->site_dirs, (std::vector<std::string>{d.path() + "/venv/lib/python3.12/site-packages",
                                                      d.path() + "/base/lib/python3.12/site-packages"}));
  // Without a pyvenv.cfg it is the base interpreter: its own site-packages only.
  std::filesystem::remove(d.path() + "/venv/pyvenv.cfg");
  env = DiscoverPython(ctx, "", {});
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->site_dirs, std::vector<std::string>{d.path() + "/base/lib/python3.12/site-packages"});
}

}  // namespace
}  // namespace sparkops
