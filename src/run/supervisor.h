#pragma once
/// The supervision loop of `sparkops run`: the job's output (shown live and recorded with arrival
/// times), signals forwarded to its process group (a second Ctrl-C, or the grace period running
/// out, escalates to SIGKILL), and a sampling thread writing thermal.csv, sampler events and
/// process snapshots (process_start / process_exit of other ML workloads) into the run directory.
#include <sys/types.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/host_view.h"
#include "run/job_cgroup.h"
#include "run/restart.h"
#include "run/run_guard.h"
#include "run/run_recorder.h"
#include "telemetry/live_view.h"

namespace sparkops {

struct SuperviseOptions {
  std::vector<std::string> argv;
  double interval_s = 30;  ///< sampling interval, seconds
  double grace_s = 10;     ///< after forwarding SIGINT/SIGTERM/SIGHUP, SIGKILL the group after this
  bool use_pty = false;    ///< output through a pseudo-terminal (when sparkops is on a terminal)
  int live_out_fd = 1, live_err_fd = 2;  ///< where the job's output is shown live (-1: not shown)
  std::optional<guard::RunGuardOptions> guard;  ///< the memory guard (nullopt: --no-guard)
  JobHold* hold = nullptr;  ///< the job's cgroup (or the subreaper fallback); null: its process group only
  /// --restart-on: attempts after the first (disabled: one attempt, no attempt records). Each
  /// attempt has SPARKOPS_ATTEMPT=K (1-based) in its environment, an `attempt_start` event and a
  /// train.log marker (analysis/step_series.h); an attempt followed by another, a `restart` event.
  RestartPolicy restart;
  /// Called during the backoff before attempt `next` (2-based), on this thread: the cache flush,
  /// the checkpoint acknowledgement's removal. Its fields go into the `restart` event.
  std::function<nlohmann::ordered_json(int next)> before_restart;
};

/// One attempt of the job (a run without --restart-on has one).
struct AttemptResult {
  int number = 1;
  SysTime start, end;
  pid_t pid = 0;
  int status = 0;                  ///< code, or 128+signal
  std::optional<int> term_signal;  ///< the signal that ended it, when one did
  AttemptEnd end_reason = AttemptEnd::kSuccess;
  std::optional<double> backoff_s;  ///< the wait before the next attempt (none after the last)
};

struct SuperviseResult {
  int status = 0;                    ///< the job's exit status: code, or 128+signal
  std::optional<int> term_signal;    ///< the signal that ended it, when one did
  std::optional<int> forwarded;      ///< the first signal sparkops forwarded
  bool escalated = false;            ///< SIGKILL was sent (second Ctrl-C or grace expired)
  std::deque<std::string> tail;      ///< the last output lines (for the OOM signature)
  std::vector<Sample> last_samples;  ///< the last few samples (MemAvailable near zero on SIGKILL)
  /// Records the run directory could not take (a full disk): output lines and thermal rows lost,
  /// and the first write error. Writing goes on, so records resume when space returns; the gap is
  /// marked (a `records_lost` event, a `rows_lost:N` event on the next thermal row).
  uint64_t lost_log_lines = 0, lost_rows = 0;
  std::string write_error;
  /// The live view, possibly still writing to a slow reader: Close() it once the run directory
  /// is complete (a paused pager then holds up only what is left to show).
  std::unique_ptr<LiveView> live;
  std::optional<guard::ActionRecord> guard_stop;  ///< set when the memory guard stopped the last attempt
  std::vector<AttemptResult> attempts;            ///< every attempt, the last one's status above
  /// The largest memory.current of the job's cgroup read at the samples (bytes), over all attempts;
  /// absent without a cgroup or its memory controller. memory.peak, where the kernel has it, is exact.
  std::optional<uint64_t> cgroup_current_max;
};

/// Runs the job to completion, again after each end `opts.restart` names. NotFound when it cannot be
/// started (`run` exits 127; a later attempt that cannot start ends the run as a crash, status 127).
/// `on_start` is called with each attempt's pid once it runs (meta.json). The status, signal and
/// guard stop of the result are the last attempt's; tail holds the last attempt's output.
Result<SuperviseResult> Supervise(const HostView& ctx, RunRecorder& rec, const SuperviseOptions& opts,
                                  const std::function<void(pid_t)>& on_start);

}  // namespace sparkops
