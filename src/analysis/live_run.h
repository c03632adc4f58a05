#pragma once
/// One live `sparkops run` as `top` shows it (issue 37, docs/top.md "RUNS"): where it is, what it
/// runs, how far it got and whether it is slowing down, from the tail of its train.log. Pure: the
/// reader (run/live_runs.h) hands in the text it read.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/localtime.h"
#include "analysis/step_series.h"

namespace sparkops {

/// How many of the last points the current step time is the median of.
inline constexpr size_t kLiveRunRecentPoints = 5;

struct RunProgress {
  uint32_t pid = 0;                  ///< the run's PID (the one its guard's ledger names)
  uint32_t uid = 0;                  ///< its owner (the ledger's)
  std::string run_dir;               ///< absolute host path
  std::string command;               ///< meta.json's argv joined by spaces; "" when not read
  uint64_t min_available_bytes = 0;  ///< its guard's floor, bytes
  std::optional<int64_t> step;         ///< the last step seen in the tail
  std::optional<int64_t> total_steps;  ///< "of M" where the log prints it (a progress bar's total)
  /// Seconds per step now: the median cost of the last kLiveRunRecentPoints points; absent when
  /// the log's costs are not seconds (1/throughput only).
  std::optional<double> s_per_step;
  /// The baseline, seconds per step: the latest `slowdown` event's baseline_s (the run's own live
  /// detector, over every step), else the detector (analysis/slowdown.h) over the tail's points.
  std::optional<double> baseline_s;
  std::string baseline_from;         ///< "slowdown event", "log tail" or ""
  std::optional<double> ratio;       ///< current cost / baseline (1/throughput costs too)
  /// "no steps yet", "too few steps", "steady", "slower xR (forming)", "slowdown xR since step N".
  std::string verdict;
  std::string note;                  ///< why figures are absent (e.g. train.log not readable: why)
  // Energy (docs/top.md "RUNS"), from the part of thermal.csv read (analysis/energy.h's figures,
  // the run's widest scope: the system where spbm is there, else the GPU). Absent, never 0,
  // without power readings; `energy_note` then says why.
  std::optional<double> energy_wh;   ///< over the samples read: energy_span_s of them
  std::string energy_source;         ///< EnergyFigure::source ("nvml energy counter", ...)
  double energy_span_s = 0;          ///< seconds between the first and last sample read
  bool energy_from_start = false;    ///< thermal.csv was read whole: energy_wh is the run's so far
  /// Wh per step and per 1k tokens over the steps of the train.log tail inside those samples.
  std::optional<double> wh_per_step, wh_per_1k_tokens;
  std::string energy_note;
};

/// Fills `run`'s step figures and verdict from the end of its train.log (`train_tail`, whole
/// records) and of its events.jsonl (`events_tail`, may be empty). `zone` reads the job's own
/// timestamps (run's arrival times are UTC). Returns the tail's steps (for ReadLiveRunEnergy).
StepSeries ReadLiveRunSteps(std::string_view train_tail, std::string_view events_tail, const LocalZone& zone,
                            RunProgress* run);

/// Fills `run`'s energy figures from thermal.csv's `header` line and the whole lines after it that
/// were read (`rows`: the file's tail; when `header` is empty, `rows` is the whole file, header
/// included, and the figure is the run's so far), with `steps` (ReadLiveRunSteps' answer) for the
/// Wh per step. Uses EnergyOfRun: the counter's rise, else the integral of power (said in the source).
void ReadLiveRunEnergy(std::string_view header, std::string_view rows, const StepSeries& steps, const LocalZone& zone,
                       RunProgress* run);

/// meta.json's argv joined by spaces, at most `max_chars` (cut with "..."); "" when absent.
std::string LiveRunCommand(std::string_view meta_json, size_t max_chars = 200);

}  // namespace sparkops
