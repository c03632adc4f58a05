#include "checks/facts.h"

#include <fmt/format.h>

namespace sparkops {

const Result<MemInfo>& HostFacts::meminfo() const {
  if (!meminfo_) meminfo_ = ReadMemInfo(ctx_.fs);
  return *meminfo_;
}

const GpuSnapshot& HostFacts::gpu() const {
  if (!gpu_) gpu_ = ReadGpuSnapshot(ctx_);
  return *gpu_;
}

const Result<WorkloadScan>& HostFacts::workloads() const {
  if (!workloads_) workloads_ = ListWorkloads(ctx_, gpu());
  return *workloads_;
}

std::string HostFacts::GpuMemorySummary() const {
  const GpuSnapshot& g = gpu();
  if (!g.any()) return "not reported (no GPU readable)";
  const GpuReading& r = g.gpus.front();
  if (!r.error.empty()) return "not reported (GPU stopped answering)";
  std::string s;
  if (r.mem_total_bytes) {
    s = fmt::format("{:.1f} GiB device memory", ToGiB(*r.mem_total_bytes));
    if (r.mem_used_bytes) s += fmt::format(", {:.1f} GiB used", ToGiB(*r.mem_used_bytes));
  } else {
    s = r.unified_memory ? "not reported (unified memory)" : "not reported";
  }
  if (r.processes_known) {
    uint64_t sum = 0;
    size_t unknown = 0;
    for (const auto& p : r.processes) {
      if (p.used_bytes) sum += *p.used_bytes;
      else ++unknown;
    }
    size_t n = r.processes.size();
    if (unknown == 0) s += fmt::format(", {:.1f} GiB held by {} GPU process{}", ToGiB(sum), n, n == 1 ? "" : "es");
    else
      s += fmt::format(", {} GPU process{} ({} not reporting memory; {:.1f} GiB held by the others)", n,
                       n == 1 ? "" : "es", unknown, ToGiB(sum));
  }
  return s;
}

}  // namespace sparkops
