#include "exporter/collectors.h"
#include "exporter/collection_budget.h"
#include "exporter/kernel_collector.h"

#include <chrono>

#include "telemetry/event_schema.h"
#include "workloads/workload.h"

namespace sparkops {

namespace {

/// Times `fn` (which returns an error message, empty on success) into a CollectorStatus.
template <typename Fn>
CollectorStatus Timed(const char* name, Fn&& fn) {
  auto t0 = std::chrono::steady_clock::now();
  std::string error = fn();
  auto t1 = std::chrono::steady_clock::now();
  CollectorStatus s;
  s.name = name;
  s.success = error.empty();
  s.error = std::move(error);
  s.duration_s = std::chrono::duration<double>(t1 - t0).count();
  return s;
}

}  // namespace

/// The exporter's `kind` label: the server's name (`llama.cpp` as `llamacpp`), `trainer` for every
/// training workload (torchrun, accelerate, trl, ...), else the classifier's name.
std::string WorkloadKindLabel(const Workload& w) {
  if (IsServerKind(w.kind)) return w.kind == WorkloadKind::kLlamaCpp ? "llamacpp" : KindName(w.kind);
  if (w.training) return "trainer";
  return KindName(w.kind);
}

CollectorStatus CollectWorkloads(const HostView& ctx, const GpuSnapshot& gpu, std::vector<WorkloadInfo>& out) {
  ReadBudget budget(CollectionBudget());  // issue 29: the process table read within a total budget
  CollectorStatus status = Timed("workloads", [&]() -> std::string {
    ReadBudgetScope within(budget);
    out.clear();
    auto scan = ListWorkloads(ctx, gpu);  // the same classification as `ps` and G6
    if (!scan) return scan.error().message;
    for (const Workload& w : scan->workloads)
      out.push_back({WorkloadKindLabel(w), w.main.pid, VerdictName(w.verdict), w.PoolBytes()});
    return "";
  });
  status.truncated = budget.reason() ? std::string(BudgetReasonName(*budget.reason())) : "";
  return status;
}

CollectorStatus CollectGuards(const HostView& ctx, std::vector<GuardStatus>& out) {
  return Timed("guard", [&]() -> std::string {
    out.clear();
    std::vector<std::string> problems;
    for (guard::Ledger& l : guard::ReadLedgers(ctx.fs, &problems)) {
      const bool live = guard::LedgerLive(ctx.fs, l);
      out.push_back({std::move(l), live});
    }
    return problems.empty() ? "" : problems.front();  // the good ledgers still count
  });
}

void LogCollectorErrors(std::ostream& err, const std::vector<CollectorStatus>& collectors,
                        std::map<std::string, std::string>* last) {
  for (const CollectorStatus& c : collectors) {
    std::string& before = (*last)[c.name];
    const std::string now = c.success ? "" : c.error;
    if (now != before && !now.empty())
      err << "sparkops exporter: collector " << c.name << ": " << now << "\n" << std::flush;
    before = now;
  }
}

Collector::Collector(const HostView& ctx) : ctx_(ctx) {
  for (const EventType& t : SampleEventTypes())  // every type the detector emits, from 0
    if (t.source == EventSource::kDetector) event_counts_[std::string(t.name)] = 0;
}

Collection Collector::Collect() {
  Collection c;
  if (!sampler_) sampler_.emplace(ctx_, SamplerOptions{.follow_kernel_log = false, .kernel_from = std::nullopt});
  std::vector<SourceRead> reads;
  Sample s = sampler_->Take(&c.gpu, &reads);  // the one sampler of `sample` and `run`
  for (SourceRead& r : reads) c.inputs.collectors.push_back({r.name, r.ok, r.seconds, std::move(r.error)});
  if (!c.gpu.any()) sampler_.reset();  // look for NVML and nvidia-smi again next time, as a new process would
  s.events = events_.Update(s);        // the same rules as `sample` and `run` (telemetry/events.h)
  for (const std::string& e : s.events) {
    auto it = event_counts_.find(DecodeSampleEvent(e).type);
    if (it != event_counts_.end()) ++it->second;
  }
  c.inputs.event_counts = event_counts_;
  c.inputs.collectors.push_back(CollectWorkloads(ctx_, c.gpu, c.inputs.workloads));
  c.inputs.collectors.push_back(CollectGuards(ctx_, c.inputs.guards));  // issue 19
  c.inputs.collectors.push_back(CollectKernel(ctx_, c.inputs.kernel));  // issue 33
  c.inputs.gpus = c.gpu.gpus;
  c.mem = s.mem;
  c.inputs.sample = std::move(s);
  return c;
}

Collection CollectAll(const HostView& ctx) { return Collector(ctx).Collect(); }

PreflightSnapshot RunPreflight(const HostView& ctx, const GpuSnapshot& gpu, const std::optional<MemInfo>& mem) {
  HostFacts facts(ctx, PreflightOptions{});
  facts.SetGpu(gpu);
  if (mem) facts.SetMemInfo(*mem);
  PreflightSnapshot snap;
  for (const CheckDef& c : AllChecks()) snap.results.push_back(RunCheck(c, facts));
  snap.finished = std::chrono::system_clock::now();
  return snap;
}

}  // namespace sparkops
