#pragma once
/// Glue between `sparkops run`'s supervisor and the guard: starts a JobGuard on the job's process
/// group whose actions become `memory_guard` events in the run directory.
#include <sys/types.h>

#include <memory>
#include <optional>
#include <ostream>

#include "guard/checkpoint.h"
#include "guard/watcher.h"
#include "host/host_view.h"
#include "run/job_cgroup.h"
#include "run/run_recorder.h"

namespace sparkops::guard {

/// `run`'s guard settings, resolved (nullopt in SuperviseOptions: --no-guard).
struct RunGuardOptions {
  Config config;
  double grace_s = 10;
  std::ostream* notes = nullptr;  ///< where to say that the guard runs without a ledger (stderr)
  std::optional<CheckpointOptions> checkpoint;  ///< --checkpoint-signal and its level, grace, file
};

/// Starts the guard for the job `pid`: it stops the whole of `hold` (the job's cgroup, or every
/// descendant under the subreaper), or without one the job's process group. Null when `o` is nullopt.
/// With `o->checkpoint`, the checkpoint request signals each process of the job that catches the
/// signal (events `checkpoint_requested`, `checkpoint_saved`).
/// With config.kernel_signals it follows the kernel log from now on (an unreadable log is said once
/// on `notes`).
/// `kernel_from`: the kernel log's mark taken before the job was spawned (a record after it stops the
/// job, even one logged before the guard started); absent: from now on.
std::unique_ptr<JobGuard> StartRunGuard(const HostView& ctx, RunRecorder& rec, const std::optional<RunGuardOptions>& o,
                                        pid_t pid, const JobHold* hold = nullptr,
                                        const std::optional<KmsgMark>& kernel_from = std::nullopt);

}  // namespace sparkops::guard
