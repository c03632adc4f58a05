#include "run/run_guard.h"

#include <unistd.h>

#include <algorithm>

#include "guard/event.h"
#include "guard/ledger.h"
#include "host/dropcaches.h"

namespace sparkops::guard {

std::unique_ptr<JobGuard> StartRunGuard(const HostView& ctx, RunRecorder& rec, const std::optional<RunGuardOptions>& o,
                                        pid_t pid, const JobHold* hold) {
  if (!o) return nullptr;
  JobGuardOptions jo;
  jo.config = o->config;
  jo.grace_s = o->grace_s;
  jo.pgid = pid;
  jo.drop_caches_path = ctx.fs.Path(kDropCachesPath);
  if (hold) {
    jo.signal_job = [hold, pid](int sig) { hold->SignalAll(pid, sig); };
    jo.job_alive = [hold, pid] { return hold->Populated(pid); };
  }
  // The cgroup's memory.current, where the memory controller gives one, covers every descendant.
  auto footprint = [&ctx, pid, hold] {
    Footprint f = JobFootprint(ctx, pid);
    if (auto cur = hold ? hold->MemoryCurrent() : std::nullopt) f.rss = std::max(f.rss.value_or(0), *cur);
    return f;
  };
  jo.footprint = footprint;
  if (o->config.kernel_signals) {  // issue 33: from now on, an NVRM no-memory record stops the job
    std::string note;
    if (auto k = KernelWatch::Start(ctx.fs, &note)) jo.kernel = std::make_shared<KernelWatch>(std::move(*k));
    else if (!note.empty() && o->notes)
      *o->notes << "sparkops run: memory guard: " << note << "; NVRM NV_ERR_NO_MEMORY records will not stop the job\n";
  }
  Ledger initial;
  initial.mode = "run", initial.min_available_bytes = o->config.floor, initial.max_pressure = o->config.max_pressure;
  auto ledger =
      std::make_shared<LedgerWriter>(ResolveLedgerDir(ctx.Getenv("SPARKOPS_GUARD_LEDGER"), ::geteuid()), initial);
  if (auto e = ledger->error(); e && o->notes)
    *o->notes << "sparkops run: no guard ledger, so the exporter will not count this guard's actions: " << *e << "\n";
  return std::make_unique<JobGuard>(ctx.fs, std::move(jo), [&rec, ledger, footprint](const ActionRecord& a) {
    ledger->Count(a.action == Action::kFlush ? "flush" : a.killed ? "kill" : "terminate", ToString(a.reason));
    Footprint f;
    if (a.action == Action::kStop) {  // the larger of the reading at 2x the floor and one right after the signal
      Footprint now = footprint();
      auto larger = [](std::optional<uint64_t> x, std::optional<uint64_t> y) {
        return x && y ? std::max(*x, *y) : x ? x : y;
      };
      f = {larger(a.footprint.rss, now.rss), larger(a.footprint.gpu, now.gpu)};
    }
    (void)rec.Event(a.wall, "memory_guard", GuardEventFields(a, f));
  });
}

}  // namespace sparkops::guard
