#pragma once
/// `run --restart-on guard,crash`: which ends of an attempt start the job again, how long `run`
/// waits first, and what each attempt was (docs/restart.md). Pure: the supervisor applies it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops {

/// Defaults, documented in docs/restart.md.
inline constexpr int kDefaultMaxRestarts = 3;
inline constexpr double kDefaultRestartBackoffS = 10;  ///< before the first restart; doubles each time
inline constexpr double kMaxRestartBackoffS = 600;     ///< the doubling stops here (and --restart-backoff's ceiling)
inline constexpr int kMaxRestartsCeiling = 1000;

struct RestartPolicy {
  bool on_guard = false;  ///< the memory guard stopped the job (floor, pressure, NVRM no-memory)
  bool on_crash = false;  ///< a non-zero exit or a signal other than one `run` forwarded
  int max_restarts = kDefaultMaxRestarts;
  double backoff_s = kDefaultRestartBackoffS;
  bool enabled() const { return on_guard || on_crash; }
};

/// Parses --restart-on: a comma-separated list of `guard` and `crash` (each at most once). Input
/// error naming --restart-on otherwise.
Result<RestartPolicy> ParseRestartOn(std::string_view list);

/// How an attempt ended.
enum class AttemptEnd {
  kSuccess,  ///< exit 0, nothing stopped it
  kGuard,    ///< the memory guard stopped it (whatever its exit status)
  kCrash,    ///< a non-zero exit, or killed by a signal `run` did not forward
  kUser,     ///< `run` forwarded SIGINT/SIGTERM/SIGHUP to it (Ctrl-C): never restarted
};
/// "success", "guard", "crash", "user".
std::string_view ToString(AttemptEnd e);

/// The end of an attempt from its status (code, or 128+signal), whether `run` forwarded a signal
/// to it and whether the guard stopped it. A forwarded signal wins over the guard's stop.
AttemptEnd ClassifyAttempt(int status, bool forwarded, bool guard_stopped);

/// Whether attempt `attempt` (1-based), ended as `end`, is followed by another.
bool ShouldRestart(const RestartPolicy& p, AttemptEnd end, int attempt);

/// Seconds to wait before attempt `next` (2-based: the first restart waits backoff_s), doubling
/// each restart and capped at kMaxRestartBackoffS (or backoff_s when that is larger).
double RestartBackoff(const RestartPolicy& p, int next);

}  // namespace sparkops
