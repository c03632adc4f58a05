#include "run/run_guard.h"

#include <algorithm>

#include "guard/event.h"
#include "host/dropcaches.h"

namespace sparkops::guard {

std::unique_ptr<JobGuard> StartRunGuard(const HostView& ctx, RunRecorder& rec, const std::optional<RunGuardOptions>& o,
                                        pid_t pid) {
  if (!o) return nullptr;
  JobGuardOptions jo;
  jo.config = o->config;
  jo.grace_s = o->grace_s;
  jo.pgid = pid;
  jo.drop_caches_path = ctx.fs.Path(kDropCachesPath);
  jo.footprint = [&ctx, pid] { return JobFootprint(ctx, pid); };
  return std::make_unique<JobGuard>(ctx.fs, std::move(jo), [&ctx, &rec, pid](const ActionRecord& a) {
    Footprint f;
    if (a.action == Action::kStop) {  // the larger of the reading at 2x the floor and one right after the signal
      Footprint now = JobFootprint(ctx, pid);
      auto larger = [](std::optional<uint64_t> x, std::optional<uint64_t> y) {
        return x && y ? std::max(*x, *y) : x ? x : y;
      };
      f = {larger(a.footprint.rss, now.rss), larger(a.footprint.gpu, now.gpu)};
    }
    (void)rec.Event(a.wall, "memory_guard", GuardEventFields(a, f));
  });
}

}  // namespace sparkops::guard
