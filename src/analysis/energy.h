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
};

/// Pure. Absent when the series holds no power or energy readings in the span. A gap between two
/// samples longer than `max_gap_ms` is not bridged (the integral leaves it out).
std::optional<RunEnergy> EnergyOfRun(const ThermalSeries& thermal, const StepSeries& steps,
                                     int64_t max_gap_ms = 60'000);

}  // namespace sparkops
