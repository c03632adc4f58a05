// G1: CUDA 12/13 ABI mismatch (decision rules: docs/checks.md, G1). Reads torch/version.py,
// dist-info METADATA/RECORD and the ELF dynamic sections of every native object; resolves each
// CUDA NEEDED entry the way ld.so would. Never imports anything.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/strings.h"
#include "checks/check.h"
#include "checks/python_common.h"
#include "host/cudalink.h"
#include "host/ldso.h"
#include "host/ptxas.h"

namespace sparkops {

namespace {

constexpr size_t kMaxListed = 12;  // evidence lines per list; the rest is counted

void AddList(std::vector<std::string>& ev, const std::vector<std::string>& items) {
  for (size_t i = 0; i < items.size() && i < kMaxListed; ++i) ev.push_back(items[i]);
  if (items.size() > kMaxListed) ev.push_back(fmt::format("... and {} more", items.size() - kMaxListed));
}

const char* kFixCu130 =
    "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu130 "
    "(then rebuild/reinstall the extensions for the same torch), or use an NGC PyTorch container (25.09+)";

/// On a 12.1 GPU: can Triton's ptxas target sm_121a (CUDA >= 12.9)? "" when fine or unknown.
std::string TritonProblem(const HostFacts& f, const std::optional<std::pair<int, int>>& cc,
                          std::vector<std::string>& evidence) {
  if (!cc || *cc != std::pair{12, 1}) return "";
  const Package* triton = f.packages().Find("triton");
  if (!triton) triton = f.packages().Find("pytorch-triton");
  if (!triton) return "";
  auto px = TritonPtxas(f.ctx(), triton->site_dir);
  if (!px) return "";
  if (!px->release) {
    evidence.push_back("Triton ptxas (" + px->chosen_by + "): " + px->error);
    return "";
  }
  evidence.push_back(fmt::format("Triton ptxas {} ({}): release {}.{}", px->path, px->chosen_by, px->release->first,
                                 px->release->second));
  if (*px->release >= std::pair{12, 9}) return "";
  return fmt::format(
      "{}'s ptxas is CUDA {}.{}: it cannot compile sm_121a (needs 12.9+), so Triton kernels "
      "(torch.compile) fail with `ptxas fatal : Value 'sm_121a' is not defined`",
      PackageLabel(*triton), px->release->first, px->release->second);
}

/// "4 distinct CUDA libraries (libcudart.so.12, ...) linked by 5 objects in 2 packages: torch, xformers".
std::string CountLine(const std::vector<PackageLink>& pkgs) {
  std::set<std::string> libs;
  size_t objects = 0;
  std::vector<std::string> names;
  for (const auto& p : pkgs) {
    libs.insert(p.libraries.begin(), p.libraries.end());
    objects += p.objects;
    names.push_back(p.label);
  }
  if (pkgs.empty()) return "no object links a CUDA library";
  std::vector<std::string> shown(libs.begin(), libs.end());
  if (shown.size() > kMaxListed) shown.resize(kMaxListed);
  return fmt::format("{} distinct CUDA librar{} ({}{}) linked by {} object{} in {} package{}: {}", libs.size(),
                     libs.size() == 1 ? "y" : "ies", Join(shown, ", "), libs.size() > shown.size() ? ", ..." : "",
                     objects, objects == 1 ? "" : "s", pkgs.size(), pkgs.size() == 1 ? "" : "s", Join(names, ", "));
}

/// "system CUDA runtimes: libcudart.so.13 in /usr/local/cuda/lib64 (ld.so.conf.d), ..." from the
/// runtime sonames present in ld.so's system dirs; "" when none.
std::string SystemRuntimes(const LdsoEnv& ld) {
  std::vector<std::string> found;
  for (size_t i = 0; i < ld.system_dirs.size(); ++i) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(ld.system_dirs[i], ec)) {
      std::string leaf = e.path().filename().string();
      if (!StartsWith(leaf, "libcudart.so.") || !CudaMajorOfSoname(leaf)) continue;
      found.push_back(
          fmt::format("{} in {} ({})", leaf, ld.system_dirs[i], i < ld.conf_dirs ? "ld.so.conf.d" : "default dir"));
    }
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? "" : "system CUDA runtimes (by soname): " + Join(found, ", ");
}

/// "xformers 0.0.35: 1 object for x86-64 (xformers/_C.so), this host is aarch64" for every package
/// with an object whose ELF machine is not the host's; empty when all match or the host is unknown.
/// Cross-compilation copies (ClassifyObjectCpu) are not counted there; `*cross` counts them.
std::vector<std::string> ForeignObjects(const HostFacts& f, size_t* cross) {
  std::vector<std::string> out;
  const uint16_t host = ElfMachineFromUname(f.host_machine());
  if (host == 0) return out;
  for (const auto& p : f.packages().packages) {
    size_t n = 0;
    std::string first, machine;
    for (const auto& obj : p.shared_objects) {
      const ObjectCpu cpu = ClassifyObjectCpu(f, p, obj, host);
      if (cpu == ObjectCpu::kCrossCopy) ++*cross;
      if (cpu != ObjectCpu::kForeign) continue;
      const auto& info = f.elf(obj);
      if (n++ == 0) {
        first = RelativeToSite(obj, p.site_dir);
        machine = ElfMachineName(info->machine);
      }
    }
    if (n > 0)
      out.push_back(fmt::format("{}: {} object{} for {} ({}{}), this host is {}", PackageLabel(p), n, n == 1 ? "" : "s",
                                machine, first, n > 1 ? ", ..." : "", f.host_machine()));
  }
  return out;
}

/// The NVIDIA wheel that ships a CUDA library, for CUDA `major`: torch's own Requires-Dist line
/// when it names one ("nvidia-cuda-cupti==13.0.48"), else the naming NVIDIA uses (toolkit
/// libraries: "nvidia-cuda-cupti" for 13, "nvidia-cuda-cupti-cu12" for 12; cudnn, nccl, nvshmem,
/// cusparselt carry -cuN on both). "" for a library no wheel is known to ship.
std::string ProvidingWheel(const std::string& soname, int major, const Package* torch) {
  static const std::pair<const char*, const char*> kWheels[] = {{"libcudart.so", "nvidia-cuda-runtime"},
                                                                {"libcupti.so", "nvidia-cuda-cupti"},
                                                                {"libnvrtc.so", "nvidia-cuda-nvrtc"},
                                                                {"libcublasLt.so", "nvidia-cublas"},
                                                                {"libcublas.so", "nvidia-cublas"},
                                                                {"libcufft.so", "nvidia-cufft"},
                                                                {"libcurand.so", "nvidia-curand"},
                                                                {"libcusolver.so", "nvidia-cusolver"},
                                                                {"libcusparseLt.so", "nvidia-cusparselt*"},
                                                                {"libcusparse.so", "nvidia-cusparse"},
                                                                {"libnvJitLink.so", "nvidia-nvjitlink"},
                                                                {"libcudnn.so", "nvidia-cudnn*"},
                                                                {"libnccl.so", "nvidia-nccl*"},
                                                                {"libnvshmem_host.so", "nvidia-nvshmem*"},
                                                                {"libcufile.so", "nvidia-cufile"}};
  for (const auto& [prefix, wheel] : kWheels) {
    if (!StartsWith(soname, std::string(prefix) + ".")) continue;
    std::string base = wheel;
    bool always_suffixed = EndsWith(base, "*");
    if (always_suffixed) base.pop_back();
    const std::string suffixed = base + "-cu" + std::to_string(major);
    if (torch)
      for (const auto& req : torch->requires_dist)
        if (std::string n = NormalizeName(req.name); n == suffixed || (n == base && !always_suffixed && major >= 13))
          return req.name + req.spec;
    return always_suffixed || major < 13 ? suffixed : base;
  }
  return "";
}

/// "cupy-cuda13x" for "cupy-cuda12x", "x-cu13" for "x-cu12": the distribution named for CUDA
/// `major` beside one named for another major; "" when the name carries no CUDA major.
std::string CudaMajorSibling(std::string_view norm, int major) {
  for (std::string_view tail : {"-cuda12x", "-cuda11x", "-cuda13x", "-cu12", "-cu11", "-cu13"}) {
    if (!EndsWith(norm, tail)) continue;
    std::string t(tail);
    t.replace(t.find_first_of("0123456789"), 2, std::to_string(major));
    if (EndsWith(norm, t)) return "";
    return std::string(norm.substr(0, norm.size() - tail.size())) + t;
  }
  return "";
}

/// What to do about the package whose own objects need a runtime that does not match or load.
std::string BlameFix(const PackageLink& p, const std::string& torch_cuda, const Package* torch) {
  auto torch_major = CudaMajor(torch_cuda);
  if (p.norm == "torch") {
    std::vector<std::string> wheels;
    for (const auto& m : p.missing)
      if (auto major = CudaMajorOfSoname(m))
        if (std::string w = ProvidingWheel(m, *major, torch); !w.empty())
          wheels.push_back(fmt::format("{} (provides {})", w, m));
    if (!wheels.empty())
      return "pip install " + Join(wheels, " ") +
             ": torch's CUDA runtime wheels are incomplete (or reinstall torch: " + kFixCu130 + ")";
    return "reinstall torch: " + std::string(kFixCu130);
  }
  std::vector<std::string> majors;
  for (int m : p.majors) majors.push_back(std::to_string(m));
  if (torch_major && !p.majors.empty() && !p.majors.contains(*torch_major)) {
    if (std::string sib = CudaMajorSibling(p.norm, *torch_major); !sib.empty())
      return fmt::format("{} is the CUDA {} build (torch is CUDA {}): pip uninstall -y {} && pip install {}", p.label,
                         Join(majors, "/"), torch_cuda, p.name, sib);
    if (p.norm == "sgl-kernel")
      return fmt::format(
          "{} is the CUDA {} build (the PyPI sgl-kernel wheel is built for CUDA 12; torch is CUDA {}): install "
          "the CUDA 13 build from the SGLang project's release wheels (tagged +cu130), or use an SGLang container "
          "for CUDA 13",
          p.label, Join(majors, "/"), torch_cuda);
    std::string tag = torch_cuda;
    std::erase(tag, '.');
    return fmt::format(
        "{} is built for CUDA {} (torch is CUDA {}): install a cu{} build of {} or uninstall it "
        "(pip uninstall -y {})",
        p.label, Join(majors, "/"), torch_cuda, tag, p.name, p.name);
  }
  std::vector<std::string> wheels;
  for (const auto& m : p.missing)
    if (auto major = CudaMajorOfSoname(m))
      if (std::string w = ProvidingWheel(m, *major, torch); !w.empty()) wheels.push_back(w);
  if (!wheels.empty())
    return fmt::format("{}: pip install {} (provides {}), or reinstall {} built for torch's CUDA{}", p.label,
                       Join(wheels, " "), Join(std::vector<std::string>(p.missing.begin(), p.missing.end()), ", "),
                       p.name, torch_cuda.empty() ? std::string() : " " + torch_cuda);
  return fmt::format("{}: install the runtime wheel that provides {} (or reinstall {} built for torch's CUDA{})",
                     p.label, Join(std::vector<std::string>(p.missing.begin(), p.missing.end()), ", "), p.name,
                     torch_cuda.empty() ? std::string() : " " + torch_cuda);
}

}  // namespace

