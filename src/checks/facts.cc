#include "checks/facts.h"

namespace sparkops {

const Result<MemInfo>& HostFacts::meminfo() const {
  if (!meminfo_) meminfo_ = ReadMemInfo(ctx_.fs);
  return *meminfo_;
}

std::string HostFacts::GpuMemorySummary() const {
  // Filled in by the GPU layer (src/host/nvml, src/telemetry).
  return "not reported (no GPU readable)";
}

}  // namespace sparkops
