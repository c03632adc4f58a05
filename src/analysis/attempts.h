#pragma once
/// The attempts of a `run --restart-on` run, read back from its events (`attempt_start`, `restart`,
/// and the last attempt's `exit`), with the time each stop and restart cost (docs/restart.md).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/run_dir.h"
#include "analysis/step_series.h"

namespace sparkops {

struct RunAttempt {
  int number = 0;
  std::optional<int64_t> pid;
  int64_t start_ms = kNoTime;  ///< its attempt_start record
  int64_t end_ms = kNoTime;    ///< its restart record, or the exit record for the last; kNoTime when none
  /// guard, crash (followed by a restart), or for the last: success, guard, crash, user; "" when unknown
  std::string reason;
  std::optional<int64_t> code;  ///< its exit code, or ...
  std::string signal;           ///< ... the signal that ended it ("" when none)
  std::optional<double> backoff_s;  ///< the wait before the next attempt
  /// From this attempt's end to the next attempt's first step (its start when it printed none):
  /// the stop, the backoff and the reload. Absent for the last attempt.
  std::optional<double> lost_s;
};

/// Pure: the attempts in `events` (sorted by time), none for a run without attempt records.
/// `series` gives each attempt's first step time (the first point at or after its start).
std::vector<RunAttempt> ReadAttempts(const std::vector<RunEvent>& events, const StepSeries& series);

/// Pure: the events of the last attempt (from its `attempt_start` on; all of them for a run without
/// attempts). What ended the run (the guard's stop, the OOM ladder's advice) is read from these: an
/// earlier attempt's stop is in the attempts, not in the run's end.
std::span<const RunEvent> LastAttemptEvents(const std::vector<RunEvent>& events);

}  // namespace sparkops
