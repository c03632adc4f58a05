#include "exporter/collectors.h"
#include "exporter/kernel_collector.h"
#include "exporter/power_collector.h"

#include <chrono>

#include "host/meminfo.h"
#include "host/pressure.h"
#include "telemetry/sampler.h"
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

CollectorStatus CollectGpu(const HostView& ctx, GpuSnapshot& out) {
  return Timed("gpu", [&]() -> std::string {
    out = ReadGpuSnapshot(ctx);
    if (out.any()) return "";
    return out.why_none.empty() ? std::string("no GPU readable") : out.why_none;
  });
}

CollectorStatus CollectMemory(const HostView& ctx, std::optional<MemInfo>& out) {
  return Timed("memory", [&]() -> std::string {
    auto m = ReadMemInfo(ctx.fs);
    if (!m) return m.error().message;
    out = *m;
    return "";
  });
}

CollectorStatus CollectPressure(const HostView& ctx, std::optional<double>& out) {
  return Timed("pressure", [&]() -> std::string {
    auto p = ReadMemoryPressure(ctx.fs);
    if (p) {
      if (p->some) out = p->some->avg10;
      return "";
    }
    if (p.error().kind == Error::Kind::kNotFound) return "";  // no PSI in this kernel: nothing to read
    return p.error().message;
  });
}

/// The exporter's `kind` label: the server's name (`llama.cpp` as `llamacpp`), `trainer` for every
/// training workload (torchrun, accelerate, trl, ...), else the classifier's name.
std::string WorkloadKindLabel(const Workload& w) {
  if (IsServerKind(w.kind)) return w.kind == WorkloadKind::kLlamaCpp ? "llamacpp" : KindName(w.kind);
  if (w.training) return "trainer";
  return KindName(w.kind);
}

CollectorStatus CollectWorkloads(const HostView& ctx, const GpuSnapshot& gpu, std::vector<WorkloadInfo>& out) {
  return Timed("workloads", [&]() -> std::string {
    out.clear();
    auto scan = ListWorkloads(ctx, gpu);  // the same classification as `ps` and G6
    if (!scan) return scan.error().message;
    for (const Workload& w : scan->workloads)
      out.push_back({WorkloadKindLabel(w), w.main.pid, VerdictName(w.verdict), w.PoolBytes()});
    return "";
  });
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

Collection CollectAll(const HostView& ctx) {
  Collection c;
  Sample s;
  s.time = std::chrono::system_clock::now();
  c.inputs.collectors.push_back(CollectGpu(ctx, c.gpu));
  c.inputs.collectors.push_back(CollectMemory(ctx, c.mem));
  c.inputs.collectors.push_back(CollectPressure(ctx, s.mem_pressure_some_avg10));
  if (auto h = ReadHostPressure(ctx.fs)) s.host = std::move(h->p);  // cpu/io PSI (issue #24)
  c.inputs.collectors.push_back(CollectWorkloads(ctx, c.gpu, c.inputs.workloads));
  c.inputs.collectors.push_back(CollectPower(ctx, s.power));  // issue 18
  c.inputs.collectors.push_back(CollectGuards(ctx, c.inputs.guards));  // issue 19
  c.inputs.collectors.push_back(CollectKernel(ctx, c.inputs.kernel));  // issue 33
  c.inputs.gpus = c.gpu.gpus;
  if (!c.gpu.gpus.empty()) s.gpu = c.gpu.gpus.front();
  s.mem = c.mem;
  if (c.mem) s.uma = ReadUmaPressure(ctx.fs, *c.mem);  // issue 33
  if (s.gpu) s.gpu_attributed_bytes = GpuAttributedBytes(*s.gpu);  // the sampler's rule, first GPU
  c.inputs.sample = std::move(s);
  return c;
}

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
