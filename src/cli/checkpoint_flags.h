#pragma once
/// `run`'s checkpoint flags (guard/checkpoint.h): --checkpoint-signal, --checkpoint-at,
/// --checkpoint-psi, --checkpoint-grace; resolved against the guard's floor and the run directory.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "base/error.h"
#include "cli/context.h"
#include "guard/checkpoint.h"
#include "guard/policy.h"

namespace sparkops {

struct CheckpointFlags {
  std::string signal;  ///< "" = no checkpoint request
  std::string at;      ///< "" = twice the floor
  std::optional<double> psi;  ///< PSI full avg10 percent; nullopt = half the guard's --max-pressure
  double grace_s = 120;

  void Add(CLI::App& app);
  /// nullopt without --checkpoint-signal. Input errors (naming the flag): a signal not accepted,
  /// a bad level, a level not above the floor, a PSI level not below --max-pressure, the flags
  /// without a guard or --checkpoint-at/-psi/-grace without --checkpoint-signal. The
  /// acknowledgement file is `run_dir`/checkpoint.done.
  Result<std::optional<guard::CheckpointOptions>> Resolve(const Context& ctx, const std::optional<guard::Config>& guard,
                                                          const std::string& run_dir) const;
};

}  // namespace sparkops
