#include "checks/facts.h"

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
  // Filled in by the GPU layer (src/host/nvml, src/telemetry).
  return "not reported (no GPU readable)";
}

}  // namespace sparkops
