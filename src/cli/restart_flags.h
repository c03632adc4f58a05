#pragma once
/// `run`'s restart flags (run/restart.h, docs/restart.md): --restart-on, --max-restarts,
/// --restart-backoff; resolved into the supervisor's policy.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "run/restart.h"

namespace sparkops {

struct RestartFlags {
  std::string on;  ///< "" = no restart
  int64_t max_restarts = kDefaultMaxRestarts;
  double backoff_s = kDefaultRestartBackoffS;
  CLI::Option *max_opt = nullptr, *backoff_opt = nullptr;  ///< to tell a flag given from its default

  void Add(CLI::App& app);
  /// The policy (disabled without --restart-on). Input errors naming the flag: a bad list, or
  /// --max-restarts / --restart-backoff without --restart-on.
  Result<RestartPolicy> Resolve() const;
};

}  // namespace sparkops
