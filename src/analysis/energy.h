#pragma once
/// The energy of a run and of one step (issue 37), from the thermal CSV `run` and `sample` write:
///  - the GPU: the NVML total-energy counter (`energy_j`) where sampled, else the integral of
///    `power_w` over time (trapezoids; the `source` says which);
///  - the system: the integral of the spbm `sys_power_w` rail (DGX Spark with the spbm driver),
///    the whole box at the wall side of the SoC; absent elsewhere.
/// The span is the steps' own (first to last step with a time) when the log has times that the
/// samples cover, else the whole sampled span. Absent figures stay absent, never 0.
#include <cstdint>
#include <optional>
#include <string>

#include "analysis/slowdown.h"
#include "analysis/step_series.h"
#include "analysis/thermal.h"

namespace sparkops {

struct EnergyFigure {
  double wh = 0;
  std::string source;  ///< "nvml energy counter", "integral of power_w", "integral of sys_power_w (spbm)"
};

struct RunEnergy {
  std::optional<EnergyFigure> gpu, system;
  double seconds = 0;  ///< the span the figures cover
  int64_t steps = 0;   ///< steps completed in that span (0: no step figures)
  /// The widest figure: the system where spbm is there, else the GPU.
  const EnergyFigure* Total() const { return system ? &*system : gpu ? &*gpu : nullptr; }
  /// Total Wh / steps; absent without steps or a total.
  std::optional<double> WhPerStep() const;
  /// Tokens processed in the span, where the log prints tokens/s and no step time
  /// (StepSeries::direct_is_s_per_token): the sum over consecutive steps of the time between them ×
  /// the later one's tokens/s; else from HF Trainer's running count (StepSeries::tokens_seen).
  /// Absent otherwise.
  std::optional<double> tokens;
  /// Where `tokens` came from: "tokens/s x time" (above) or, for HF Trainer logs without a
  /// token rate, "num_input_tokens_seen" (the rise of its running count over the span, shared out
  /// by time between logging steps; a count going back, a resume, is not counted).
  std::string tokens_source;
  /// Total Wh / (tokens / 1000); absent without tokens or a total.
  std::optional<double> WhPer1kTokens() const;
};

/// Pure. Absent when the series holds no power or energy readings in the span. A gap between two
/// samples longer than `max_gap_ms` is not bridged (the integral leaves it out).
std::optional<RunEnergy> EnergyOfRun(const ThermalSeries& thermal, const StepSeries& steps,
                                     int64_t max_gap_ms = 60'000);

/// The energy one slowdown cost (issue 37), in the scope of the run's Total() (the system where
/// spbm is there, else the GPU).
struct SlowdownEnergy {
  double wh = 0;           ///< spent over the slowdown's span (the step before its first to its last)
  double baseline_wh = 0;  ///< what its steps would have needed at the baseline: steps × baseline Wh/step
  double baseline_wh_per_step = 0;  ///< the baseline window's own: its energy / the steps in it
  int64_t steps = 0;       ///< steps in the span
  double ExtraWh() const { return wh - baseline_wh; }
};

/// Pure. Absent when the steps have no times, the samples do not cover the span or the baseline
/// window, or either holds no readings of the scope (`system`: sys_power_w; else the GPU's counter,
/// else power_w, as EnergyOfRun picks).
std::optional<SlowdownEnergy> EnergyOfSlowdown(const ThermalSeries& thermal, const StepSeries& steps,
                                               const Detection& d, const Slowdown& s, bool system,
                                               int64_t max_gap_ms = 60'000);

}  // namespace sparkops
