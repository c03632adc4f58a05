#include "host/gpu.h"

namespace sparkops {

// Placeholder until the NVML / nvidia-smi layer lands.
GpuSnapshot ReadGpuSnapshot(const Context&) {
  GpuSnapshot s;
  s.source = "none";
  s.why_none = "GPU layer not built yet";
  return s;
}

}  // namespace sparkops
