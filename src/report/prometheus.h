#pragma once
/// Prometheus text exposition format 0.0.4 for `sparkops exporter`. The renderer is pure: it turns
/// hand-built or collected inputs into the /metrics body. Units are base units (bytes, seconds,
/// hertz, watts, joules, degrees Celsius, ratios 0..1). A reading the hardware does not report is
/// omitted (no series), never written as 0.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/timefmt.h"
#include "checks/check.h"
#include "host/gpu.h"
#include "host/kmsg.h"
#include "report/guard_metrics.h"
#include "telemetry/reasons.h"
#include "telemetry/sample.h"

namespace sparkops {

/// One ML process as the workload classification (`ps`) sees it.
struct WorkloadInfo {
  std::string kind;                     ///< vllm, sglang, ollama, llamacpp, tgi, trainer, ...
  uint32_t pid = 0;
  std::string verdict;                  ///< capped, near-capacity, uncapped, idle
  std::optional<uint64_t> pool_bytes;   ///< its use of the shared memory pool, bytes
};

/// How one collector fared on its last run; one failing source costs one series, not the scrape.
struct CollectorStatus {
  std::string name;       ///< gpu, memory, pressure, workloads, preflight
  bool success = false;
  double duration_s = 0;  ///< wall time of the last run, seconds
  std::string error;      ///< why it failed (logged, not exported)
  /// A collector that reads within a budget (host/read_budget.h): "" when it sufficed, else why it
  /// ran out ("time", "bytes"); absent for the others.
  std::optional<std::string> truncated = std::nullopt;
};

/// The last completed background preflight run (every check of AllChecks()).
struct PreflightSnapshot {
  std::vector<CheckResult> results;
  SysTime finished{};
};

/// Everything one /metrics body is made of.
struct ExporterInputs {
  std::vector<GpuReading> gpus;             ///< every readable GPU (empty: no GPU series at all)
  std::optional<Sample> sample;             ///< memory, PSI, GPU-attributed bytes, events of gpus[0]
  std::vector<WorkloadInfo> workloads;
  std::optional<PreflightSnapshot> preflight;  ///< absent until the first run has finished
  std::vector<CollectorStatus> collectors;
  std::vector<GuardStatus> guards;          ///< the memory guards' ledgers (report/guard_metrics.h)
  /// Kernel-log records counted since boot (issue 33, report/kernel_metrics.h); absent when the log
  /// is not readable.
  std::optional<KernelSignals> kernel;
  /// The sampler's EventDetector events by type since the exporter started (every detector type,
  /// from 0); empty for a body made without a detector.
  std::map<std::string, uint64_t> event_counts;
};

/// One metric family the exporter can emit.
struct MetricFamily {
  const char* name;  ///< full name, e.g. "sparkops_gpu_temperature_celsius"
  const char* type;  ///< "gauge" or "counter"
  const char* help;
};

/// Every family RenderMetrics can emit, in output order (the dashboard and rules are checked
/// against this list).
const std::vector<MetricFamily>& MetricFamilies();

/// GPU states derived from one reading (plus the sampler's events for gpus[0]). Absent = cannot tell.
struct GpuStates {
  std::optional<bool> throttled;          ///< any throttling clock-event bit set
  std::optional<bool> pd_degraded;        ///< SM clock < 1400 MHz at >= 80 % util with no reason bit
  std::optional<bool> thermal_signature;  ///< only known when the sampler reported the event
};
GpuStates DeriveGpuStates(const GpuReading& g, const std::vector<std::string>& events);

/// PD-degraded rule thresholds (hoesing/spark-gpu-throttle-check, via research gb10-nvml-behaviour §6).
inline constexpr unsigned kPdDegradedClockMhz = 1400;
inline constexpr unsigned kPdDegradedMinUtilPct = 80;

/// Pure: the /metrics body (text format 0.0.4), families in MetricFamilies() order.
std::string RenderMetrics(const ExporterInputs& in);

/// The sparkops_collection_age_seconds family (HELP, TYPE, value) that the live exporter appends
/// to each body it serves (`exporter --once` has no cache and no age).
std::string CollectionAgeMetric(double seconds);

/// Escapes a label value for the text format (\\, \", \n).
std::string EscapeLabelValue(const std::string& v);

}  // namespace sparkops
