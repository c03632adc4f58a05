#pragma once
/// The memory-guard flags `sparkops run` (and `sparkops guard`) share: --min-available,
/// --max-pressure, --pressure-window, --flush-cache, --kernel-signals, --no-guard; resolved against the host's
/// MemTotal into a guard::Config.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/context.h"
#include "cli/flags.h"
#include "guard/policy.h"

namespace sparkops {

/// `run` exits with this when its memory guard stopped the job (EX_TEMPFAIL: retry with less
/// memory). The memory_guard event in events.jsonl is the authority (a job may exit 75 itself).
inline constexpr int kExitMemoryGuard = 75;

struct GuardFlags {
  std::string min_available;  ///< "" = default
  double max_pressure = guard::kDefaultMaxPressure;
  double pressure_window_s = guard::kDefaultPressureWindow;
  bool flush_cache = false;
  std::string kernel_signals = "on";  ///< --kernel-signals on|off (issue 33)
  bool no_guard = false;

  /// Adds the flags to `app` (`with_off`: also --no-guard).
  void Add(CLI::App& app, bool with_off);
  /// The config: floor resolved against MemTotal (Input error on a bad --min-available, Io error
  /// when /proc/meminfo cannot be read), PSI limit, flush allowed only as root (or under --root).
  /// `warn` gets one line when --flush-cache is refused.
  Result<guard::Config> Resolve(const Context& ctx, std::ostream& warn) const;
};

/// The config for meta.json / the guard's start line (bytes, percent, seconds).
nlohmann::ordered_json GuardConfigJson(const guard::Config& c);

}  // namespace sparkops
