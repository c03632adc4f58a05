#pragma once
/// `plan --calibrate RUN_DIR...`: a run's measured peak beside the plan it was given (rendered by
/// report/plan.h). A run
/// directory holds `plan.json` (what `sparkops --json plan ...` printed for the job) and
/// `peak.json` (the measured peaks, bytes; a figure the machine did not report is absent or null):
///   {"pool_drop_peak_bytes": N, "gpu_process_peak_bytes": N, "cgroup_memory_peak_bytes": N,
///    "cgroup_memory_peak_source": "memory.peak"|"memory.current", "process_rss_peak_bytes": N}
/// The pool-wide drop of MemAvailable (GB10) is preferred, then NVML's per-process GPU memory, then
/// the job cgroup's peak (CPU-side pages only: the driver's GPU allocations are not charged to a
/// cgroup), then the process RSS; each is compared with the plan's process peak.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops::memory {

struct Calibration {
  std::string dir;
  std::string model, method;
  double predicted = 0, predicted_low = 0, predicted_high = 0;  ///< process peak, bytes
  double measured = 0;       ///< bytes
  std::string measured_what; ///< "pool drop (MemAvailable)", "GPU per-process", "job cgroup (...)", "process RSS"
  double activations = 0, logits = 0, weights = 0;  ///< the plan's components, bytes
};

/// Pure: one run from the two files' texts; input errors name the file and the field.
Result<Calibration> ParseCalibration(std::string_view plan_json, std::string_view peak_json, const std::string& dir);
/// Reads DIR/plan.json and DIR/peak.json (each bounded to 4 MiB).
Result<Calibration> ReadCalibration(const std::string& dir);

}  // namespace sparkops::memory
