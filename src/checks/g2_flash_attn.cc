// G2: flash-attn on the Spark - installed? built for this machine and this torch? and Unsloth's
// auto-detect, which prefers flash-attn over an explicit attn_implementation="sdpa" (docs/checks.md, G2).
#include <fmt/format.h>

#include "base/strings.h"
#include "checks/check.h"
#include "checks/python_common.h"
#include "host/container.h"
#include "host/cudalink.h"
#include "host/ldso.h"

namespace sparkops {

namespace {

const char* kUnslothPatch =
    "to force SDPA under Unsloth, before `import unsloth` run: "
    "import sys; sys.modules['flash_attn'] = None  (Unsloth then takes its no-flash-attn path; "
    "patching HAS_FLASH_ATTENTION after import is too late)";

/// Can any entry of this arch list run (natively or by PTX JIT) on a GPU of compute capability cc?
bool RunsOnCc(const CudaArchList& l, std::pair<int, int> cc) {
  for (const auto& a : l.arches)
    if (RunsOn(a, cc.first, cc.second) != CudaRun::kNo) return true;
  return false;
}

std::string ArchNames(const CudaArchList& l) {
  std::vector<std::string> n;
  for (const auto& a : l.arches) n.push_back(a.name);
  return n.empty() ? std::string("none") : Join(n, " ");
}

}  // namespace

CheckResult CheckG2(const HostFacts& f) {
  if (auto r = NoEnvironment(f, "G2")) return *r;
  CheckResult r{"G2", CheckStatus::kPass, "", {EnvEvidence(*f.python())}, ""};
  const Inventory& inv = f.packages();
  const Package* fa = inv.Find("flash-attn");
  const Package* unsloth = inv.Find("unsloth");
  if (!fa) {
    r.summary = "flash-attn not installed: attention uses PyTorch SDPA (the advice for bare pip)";
    if (unsloth) r.evidence.push_back(PackageLabel(*unsloth) + " installed; without flash-attn it uses xformers/SDPA");
    return r;
  }
  std::string label = PackageLabel(*fa);
  r.evidence.push_back(fa->meta_dir + ": Version " + fa->version);
  ContainerInfo cont = DetectContainer(f.ctx());
  std::string local = fa->version.find('+') == std::string::npos ? "" : fa->version.substr(fa->version.find('+') + 1);
  bool ngc_tag = local.size() >= 4 && local.size() <= 5 && local[2] == '.' && ParseInt(local.substr(0, 2));
  std::string origin = ngc_tag          ? "NGC build (+" + local + ")"
                       : fa->direct_url ? "source/local build (direct_url.json: " + fa->direct_url->url + ")"
                       : cont.in_container
                           ? "installed inside a container"
                           : "installed from a wheel index (" +
                                 (fa->installer.empty() ? std::string("installer unknown") : fa->installer) + ")";
  r.evidence.push_back("origin: " + origin);
  if (!fa->problem.empty()) {
    r.status = CheckStatus::kFail;
    r.summary = label + ": damaged install: " + fa->problem;
    r.fix = "pip uninstall -y flash-attn (SDPA works without it)";
    return r;
  }

  // Native objects: ELF machine vs host, cudart major vs torch, cubin arches.
  const std::string& hm = f.host_machine();
  uint16_t host_em = ElfMachineFromUname(hm);
  const auto& tv = f.torch_version();
  std::optional<int> torch_major;
  if (tv && *tv && (*tv)->cuda) torch_major = CudaMajor(*(*tv)->cuda);
  std::vector<std::string> problems;
  size_t objects = 0;
  bool arches_ok_known = false, arches_bad = false;
  const auto cc = ComputeCapability(f);
  const std::string cc_text = cc ? fmt::format("{}.{}", cc->first, cc->second) : std::string("12.1 (GB10)");
  for (const auto& obj : fa->shared_objects) {
    std::string leaf = obj.substr(obj.rfind('/') + 1);
    if (!StartsWith(leaf, "flash_attn")) continue;
    const auto& info = f.elf(obj);
    std::string rel = RelativeToSite(obj, fa->site_dir);
    if (!info) {
      problems.push_back(info.error().message);
      continue;
    }
    ++objects;
    r.evidence.push_back(fmt::format("{}: ELF {} ({}-bit)", rel, ElfMachineName(info->machine), info->elf_class));
    if (ClassifyObjectCpu(f, *fa, obj, host_em) == ObjectCpu::kForeign)
      problems.push_back(fmt::format("{} is built for {}, this host is {}", rel, ElfMachineName(info->machine), hm));
    for (const auto& n : info->needed) {
      auto m = CudaMajorOfSoname(n);
      if (m && torch_major && *m != *torch_major)
        problems.push_back(fmt::format("{} NEEDs {} but torch is CUDA {}", rel, n, *torch_major));
    }
    if (info->has_fatbin) {
      const CudaArchList& arches = f.cuda_arches(obj);
      if (arches.known()) {
        r.evidence.push_back(fmt::format("{} code ({}): {}", rel, arches.method, ArchNames(arches)));
        bool sm12 = !cc || cc->first == 12;  // the Spark question; other GPUs are not judged here
        if (sm12 && !arches.arches.empty()) {
          if (RunsOnCc(arches, cc.value_or(std::pair{12, 1}))) arches_ok_known = true;
          else arches_bad = true;
        }
      } else {
        r.evidence.push_back(rel + " code: could not tell (" + arches.note + ")");
      }
    }
  }
  if (objects == 0 && problems.empty())
    problems.push_back("no flash_attn*.so native object listed for " + label + " (Python-only or broken install)");
  if (arches_bad && !arches_ok_known)
    problems.push_back("no cubin or PTX that runs on compute capability " + cc_text +
                       ": `no kernel image is available`");
  if (!problems.empty()) {
    r.status = CheckStatus::kFail;
    r.summary = fmt::format("{} ({}) will not work here: {}", label, origin, problems[0]);
    for (size_t i = 1; i < problems.size(); ++i) r.evidence.push_back(problems[i]);
    r.fix =
        "pip uninstall -y flash-attn and use SDPA, or use an NGC PyTorch container (ships a GB10 flash-attn); "
        "a source build takes hours on a Spark (FLASH_ATTN_CUDA_ARCHS=121)";
    return r;
  }
  if (unsloth) {
    r.status = CheckStatus::kWarn;
    r.summary = fmt::format(
        "{} with {}: Unsloth picks flash-attn whenever it imports, regardless of "
        "attn_implementation=\"sdpa\"",
        PackageLabel(*unsloth), label);
    r.fix = kUnslothPatch;
    return r;
  }
  r.summary = fmt::format("{} ({}), {} object(s) built for {}{}", label, origin, objects, ElfMachineName(host_em),
                          torch_major ? fmt::format(", CUDA {} like torch", *torch_major) : std::string());
  return r;
}

}  // namespace sparkops
