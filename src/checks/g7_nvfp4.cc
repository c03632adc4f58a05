// G7: NVFP4 is only fast with arch/family-specific Blackwell kernels (docs/checks.md, G7;
// fatbin layout checked on real wheels in docs/preflight-real-wheels.md).
// Needs the compute capability (NVML, else nvidia-smi); reads the .nv_fatbin entry headers of the
// NVFP4 kernel packages and reports three facts per package: runs natively (a cubin for this GPU),
// runs via PTX JIT, has NVFP4-capable (a/f 10.x/12.x) kernels for this GPU.
#include <fmt/format.h>

#include "base/strings.h"
#include "checks/check.h"
#include "checks/python_common.h"
#include "host/cudalink.h"

namespace sparkops {

namespace {
/// Packages whose kernels carry the NVFP4 paths (vLLM, flashinfer, SGLang kernels, TensorRT-LLM).
bool IsFp4Package(const std::string& norm) {
  return norm == "vllm" || StartsWith(norm, "flashinfer") || norm == "sgl-kernel" || norm == "tensorrt-llm" ||
         norm == "tensorrt_llm";
}

/// What one package's device code does on this GPU (union over its objects).
struct PackageCode {
  std::vector<std::string> native, jit, nvfp4, other;  ///< entry names, deduplicated
  std::vector<std::string> unreadable;                 ///< "file: why"
  bool any_code() const { return !native.empty() || !jit.empty() || !other.empty(); }
};

void AddOnce(std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return;
  v.push_back(s);
}

PackageCode ReadPackageCode(const HostFacts& f, const Package& p, std::pair<int, int> cc,
                            std::vector<std::string>& evidence) {
  PackageCode pc;
  for (const auto& obj : p.shared_objects) {
    const auto& info = f.elf(obj);
    std::string rel = RelativeToSite(obj, p.site_dir);
    if (!info) {
      pc.unreadable.push_back(info.error().message);
      continue;
    }
    if (!info->has_fatbin) continue;
    const CudaArchList& l = f.cuda_arches(obj);
    if (!l.known()) {
      pc.unreadable.push_back(rel + ": " + l.note);
      continue;
    }
    std::vector<std::string> names;
    for (const auto& a : l.arches) {
      names.push_back(a.name);
      CudaRun run = RunsOn(a, cc.first, cc.second);
      if (run == CudaRun::kNative) AddOnce(pc.native, a.name);
      else if (run == CudaRun::kJit) AddOnce(pc.jit, a.name);
      else AddOnce(pc.other, a.name);
      if (run != CudaRun::kNo && IsNvfp4Target(a)) AddOnce(pc.nvfp4, a.name);
    }
    evidence.push_back(fmt::format("{} ({}): {}", rel, l.method, names.empty() ? "no device code" : Join(names, " ")));
  }
  return pc;
}

std::string List(const std::vector<std::string>& v) { return v.empty() ? "none" : Join(v, " "); }
}  // namespace

CheckResult CheckG7(const HostFacts& f) {
  CheckResult r{"G7", CheckStatus::kPass, "", {}, ""};
  auto cc = ComputeCapability(f);
  if (!cc) {
    r.status = CheckStatus::kSkip;
    r.summary = "no GPU compute capability readable (" +
                (f.gpu().any()              ? std::string("not reported")
                 : f.gpu().why_none.empty() ? "no GPU"
                                            : f.gpu().why_none) +
                ")";
    return r;
  }
  const std::string ccs = fmt::format("{}.{}", cc->first, cc->second);
  r.evidence.push_back(fmt::format("compute capability {} ({})", ccs, f.gpu().source));
  if (cc->first != 10 && cc->first != 12) {
    r.status = CheckStatus::kSkip;
    r.summary = fmt::format(
        "GPU is compute capability {}: NVFP4 tensor cores exist only on Blackwell (10.x, 12.x), "
        "so the rule does not apply",
        ccs);
    return r;
  }
  for (const char* v : {"FLASHINFER_CUDA_ARCH_LIST", "TORCH_CUDA_ARCH_LIST"})
    if (std::string val = f.ctx().Getenv(v); !val.empty()) r.evidence.push_back(fmt::format("{}={}", v, val));
  if (auto e = NoEnvironment(f, "G7")) {
    e->summary = "compute capability " + ccs + "; " + e->summary;
    e->evidence.insert(e->evidence.begin(), r.evidence.begin(), r.evidence.end());
    return *e;
  }
  r.evidence.push_back(EnvEvidence(*f.python()));
  std::string cache = f.ctx().Getenv("CUDA_CACHE_PATH");
  cache = cache.empty() ? "~/.nv/ComputeCache (CUDA_CACHE_PATH unset)" : cache + " (CUDA_CACHE_PATH)";
  std::vector<std::string> no_code, jit_only, no_fp4, good, unknown;
  for (const auto& p : f.packages().packages) {
    if (!IsFp4Package(p.norm)) continue;
    std::string label = PackageLabel(p);
    PackageCode pc = ReadPackageCode(f, p, *cc, r.evidence);
    for (const auto& u : pc.unreadable) r.evidence.push_back(label + ": unreadable: " + u);
    if (!pc.any_code()) {
      if (!pc.unreadable.empty()) unknown.push_back(label + " (" + pc.unreadable.front() + ")");
      continue;
    }
    r.evidence.push_back(fmt::format("{} on {}: native {}; PTX JIT {}; NVFP4-capable {}; not for this GPU {}", label,
                                     ccs, List(pc.native), List(pc.jit), List(pc.nvfp4), List(pc.other)));
    if (pc.native.empty() && pc.jit.empty()) no_code.push_back(fmt::format("{} (only {})", label, List(pc.other)));
    else if (pc.native.empty()) jit_only.push_back(fmt::format("{} (PTX {})", label, List(pc.jit)));
    if (!pc.native.empty() || !pc.jit.empty()) {
      if (pc.nvfp4.empty()) no_fp4.push_back(label);
      else good.push_back(fmt::format("{} ({})", label, List(pc.nvfp4)));
    }
  }
  const std::string fp4_fix = fmt::format(
      "stay on FP8 (or BF16) with these builds; for NVFP4 use builds with sm_{0}a/sm_{1}0f kernels "
      "(-gencode arch=compute_{1}0f,code=sm_{1}0f or compute_{0}a, CUDA >= 12.9; e.g. a current NGC container)",
      cc->first * 10 + cc->second, cc->first);
  if (!no_code.empty()) {
    r.status = CheckStatus::kFail;
    r.summary = fmt::format("no kernels for compute capability {} in {}: `no kernel image is available`", ccs,
                            Join(no_code, ", "));
    r.fix = "install a build of the named package(s) compiled for this GPU; " + fp4_fix;
    return r;
  }
  std::vector<std::string> warn, fix;
  if (!no_fp4.empty()) {
    warn.push_back(
        fmt::format("{} run{} on {} but ha{} no NVFP4-capable (a/f) kernels for it: NVFP4 will fall "
                    "back or run slower than FP8",
                    Join(no_fp4, ", "), no_fp4.size() == 1 ? "s" : "", ccs, no_fp4.size() == 1 ? "s" : "ve"));
    fix.push_back(fp4_fix);
  }
  if (!jit_only.empty()) {
    warn.push_back(
        fmt::format("{} run{} on {} only via PTX JIT: the first start compiles every kernel (minutes), "
                    "cached in {}",
                    Join(jit_only, ", "), jit_only.size() == 1 ? "s" : "", ccs, cache));
    fix.push_back(
        "keep the JIT cache between runs (a persistent CUDA_CACHE_PATH, CUDA_CACHE_MAXSIZE large enough), "
        "or install a build with native cubins for this GPU");
  }
  if (!warn.empty()) {
    r.status = CheckStatus::kWarn;
    r.summary = Join(warn, "; ");
    r.fix = Join(fix, "; ");
    return r;
  }
  if (!good.empty()) {
    r.summary =
        fmt::format("compute capability {}; native kernels and NVFP4-capable kernels in {}", ccs, Join(good, ", "));
    return r;
  }
  if (!unknown.empty()) {
    r.status = CheckStatus::kSkip;
    r.summary = "compute capability " + ccs + "; could not read the device code of " + Join(unknown, ", ");
    return r;
  }
  r.summary = "compute capability " + ccs +
              "; no NVFP4 kernel package with device code installed (vllm, flashinfer, "
              "sgl-kernel, tensorrt-llm): nothing runs NVFP4 here";
  return r;
}

}  // namespace sparkops
