#include "cli/restart_flags.h"

#include "cli/flags.h"

namespace sparkops {

void RestartFlags::Add(CLI::App& app) {
  app.add_option("--restart-on", on,
                 "start the job again when the memory guard stopped it (guard), when it crashed: a non-zero exit or "
                 "a signal other than Ctrl-C to run (crash), or both (guard,crash); docs/restart.md")
      ->check(NonEmpty());
  max_opt = AddNumber(app, "--max-restarts", max_restarts, {1, kMaxRestartsCeiling, false, true, ""},
                      "restarts at most (default 3)");
  backoff_opt = AddNumber(app, "--restart-backoff", backoff_s, {0, kMaxRestartBackoffS, false, false, "seconds"},
                          "wait before the first restart, doubled for each next one up to 600 s (default 10)");
}

Result<RestartPolicy> RestartFlags::Resolve() const {
  if (on.empty()) {
    if (max_opt && max_opt->count() > 0) return InputError("--max-restarts needs --restart-on");
    if (backoff_opt && backoff_opt->count() > 0) return InputError("--restart-backoff needs --restart-on");
    return RestartPolicy{};
  }
  auto p = ParseRestartOn(on);
  if (!p) return p;
  p->max_restarts = static_cast<int>(max_restarts);
  p->backoff_s = backoff_s;
  return p;
}

}  // namespace sparkops
