#include "run/restart.h"

#include <algorithm>

#include "base/strings.h"

namespace sparkops {

Result<RestartPolicy> ParseRestartOn(std::string_view list) {
  RestartPolicy p;
  if (list.empty()) return InputError("--restart-on: empty; give guard, crash or guard,crash");
  for (std::string_view raw : Split(list, ',')) {
    const std::string item(Trim(raw));
    bool* flag = item == "guard" ? &p.on_guard : item == "crash" ? &p.on_crash : nullptr;
    if (!flag) return InputError("--restart-on '" + std::string(list) + "': '" + item + "' is not guard or crash");
    if (*flag) return InputError("--restart-on '" + std::string(list) + "': '" + item + "' given twice");
    *flag = true;
  }
  return p;
}

std::string_view ToString(AttemptEnd e) {
  switch (e) {
    case AttemptEnd::kSuccess: return "success";
    case AttemptEnd::kGuard: return "guard";
    case AttemptEnd::kCrash: return "crash";
    case AttemptEnd::kUser: return "user";
  }
  return "crash";
}

AttemptEnd ClassifyAttempt(int status, bool forwarded, bool guard_stopped) {
  if (forwarded) return AttemptEnd::kUser;
  if (guard_stopped) return AttemptEnd::kGuard;
  return status == 0 ? AttemptEnd::kSuccess : AttemptEnd::kCrash;
}

bool ShouldRestart(const RestartPolicy& p, AttemptEnd end, int attempt) {
  if (attempt > p.max_restarts) return false;  // attempt K is followed by restart K; N restarts in all
  return (end == AttemptEnd::kGuard && p.on_guard) || (end == AttemptEnd::kCrash && p.on_crash);
}

double RestartBackoff(const RestartPolicy& p, int next) {
  const double cap = std::max(kMaxRestartBackoffS, p.backoff_s);
  double s = p.backoff_s;
  for (int k = 2; k < next && s < cap; ++k) s *= 2;
  return std::min(s, cap);
}

}  // namespace sparkops
