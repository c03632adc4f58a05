#include "analysis/oom_signature.h"

#include <regex>
#include <vector>

#include "base/strings.h"

namespace sparkops {
namespace {

std::vector<std::string_view> Lines(std::string_view t) {
  std::vector<std::string_view> v;
  size_t start = 0;
  while (start <= t.size()) {
    size_t nl = t.find('\n', start);
    if (nl == std::string_view::npos) nl = t.size();
    std::string_view l = t.substr(start, nl - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    v.push_back(l);
    start = nl + 1;
  }
  return v;
}

bool Has(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }

std::optional<double> ToGiB(const std::string& num, const std::string& unit) {
  auto v = ParseDouble(num);  // never throws: "1.2.3" or "." is simply not a figure
  if (!v) return std::nullopt;
  return unit == "MiB" ? *v / 1024 : (unit == "KiB" ? *v / (1024 * 1024) : *v);
}

std::optional<double> Figure(const std::string& line, const std::regex& re) {
  std::smatch m;
  if (!std::regex_search(line, m, re)) return std::nullopt;
  return ToGiB(m[1].str(), m[2].str());
}

/// A line showing a training step ran (tqdm bar, HF loss dict, "step N", "iter N").
bool IsStepLine(std::string_view l) {
  static const std::regex kStep(R"((\d+/\d+ \[\d+:\d+)|('loss':)|("loss":)|(\b[Ss]tep[ =:]+\d+)|(\biter \d+))");
  return std::regex_search(l.begin(), l.end(), kStep);
}

bool IsBnbFrame(std::string_view l) {
  return Has(l, "bitsandbytes/functional.py") || Has(l, "quantize_4bit") || Has(l, "dequantize_4bit") ||
         Has(l, "Params4bit") || Has(l, "MatMul4Bit") || Has(l, "bitsandbytes/nn/modules.py");
}
bool IsStepFrame(std::string_view l) {
  return Has(l, "backward") || Has(l, "optimizer.step") || Has(l, "training_step") || Has(l, "in step");
}
bool IsLoadFrame(std::string_view l) {
  return Has(l, "from_pretrained") || Has(l, "load_state_dict") || Has(l, "safetensors") ||
         Has(l, "_load_pretrained_model") || Has(l, "dispatch_model") || Has(l, ".to(") || Has(l, "load_checkpoint");
}

}  // namespace

std::string ToString(OomKind k) {
  switch (k) {
    case OomKind::kNone: return "none";
    case OomKind::kTorchCuda: return "torch_cuda_oom";
    case OomKind::kCudaRuntime: return "cuda_runtime_oom";
    case OomKind::kNvrmNoMemory: return "nvrm_no_memory";
    case OomKind::kKernelOomKiller: return "kernel_oom_killer";
    case OomKind::kKilled: return "killed_sigkill";
  }
  return "?";
}
std::string ToString(OomPhase p) {
  switch (p) {
    case OomPhase::kUnknown: return "unknown";
    case OomPhase::kLoad: return "load";
    case OomPhase::kDequant: return "dequantisation";
    case OomPhase::kStep: return "step";
  }
  return "?";
}

OomSignature ParseOomSignature(std::string_view text) {
  static const std::regex kTried(R"(CUDA out of memory\. Tried to allocate ([\d.]+) (GiB|MiB|KiB))");
  static const std::regex kTotal(R"(total capacity of ([\d.]+) (GiB|MiB))");
  static const std::regex kFree(R"(of which ([\d.]+) (GiB|MiB) is free)");
  static const std::regex kOldTotal(R"(; ([\d.]+) (GiB|MiB) total capac)");
  static const std::regex kOldFree(R"(; ([\d.]+) (GiB|MiB|KiB) free;)");
  static const std::regex kInUse(R"(this process has ([\d.]+) (GiB|MiB) memory in use)");
  static const std::regex kAlloc(R"(([\d.]+) (GiB|MiB) is allocated by PyTorch)");
  static const std::regex kOldAlloc(R"(([\d.]+) (GiB|MiB) already allocated)");
  static const std::regex kUnalloc(R"(([\d.]+) (GiB|MiB) is reserved by PyTorch but unallocated)");
  static const std::regex kKernel(R"((?:Memory cgroup )?[Oo]ut of memory: Killed process (\d+) \(([^)]+)\)(?:.*anon-rss:(\d+)kB)?)");
  static const std::regex kNvrm(R"(NVRM: .*NV_ERR_NO_MEMORY)");
  static const std::regex kKilled(R"(^\s*Killed\s*$|exit (status|code) 137|exitcode\s*:?\s*-9\b)");

  OomSignature sig;
  auto lines = Lines(text);
  size_t at = lines.size();
  for (size_t i = 0; i < lines.size() && at == lines.size(); ++i) {
    std::string l(lines[i]);
    if (Has(l, "CUDA out of memory")) {
      sig.kind = OomKind::kTorchCuda;
      sig.tried_gib = Figure(l, kTried);
      sig.total_gib = Figure(l, kTotal);
      if (!sig.total_gib) sig.total_gib = Figure(l, kOldTotal);
      sig.free_gib = Figure(l, kFree);
      if (!sig.free_gib) sig.free_gib = Figure(l, kOldFree);
      sig.process_in_use_gib = Figure(l, kInUse);
      sig.allocated_by_torch_gib = Figure(l, kAlloc);
      if (!sig.allocated_by_torch_gib) sig.allocated_by_torch_gib = Figure(l, kOldAlloc);
      sig.reserved_unallocated_gib = Figure(l, kUnalloc);
    } else if (Has(l, "CUDA error: out of memory") || Has(l, "CUBLAS_STATUS_ALLOC_FAILED") ||
               Has(l, "cudaErrorMemoryAllocation")) {
      sig.kind = OomKind::kCudaRuntime;
    } else if (std::regex_search(l, kNvrm)) {
      sig.kind = OomKind::kNvrmNoMemory;
    } else if (std::smatch m; std::regex_search(l, m, kKernel)) {
      sig.kind = OomKind::kKernelOomKiller;
      if (auto pid = ParseInt(m[1].str())) sig.killed_pid = static_cast<long>(*pid);
      sig.killed_name = m[2].str();
      if (m[3].matched)
        if (auto kb = ParseDouble(m[3].str())) sig.killed_anon_rss_gib = *kb / (1024.0 * 1024.0);
    } else {
      continue;
    }
    sig.line = l;
    at = i;
  }
  if (sig.kind == OomKind::kNone) {  // a bare SIGKILL is the kernel OOM killer's usual trace in a log
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string l(lines[i]);
      if (std::regex_search(l, kKilled)) {
        sig.kind = OomKind::kKilled;
        sig.line = l;
        at = i;
        break;
      }
    }
    if (sig.kind == OomKind::kNone) return sig;
  }
  // The traceback printed above the error line, and whether a step ran before it.
  size_t tb = at;
  while (tb > 0 && !Has(lines[tb], "Traceback (most recent call last)")) --tb;
  if (!Has(lines[tb], "Traceback (most recent call last)")) tb = at;
  bool step_before = false, step_frame = false, load_frame = false;
  for (size_t i = 0; i < tb; ++i) step_before = step_before || IsStepLine(lines[i]);
  for (size_t i = tb; i <= at && i < lines.size(); ++i) {
    sig.bitsandbytes = sig.bitsandbytes || IsBnbFrame(lines[i]);
    step_frame = step_frame || IsStepFrame(lines[i]);
    load_frame = load_frame || IsLoadFrame(lines[i]);
  }
  if (sig.bitsandbytes) sig.phase = OomPhase::kDequant;
  else if (step_frame || step_before) sig.phase = OomPhase::kStep;
  else if (load_frame) sig.phase = OomPhase::kLoad;
  return sig;
}

}  // namespace sparkops
