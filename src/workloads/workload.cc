#include "workloads/workload.h"

#include <fmt/format.h>

#include "host/meminfo.h"

namespace sparkops {

const char* KindName(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kVllm: return "vllm";
    case WorkloadKind::kSglang: return "sglang";
    case WorkloadKind::kOllama: return "ollama";
    case WorkloadKind::kLlamaCpp: return "llama.cpp";
    case WorkloadKind::kTgi: return "tgi";
    case WorkloadKind::kTorchrun: return "torchrun";
    case WorkloadKind::kAccelerate: return "accelerate";
    case WorkloadKind::kDeepspeed: return "deepspeed";
    case WorkloadKind::kTrl: return "trl";
    case WorkloadKind::kAxolotl: return "axolotl";
    case WorkloadKind::kUnsloth: return "unsloth";
    case WorkloadKind::kTorchtune: return "torchtune";
    case WorkloadKind::kLlamaFactory: return "llamafactory";
    case WorkloadKind::kPython: return "python";
    case WorkloadKind::kOtherGpu: return "gpu-process";
  }
  return "python";
}

bool IsServerKind(WorkloadKind k) {
  return k == WorkloadKind::kVllm || k == WorkloadKind::kSglang || k == WorkloadKind::kOllama ||
         k == WorkloadKind::kLlamaCpp || k == WorkloadKind::kTgi;
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kCapped: return "capped";
    case Verdict::kNearCapacity: return "near-capacity";
    case Verdict::kUncapped: return "uncapped";
    case Verdict::kIdle: return "idle";
  }
  return "uncapped";
}

namespace {
std::optional<uint64_t> SumKnown(const Workload& w, std::optional<uint64_t> WorkloadProcess::*field) {
  std::optional<uint64_t> sum;
  auto add = [&](const WorkloadProcess& p) {
    if (p.*field) sum = sum.value_or(0) + *(p.*field);
  };
  add(w.main);
  for (const auto& c : w.children) add(c);
  return sum;
}
}  // namespace

std::optional<uint64_t> Workload::TotalRssBytes() const { return SumKnown(*this, &WorkloadProcess::rss_bytes); }
std::optional<uint64_t> Workload::TotalGpuBytes() const { return SumKnown(*this, &WorkloadProcess::gpu_bytes); }
std::optional<uint64_t> Workload::PoolBytes() const {
  if (auto g = TotalGpuBytes()) return g;
  return TotalRssBytes();
}

std::string Workload::Describe() const {
  return fmt::format("{} pid {} (cap {}, {})", KindName(kind), main.pid, cap.text, VerdictName(verdict));
}

GpuMemByPid GpuMemoryByPid(const GpuSnapshot& gpu) {
  GpuMemByPid out;
  for (const auto& g : gpu.gpus)
    for (const auto& p : g.processes) {
      auto& slot = out[p.pid];  // listed: present even without a figure
      if (p.used_bytes) slot = slot.value_or(0) + *p.used_bytes;
    }
  return out;
}

Result<WorkloadScan> ListWorkloads(const HostView& ctx, const GpuSnapshot& gpu) {
  auto procs = ReadProcessTable(ctx.fs);
  if (!procs) return std::unexpected(procs.error());
  for (auto& p : *procs)
    if (!p.argv.empty() && IsPythonInterpreter(p.argv[0])) p.script_head = ReadScriptHead(ctx.fs, p);
  WorkloadScan scan;
  scan.processes_scanned = procs->size();
  if (auto mi = ReadMemInfo(ctx.fs)) scan.mem_total = mi->total;
  scan.gpu_source = gpu.any() ? gpu.source : "none";
  scan.gpu_why_none = gpu.why_none;
  for (const auto& g : gpu.gpus) scan.unified_memory |= g.unified_memory;
  scan.workloads = ClassifyProcesses(*procs, GpuMemoryByPid(gpu), scan.mem_total);
  return scan;
}

}  // namespace sparkops
