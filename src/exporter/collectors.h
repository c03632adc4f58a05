#pragma once
/// The exporter's data sources, each behind one function so the lead can swap in the sampler's,
/// the workload classifier's and preflight's own readers. Every collector reports its own
/// success and wall time; a failing one costs its series, never the scrape.
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "host/gpu.h"
#include "host/host_view.h"
#include "report/prometheus.h"

namespace sparkops {

/// What one collection round produced (the inputs minus preflight).
struct Collection {
  GpuSnapshot gpu;                        ///< kept for the background preflight run
  std::optional<MemInfo> mem;             ///< kept for the background preflight run
  ExporterInputs inputs;
};

/// GPU + memory + PSI + workloads, each timed. `now` is stamped on the sample.
Collection CollectAll(const HostView& ctx);

/// GPU readings: ReadGpuSnapshot(ctx). Success when at least one GPU was read.
CollectorStatus CollectGpu(const HostView& ctx, GpuSnapshot& out);
/// /proc/meminfo through ReadMemInfo(ctx.fs).
CollectorStatus CollectMemory(const HostView& ctx, std::optional<MemInfo>& out);
/// /proc/pressure/memory "some avg10" (percent). A kernel without PSI is success with no value.
CollectorStatus CollectPressure(const HostView& ctx, std::optional<double>& out);
/// The `ps` workload classification (kind label, pid, verdict, pool bytes); `gpu` gives NVML's
/// per-process memory. Kind labels: server names (vllm, sglang, ollama, llamacpp, tgi), `trainer`
/// for training workloads, else the classifier's name.
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
