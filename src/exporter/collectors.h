#pragma once
/// The exporter's data sources: the sampler of `sample` and `run`, the workload classifier of `ps`,
/// the guards' ledgers, the kernel log and preflight's checks. Every collector reports its own
/// success and wall time; a failing one costs its series, never the scrape.
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "host/gpu.h"
#include "host/host_view.h"
#include "report/prometheus.h"
#include "telemetry/events.h"
#include "telemetry/sampler.h"

namespace sparkops {

/// What one collection round produced (the inputs minus preflight).
struct Collection {
  GpuSnapshot gpu;                        ///< kept for the background preflight run
  std::optional<MemInfo> mem;             ///< kept for the background preflight run
  ExporterInputs inputs;
};

/// The exporter's collection state, kept from one collection to the next: the one `Sampler` of
/// `sample` and `run` (GPU, memory, PSI, power; each source's status becomes a collector's) and
/// its `EventDetector`, whose events (transitions need the previous sample) are counted by type
/// for sparkops_sampler_events_total; then the exporter's own collectors (workloads, guards, the
/// kernel log since boot). One thread at a time (the cache's worker).
class Collector {
 public:
  explicit Collector(const HostView& ctx);
  Collection Collect();

 private:
  const HostView& ctx_;
  std::optional<Sampler> sampler_;  ///< made anew while no GPU answers (a driver loaded after boot)
  EventDetector events_;
  std::map<std::string, uint64_t> event_counts_;  ///< detector events by type since start
};

/// One collection by a new Collector (`exporter --once`): no transitions, so no events.
Collection CollectAll(const HostView& ctx);

/// The `ps` workload classification (kind label, pid, verdict, pool bytes); `gpu` gives NVML's
/// per-process memory. Kind labels: server names (vllm, sglang, ollama, llamacpp, tgi), `trainer`
/// for training workloads, else the classifier's name. Reads within CollectionBudget(); its
/// `truncated` says whether the budget ran out (exporter/collection_budget.h).
CollectorStatus CollectWorkloads(const HostView& ctx, const GpuSnapshot& gpu, std::vector<WorkloadInfo>& out);

/// The memory guards' ledgers under /run (guard/ledger.h), each with whether its guard still runs.
/// A ledger that cannot be parsed fails the collector (naming it); the others still count.
CollectorStatus CollectGuards(const HostView& ctx, std::vector<GuardStatus>& out);

/// Writes each failing collector's error to `err` when it differs from the last one logged for that
/// collector (`*last`: collector -> error), so a lasting failure is one line, not one per scrape.
void LogCollectorErrors(std::ostream& err, const std::vector<CollectorStatus>& collectors,
                        std::map<std::string, std::string>* last);

/// Runs every check of AllChecks() over the given GPU snapshot and meminfo (so preflight never reads NVML
/// concurrently with a scrape). Never throws; a check's own failure is its status.
PreflightSnapshot RunPreflight(const HostView& ctx, const GpuSnapshot& gpu, const std::optional<MemInfo>& mem);

}  // namespace sparkops
