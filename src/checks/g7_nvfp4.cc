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

/// Bundled communication/runtime libraries (sgl-kernel 0.3.21 ships mscclpp beside its kernels;
/// wheels vendor nccl, nvshmem, cudart): their device code is not the package's kernels, so their
/// PTX must not make the kernels "run via PTX JIT". Matched on the file name's stem.
bool IsBundledLibrary(std::string_view path) {
  std::string base = ToLower(BaseName(path));
  std::string_view b = base;
  if (StartsWith(b, "_")) b.remove_prefix(1);
  if (StartsWith(b, "lib")) b.remove_prefix(3);
  for (std::string_view n : {"nccl", "mscclpp", "nvshmem", "cudart", "cublas", "cufft", "curand", "cusolver",
                             "cusparse", "nvrtc", "nvjitlink", "cupti", "cudnn", "nvtx", "uccl"})
    if (StartsWith(b, n)) return true;
  return false;
}

/// What one object (or a package's standalone cubins, as one group) does on this GPU.
struct ObjectCode {
  std::string label;  ///< "sgl_kernel/sm100/common_ops.abi3.so", "16017 standalone cubins"
  bool library = false;
  std::vector<std::string> native, jit, nvfp4, other;  ///< entry names, deduplicated
  bool runs() const { return !native.empty() || !jit.empty(); }
};

/// One package's objects with device code, and what could not be read ("file: why").
struct PackageCode {
  std::vector<ObjectCode> objects;
  std::vector<std::string> unreadable;
  bool cubins_only = false;  ///< its device code is standalone cubins only (flashinfer-cubin)
};

void AddOnce(std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return;
  v.push_back(s);
}

std::string List(const std::vector<std::string>& v) { return v.empty() ? "none" : Join(v, " "); }

void Judge(ObjectCode& oc, const CudaArch& a, std::pair<int, int> cc) {
  CudaRun run = RunsOn(a, cc.first, cc.second);
  if (run == CudaRun::kNative) AddOnce(oc.native, a.name);
  else if (run == CudaRun::kJit) AddOnce(oc.jit, a.name);
  else AddOnce(oc.other, a.name);
  if (run != CudaRun::kNo && IsNvfp4Target(a)) AddOnce(oc.nvfp4, a.name);
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
    ObjectCode oc{rel, IsBundledLibrary(obj), {}, {}, {}, {}};
    std::vector<std::string> names;
    for (const auto& a : l.arches) {
      names.push_back(a.name);
      Judge(oc, a, cc);
    }
    evidence.push_back(fmt::format("{} ({}{}): {}", rel, l.method,
                                   oc.library ? "; bundled communication/runtime library, not counted as kernels" : "",
                                   names.empty() ? "no device code" : Join(names, " ")));
    if (!names.empty()) pc.objects.push_back(std::move(oc));
  }
  if (!p.cubins.empty()) {
    ObjectCode oc{fmt::format("{} standalone cubins", p.cubins.size()), false, {}, {}, {}, {}};
    size_t bad = 0;
    for (const auto& c : p.cubins) {
      auto a = ReadCubinArch(c);
      if (!a) {
        if (bad++ == 0) pc.unreadable.push_back(a.error().message);
        continue;
      }
      Judge(oc, *a, cc);
    }
    std::vector<std::string> seen = oc.native;
    seen.insert(seen.end(), oc.other.begin(), oc.other.end());  // cubins: never PTX, so never JIT
    evidence.push_back(
        fmt::format("{} (ELF e_flags): {}{}", oc.label, List(seen), bad ? fmt::format("; {} unreadable", bad) : ""));
    pc.cubins_only = pc.objects.empty();
    if (oc.runs() || !oc.other.empty()) pc.objects.push_back(std::move(oc));
  }
  return pc;
}

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
  r.evidence.push_back(fmt::format("compute capability {} ({})", ccs, ComputeCapabilitySource(f)));
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
  std::vector<std::string> partial, must_jit;
  for (const auto& p : f.packages().packages) {
    if (!IsFp4Package(p.norm)) continue;
    std::string label = PackageLabel(p);
    PackageCode pc = ReadPackageCode(f, p, *cc, r.evidence);
    for (const auto& u : pc.unreadable) r.evidence.push_back(label + ": unreadable: " + u);
    if (pc.objects.empty()) {
      if (!pc.unreadable.empty()) unknown.push_back(label + " (" + pc.unreadable.front() + ")");
      continue;
    }
    // Judge the kernel objects; bundled libraries only when the package has nothing else.
    bool any_kernels = false;
    for (const auto& o : pc.objects) any_kernels |= !o.library;
    ObjectCode all;  // union over the judged objects, for the evidence line
    std::vector<std::string> dead;  // judged objects with no code for this GPU
    bool any_native = false;
    for (const auto& o : pc.objects) {
      if (any_kernels && o.library) continue;
      for (const auto& n : o.native) AddOnce(all.native, n);
      for (const auto& n : o.jit) AddOnce(all.jit, n);
      for (const auto& n : o.nvfp4) AddOnce(all.nvfp4, n);
      for (const auto& n : o.other) AddOnce(all.other, n);
      any_native |= !o.native.empty();
      if (!o.runs()) dead.push_back(fmt::format("{} (only {})", o.label, List(o.other)));
    }
    // Per-arch variants (sgl_kernel/sm90/common_ops.abi3.so beside sm100/...): the loader picks one,
    // so a variant without code for this GPU is fine when a same-named one runs.
    std::erase_if(dead, [&](const std::string& d) {
      for (const auto& o : pc.objects)
        if (o.runs() && !o.library && BaseName(o.label) == BaseName(d.substr(0, d.find(' '))) &&
            o.label != d.substr(0, d.find(' ')))
          return true;
      return false;
    });
    r.evidence.push_back(fmt::format("{} on {}: native {}; PTX JIT {}; NVFP4-capable {}; not for this GPU {}", label,
                                     ccs, List(all.native), List(all.jit), List(all.nvfp4), List(all.other)));
    if (pc.cubins_only && all.native.empty() && all.jit.empty()) {
      must_jit.push_back(fmt::format("{} (only {})", label, List(all.other)));
      continue;
    }
    if (all.native.empty() && all.jit.empty()) {
      no_code.push_back(fmt::format("{} (only {})", label, List(all.other)));
      continue;
    }
    if (!dead.empty()) partial.push_back(fmt::format("{}: {}", label, Join(dead, ", ")));
    if (!any_native) jit_only.push_back(fmt::format("{} (PTX {})", label, List(all.jit)));
    if (all.nvfp4.empty()) no_fp4.push_back(label);
    else good.push_back(fmt::format("{} ({})", label, List(all.nvfp4)));
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
  if (!must_jit.empty()) {
    warn.push_back(
        fmt::format("no prebuilt cubin in {} runs on {}: flashinfer's prebuilt (FP4) kernels will not run here and "
                    "must JIT-compile from source at first use (minutes, needs nvcc)",
                    Join(must_jit, ", "), ccs));
    fix.push_back("keep flashinfer's JIT cache (~/.cache/flashinfer) between runs, or use a build with sm_" +
                  std::to_string(cc->first * 10 + cc->second) + "a/sm_" + std::to_string(cc->first) + "0f kernels");
  }
  if (!partial.empty()) {
    warn.push_back(fmt::format("objects with no code for {} (their ops raise `no kernel image is available`): {}", ccs,
                               Join(partial, "; ")));
    fix.push_back("avoid the ops of the named objects or install a build compiled for this GPU");
  }
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
