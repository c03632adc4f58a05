// G7: NVFP4 is only fast with kernels built for sm_121a (checks-spec G7, §0.5, §0.6). Needs the
// compute capability (NVML, else nvidia-smi); lists the cubins of the FP4-using packages with
// cuobjdump (5 s timeout), else the .nv_fatbin scan, else says it could not tell.
#include <fmt/format.h>

#include <algorithm>

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
bool HasSm121a(const CudaArchList& l) {
  for (const auto& a : l.arches)
    if (a.name == "sm_121a" || a.name == "sm_120f" || a.name == "sm_121f" || a.name == "compute_121a") return true;
  return false;
}
}  // namespace

CheckResult CheckG7(const HostFacts& f) {
  CheckResult r{"G7", CheckStatus::kPass, "", {}, ""};
  auto cc = ComputeCapability(f);
  if (!cc) {
    r.status = CheckStatus::kSkip;
    r.summary = "no GPU compute capability readable (" +
                (f.gpu().any() ? std::string("not reported") : f.gpu().why_none.empty() ? "no GPU" : f.gpu().why_none) +
                ")";
    return r;
  }
  r.evidence.push_back(fmt::format("compute capability {}.{} ({})", cc->first, cc->second, f.gpu().source));
  if (*cc != std::pair{12, 1}) {
    r.status = CheckStatus::kSkip;
    r.summary = fmt::format("GPU is compute capability {}.{}, not GB10's 12.1: the sm_121a rule does not apply",
                            cc->first, cc->second);
    return r;
  }
  for (const char* v : {"FLASHINFER_CUDA_ARCH_LIST", "TORCH_CUDA_ARCH_LIST"})
    if (std::string val = f.ctx().Getenv(v); !val.empty()) r.evidence.push_back(fmt::format("{}={}", v, val));
  if (auto e = NoEnvironment(f, "G7")) {
    e->summary = "compute capability 12.1; " + e->summary;
    e->evidence.insert(e->evidence.begin(), r.evidence.begin(), r.evidence.end());
    return *e;
  }
  r.evidence.push_back(EnvEvidence(*f.python()));
  std::vector<std::string> with, without, unknown;
  for (const auto& p : f.packages().packages) {
    if (!IsFp4Package(p.norm)) continue;
    bool any_code = false, any_121a = false, any_unknown = false;
    for (const auto& obj : p.shared_objects) {
      const auto& info = f.elf(obj);
      if (!info || !info->has_fatbin) continue;
      const CudaArchList& l = f.cuda_arches(obj);
      std::string rel = RelativeToSite(obj, p.site_dir);
      if (!l.known()) {
        any_unknown = true;
        r.evidence.push_back(rel + ": could not tell (" + l.note + ")");
        continue;
      }
      std::vector<std::string> names;
      for (const auto& a : l.arches) names.push_back(a.name);
      r.evidence.push_back(fmt::format("{} ({}): {}", rel, l.method, names.empty() ? "no device code" : Join(names, " ")));
      bool has = HasSm121a(l);
      any_121a |= has;
      // The fatbin scan reads the cubin's arch number but not its a/f suffix: an "sm_121" cubin
      // found that way may well be sm_121a, so it proves nothing either way.
      bool undecoded = l.method == "fatbin scan" &&
                       std::any_of(l.arches.begin(), l.arches.end(), [](const CudaArch& a) { return a.name == "sm_121"; });
      if (!has && undecoded) any_unknown = true;
      else if (!l.arches.empty()) any_code = true;
    }
    std::string label = PackageLabel(p);
    if (any_121a) with.push_back(label);
    else if (any_code) without.push_back(label);
    else if (any_unknown) unknown.push_back(label);
  }
  if (with.empty() && without.empty() && unknown.empty()) {
    r.summary = "compute capability 12.1; no NVFP4 kernel package installed (vllm, flashinfer, sgl-kernel, "
                "tensorrt-llm): nothing runs NVFP4 here";
    return r;
  }
  if (!without.empty()) {
    r.status = CheckStatus::kWarn;
    r.summary = fmt::format("{} lack{} sm_121a kernels: NVFP4 will fall back or run slower than FP8 on GB10",
                            Join(without, ", "), without.size() == 1 ? "s" : "");
    r.fix = "stay on FP8 (or BF16) with these builds; for NVFP4 use builds compiled with "
            "-gencode arch=compute_121a,code=sm_121a and CUDA >= 13.0 (e.g. a current NGC container)";
    return r;
  }
  if (!with.empty()) {
    r.summary = "compute capability 12.1; sm_121a kernels present in " + Join(with, ", ");
    return r;
  }
  r.status = CheckStatus::kSkip;
  r.summary = "compute capability 12.1; could not tell whether " + Join(unknown, ", ") +
              " carry sm_121a code (no cuobjdump, fatbin unreadable)";
  return r;
}

}  // namespace sparkops