CheckResult CheckG1(const HostFacts& f) {
  if (auto r = NoEnvironment(f, "G1")) return *r;
  CheckResult r{"G1", CheckStatus::kPass, "", {}, ""};
  const PythonEnv& env = *f.python();
  r.evidence.push_back(EnvEvidence(env));
  const Inventory& inv = f.packages();
  const Package* torch = inv.Find("torch");
  std::string gpu_why;
  bool gpu_host = IsGpuHost(f, &gpu_why);
  r.evidence.push_back(gpu_why);
  HostCuda host = HostCudaVersion(f);
  r.evidence.push_back(host.major ? fmt::format("host CUDA {} (from {})", host.text, host.from)
                                  : std::string("host CUDA version unknown (no NVML driver version; no "
                                                "/usr/local/cuda version.json, version.txt, cuda-X.Y link or "
                                                "libcudart.so.N)"));
  if (host.from_driver && !host.toolkit.empty()) r.evidence.push_back(host.toolkit);

  std::string torch_cuda;
  std::string torch_label;
  for (const auto& p : inv.packages)
    if (!p.problem.empty() && IsCudaExtensionPackage(p.norm)) r.evidence.push_back("damaged metadata: " + p.problem);
  if (torch) {
    torch_label = PackageLabel(*torch);
    if (!torch->problem.empty()) {
      r.status = CheckStatus::kFail;
      r.summary = fmt::format("{}: damaged install: {}", torch_label, torch->problem);
      r.fix = "reinstall torch: " + std::string(kFixCu130);
      return r;
    }
    const auto& tv = f.torch_version();
    if (tv && !*tv) {
      r.status = CheckStatus::kFail;
      r.summary = fmt::format("{}: damaged install: {}", torch_label, tv->error().message);
      r.fix = "reinstall torch: " + std::string(kFixCu130);
      return r;
    }
    if (tv && *tv) {
      const TorchVersion& t = **tv;
      torch_cuda = t.cuda.value_or("");
      r.evidence.push_back(fmt::format("{}/torch/version.py: __version__ = '{}', cuda = {}", torch->site_dir, t.version,
                                       t.cuda ? "'" + *t.cuda + "'" : std::string("None")));
      if (PublicVersion(t.version) != PublicVersion(torch->version)) {
        r.status = CheckStatus::kFail;
        r.summary = fmt::format("torch half-overwritten: {} says {}, torch/version.py says {}",
                                torch->meta_dir.substr(torch->meta_dir.rfind('/') + 1), torch->version, t.version);
        r.fix = "pip uninstall -y torch (repeat until none is left), then reinstall: " + std::string(kFixCu130);
        return r;
      }
      if (std::string ngc = NgcRelease(t.version); !ngc.empty())
        r.evidence.push_back("NGC build " + ngc + ": no +cu tag is expected; CUDA is read from version.py");
    }
    if (inv.FindAll("torch").size() > 1)
      r.evidence.push_back(
          fmt::format("{} torch installs on the path; the first one is used", inv.FindAll("torch").size()));
  }

  LdsoEnv ld = MakeLdsoEnv(f.ctx(), env.site_dirs);
  if (torch && torch_cuda.empty()) ld.pip_nvidia_dirs.clear();  // a CPU-only torch preloads no nvidia/*/lib
  if (!ld.exe.empty())
    r.evidence.push_back(fmt::format("interpreter {}: DT_RPATH {}", ld.exe,
                                     ld.exe_rpath.empty() ? std::string("none") : Join(ld.exe_rpath, ":")));
  if (std::string sys = SystemRuntimes(ld); !sys.empty()) r.evidence.push_back(sys);
  LinkReport links = AnalyzeCudaLinks(inv, ld, torch_cuda, f.ctx().Getenv("BNB_CUDA_VERSION"),
                                      [&](const std::string& p) { return f.elf(p); });
  const std::vector<PackageLink> by_pkg = LinksByPackage(links);
  r.evidence.push_back(fmt::format("{} native objects read; {}", links.objects_read, CountLine(by_pkg)));
  for (const auto& [major, who] : links.majors)
    r.evidence.push_back(fmt::format("CUDA {} pinned by {} object(s)", major, who.size()));
  std::vector<std::string> resolved;
  for (const auto& o : links.objects)
    for (const auto& n : o.needs)
      resolved.push_back(fmt::format("{}: {} NEEDs {} -> {}", o.package, o.path.substr(o.path.rfind('/') + 1), n.soname,
                                     n.found ? *n.found + " (" + n.via + ")" : std::string("NOT FOUND")));
  AddList(r.evidence, resolved);
  for (const auto& n : links.notes) r.evidence.push_back(n);
  for (const auto& d : links.damaged) r.evidence.push_back("unreadable object: " + d);

  // Objects built for another CPU fail at import (`wrong ELF class` / `cannot open shared object`).
  size_t cross = 0;
  auto foreign = ForeignObjects(f, &cross);
  if (cross > 0)
    r.evidence.push_back(
        fmt::format("{} object{} for another CPU beside a same-named one for {} in the same package "
                    "(cross-compilation copies, not loaded here): not counted",
                    cross, cross == 1 ? "" : "s", f.host_machine()));
  if (!foreign.empty()) {
    r.status = CheckStatus::kFail;
    r.summary = "native code for another CPU: " + Join(foreign, "; ");
    r.fix = fmt::format(
        "reinstall the named package(s) from {} wheels (pip install --force-reinstall --no-deps NAME), "
        "or recreate the environment on this machine",
        f.host_machine());
    return r;
  }
  // Rule 1: CPU-only torch on a GPU host.
  if (torch && torch_cuda.empty()) {
    if (gpu_host) {
      r.status = CheckStatus::kFail;
      r.summary = fmt::format("{} is a CPU-only build (torch.version.cuda is None) on a GPU host", torch_label);
      r.fix = kFixCu130;
      return r;
    }
    r.summary = fmt::format("{} is a CPU-only build; no GPU on this host, so nothing to mismatch", torch_label);
    return r;
  }
  // Rule 4: a NEEDED CUDA library that ld.so will not find = ImportError at import time.
  if (!links.unresolved.empty()) {
    r.status = CheckStatus::kFail;
    r.evidence.push_back("unresolved (the later `ImportError: ...: cannot open shared object file`):");
    AddList(r.evidence, links.unresolved);
    std::vector<std::string> blamed, fixes;
    std::set<std::string> missing;  // distinct libraries, not object x library references
    for (const auto& p : by_pkg) {
      if (p.missing.empty()) continue;
      missing.insert(p.missing.begin(), p.missing.end());
      blamed.push_back(fmt::format("{} needs {}", p.label,
                                   Join(std::vector<std::string>(p.missing.begin(), p.missing.end()), ", ")));
      fixes.push_back(BlameFix(p, torch_cuda, torch));
    }
    if (blamed.empty()) {  // only a bitsandbytes per-CUDA object is missing: no ObjectLink to group
      blamed.push_back(links.unresolved[0]);
      fixes.push_back("reinstall the named package built for torch's CUDA" +
                      (torch_cuda.empty() ? std::string() : " (" + torch_cuda + ")"));
    }
    const size_t n = missing.empty() ? links.unresolved.size() : missing.size();
    r.summary = fmt::format("{} CUDA librar{} will not load: {}", n, n == 1 ? "y" : "ies", Join(blamed, "; "));
    r.fix = Join(fixes, "; ");
    return r;
  }
  // Rule 3: more than one CUDA major in one interpreter.
  if (links.majors.size() > 1) {
    std::vector<std::string> parts;
    for (const auto& [major, who] : links.majors) parts.push_back(fmt::format("CUDA {} ({})", major, who.front()));
    r.status = CheckStatus::kFail;
    r.summary = "mixed CUDA majors in one interpreter: " + Join(parts, " vs ");
    auto torch_major = CudaMajor(torch_cuda);
    std::vector<std::string> fixes;
    for (const auto& p : by_pkg)
      if (p.norm != "torch" && torch_major && !p.majors.empty() && !p.majors.contains(*torch_major))
        fixes.push_back(BlameFix(p, torch_cuda, torch));
    r.fix = fixes.empty() ? "make every CUDA extension match torch's CUDA" +
                                (torch_cuda.empty() ? std::string() : " (" + torch_cuda + ")") + ": " + kFixCu130
                          : Join(fixes, "; ");
    return r;
  }
  if (!torch) {
    if (links.objects.empty()) {
      r.status = CheckStatus::kSkip;
      r.summary = "torch is not installed in this environment and nothing links CUDA";
    } else {
      r.summary = fmt::format("torch not installed; {} CUDA-linked objects, one CUDA major, all resolved",
                              links.objects.size());
    }
    return r;
  }
  auto torch_major = CudaMajor(torch_cuda);
  std::string ngc = f.torch_version() && *f.torch_version() ? NgcRelease((*f.torch_version())->version) : "";
  std::string what =
      fmt::format("{} (CUDA {}{})", torch_label, torch_cuda, ngc.empty() ? "" : ", NGC " + ngc + " build");
  // Only the driver's CUDA version bounds what a wheel can use (pip torch brings its own runtime);
  // an older toolkit in /usr/local/cuda does not.
  if (torch_major && host.major && host.from_driver && *host.major < *torch_major) {
    r.status = CheckStatus::kFail;
    r.summary = fmt::format("{} needs a CUDA {} driver; the host reports CUDA {}", what, *torch_major, host.text);
    r.fix = "update the NVIDIA driver, or install torch built for CUDA " + std::to_string(*host.major);
    return r;
  }
  auto cc = ComputeCapability(f);
  std::string triton_problem = TritonProblem(f, cc, r.evidence);
  bool cuda13_host = (host.major && *host.major >= 13) || (cc && cc->first == 12 && cc->second == 1);
  if (torch_major && *torch_major < 13 && cuda13_host) {
    r.status = CheckStatus::kWarn;
    r.summary = fmt::format(
        "{} on a CUDA 13 host: consistent, runs through sm_120 cubins with a capability "
        "warning",
        what);
    r.evidence.push_back(
        "cu128/cu129 torch runs on GB10 (12.1) through binary-compatible sm_120 cubins with only a "
        "capability warning (pytorch/pytorch#172629); mixing CUDA majors is what breaks");
    r.fix = kFixCu130;
    return r;
  }
  if (!triton_problem.empty()) {
    r.status = CheckStatus::kWarn;
    r.summary = what + ", but " + triton_problem;
    r.fix = "export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas (CUDA >= 12.9), or a newer triton";
    return r;
  }
  r.summary = fmt::format("{}; {} CUDA-linked objects, one CUDA major, all resolved", what, links.objects.size());
  return r;
}

}  // namespace sparkops
