#include <fmt/format.h>

#include "base/strings.h"
#include "checks/check.h"
#include "host/meminfo.h"

namespace sparkops {

namespace {

std::string Gib(std::optional<uint64_t> b) {
  return b ? fmt::format("{:.1f} GiB", ToGiB(*b)) : std::string("not reported");
}

/// What to do about one uncapped or near-capacity workload.
std::string FixFor(const Workload& w) {
  switch (w.kind) {
    case WorkloadKind::kVllm:
      return fmt::format("restart vLLM pid {} with --gpu-memory-utilization 0.5 or lower (or --kv-cache-memory-bytes)",
                         w.main.pid);
    case WorkloadKind::kSglang:
      return fmt::format("restart SGLang pid {} with --mem-fraction-static 0.5 or lower", w.main.pid);
    case WorkloadKind::kTgi:
      return fmt::format("restart TGI pid {} with --cuda-memory-fraction 0.5 or lower", w.main.pid);
    case WorkloadKind::kOllama:
      return fmt::format(
          "unload Ollama's models (`ollama stop MODEL`) or set OLLAMA_KEEP_ALIVE=0 / "
          "OLLAMA_MAX_LOADED_MODELS=1 for pid {}",
          w.main.pid);
    case WorkloadKind::kLlamaCpp:
      return fmt::format("restart llama.cpp pid {} with a fixed -c context (and a smaller model or -ngl)", w.main.pid);
    case WorkloadKind::kOtherGpu:
      return fmt::format("check what pid {} is and whether it must share the pool with your run", w.main.pid);
    default:
      return fmt::format("let {} pid {} finish or stop it before starting another heavy job", KindName(w.kind),
                         w.main.pid);
  }
}

}  // namespace

// G6: other heavy ML processes on the one global pool and whether each is capped
// (the one-heavy-job rule, docs/checks.md, applies to uncapped or near-capacity workloads). Same code as `ps`.
CheckResult CheckG6(const HostFacts& f) {
  CheckResult r{"G6", CheckStatus::kPass, "", {}, ""};
  const auto& scan = f.workloads();
  if (!scan) {
    r.status = CheckStatus::kSkip;
    r.summary = "cannot read the process table: " + scan.error().message;
    return r;
  }
  std::vector<std::string> risky, fixes, fine;
  for (const auto& w : scan->workloads) {
    r.evidence.push_back(fmt::format("{} pid {}: cap {}, {} ({}); RSS {}, GPU memory {}", KindName(w.kind), w.main.pid,
                                     w.cap.text, VerdictName(w.verdict), w.reason, Gib(w.TotalRssBytes()),
                                     Gib(w.TotalGpuBytes())));
    if (w.verdict == Verdict::kNearCapacity || w.verdict == Verdict::kUncapped) {
      risky.push_back(
          fmt::format("{} pid {} ({}, cap {})", KindName(w.kind), w.main.pid, VerdictName(w.verdict), w.cap.text));
      fixes.push_back(FixFor(w));
    } else {
      fine.push_back(fmt::format("{} pid {} {}{}", KindName(w.kind), w.main.pid, VerdictName(w.verdict),
                                 w.verdict == Verdict::kCapped ? " at " + w.cap.text : ""));
    }
    if (w.kind == WorkloadKind::kVllm && w.cap.is_default)
      r.evidence.push_back(
          "vLLM's --gpu-memory-utilization default is 0.92 per instance (vllm/config/cache.py); "
          "0.9 is the older default (vLLM PR #2162)");
  }
  r.evidence.push_back(scan->gpu_source == "none" ? "GPU per-process memory: not reported (no GPU readable)"
                                                  : "GPU per-process memory from " + scan->gpu_source);
  r.evidence.push_back("on unified memory RSS and GPU memory overlap (one pool)");
  if (scan->workloads.empty()) {
    r.summary = fmt::format("no inference server or trainer running ({} processes scanned)", scan->processes_scanned);
    return r;
  }
  if (risky.empty()) {
    r.summary = "all capped or idle: " + Join(fine, ", ") +
                " (safe example: vLLM at --gpu-memory-utilization <= 0.5 beside a small LoRA)";
    return r;
  }
  r.status = CheckStatus::kWarn;
  r.summary = fmt::format("{} uncapped or near-capacity on the shared pool: {}; one heavy job at a time", risky.size(),
                          Join(risky, ", "));
  r.fix = Join(fixes, "; ");
  return r;
}

}  // namespace sparkops
