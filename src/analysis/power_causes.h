#pragma once
/// Slowdown causes from the power columns (issue 18; the optional spbm hwmon driver), checked
/// over the slowdown's span against the stretch before it:
///  - `prochot`: PROCHOT (the hardware brake) on during the span and new to it (or the clocks fell);
///  - `power_cap`: a firmware limiter's EWMA at >= 97 % of its cap in at least half the span
///    (PL1 = package, SysPL1 = system), the limiter named;
///  - `power_delivery`: DC input under 25 % of the SysPL1 cap while the GPU is busy with the SM
///    clock under 900 MHz in at least half the span (or the sampler's `power_delivery_low`): the
///    degraded power-delivery state, now with evidence.
/// With no power columns recorded, each is ruled out as "not recorded".
#include <string>
#include <vector>

#include "analysis/thermal.h"

namespace sparkops {

inline constexpr double kLimiterAtCap = 0.97;

struct PowerFinding {
  std::string cause;
  int priority;  ///< lower wins: CausePriority (analysis/causes.h)
  std::vector<std::string> evidence;
};

/// Appends findings to `found` and "<cause>: why not" lines to `ruled`.
void ClassifyPower(const std::vector<const ThermalRow*>& before, const std::vector<const ThermalRow*>& span,
                   bool clocks_fell, std::vector<PowerFinding>* found, std::vector<std::string>* ruled);

}  // namespace sparkops
