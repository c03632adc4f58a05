#include "cli/flush_guard.h"

#include "host/gpu.h"
#include "workloads/workload.h"

namespace sparkops {

std::vector<std::string> RunningTrainers(const Context& ctx) {
  std::vector<std::string> out;
  auto scan = ListWorkloads(ctx, ReadGpuSnapshot(ctx));  // the same classification as `ps`
  if (!scan) return out;
  for (const Workload& w : scan->workloads)
    if (w.training) out.push_back(w.Describe());
  return out;
}

}  // namespace sparkops
