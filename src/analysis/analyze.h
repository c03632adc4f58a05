#pragma once
/// `analyze`: the step series of a log, its sustained slowdowns, their causes from the thermal
/// CSV and the run's events, and how the run ended (exit record, or a reboot by boot id).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/attempts.h"
#include "analysis/classify.h"
#include "analysis/energy.h"
#include "analysis/guard_summary.h"
#include "analysis/localtime.h"
#include "analysis/run_dir.h"
#include "analysis/slowdown.h"
#include "analysis/step_series.h"
#include "analysis/thermal.h"
#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

struct AnalyzeInputs {
  std::string dir;      ///< run directory ("" with --log)
  std::string log;      ///< train.log or any log
  std::string thermal;  ///< thermal CSV ("" = none)
  std::string events;   ///< events.jsonl ("" = none)
  std::string meta;     ///< meta.json ("" = none)
  std::optional<StepTemplate> step_format;  ///< --step-format template (none: built-in parsers only)
};

struct SlowdownEvent {
  Slowdown s;
  int64_t start_step = 0, end_step = 0;
  int64_t t0 = kNoTime, t1 = kNoTime;  ///< UTC ms, kNoTime without timestamps
  Classification cls;
  std::optional<SlowdownEnergy> energy;  ///< issue 37: what it cost in energy (analysis/energy.h)
};

struct RunEnd {
  /// "exit" (exit record), "supervisor_lost" (no exit record; `sparkops run` was killed and its
  /// sentinel stopped the job), "reboot" (boot id changed, no exit record), "no_exit_record"
  /// (same boot: still running or sparkops was stopped), "unknown" (not a run directory / no boot id).
  std::string status = "unknown";
  std::string detail;
  std::optional<SentinelEnd> sentinel;   ///< with "supervisor_lost": what the sentinel recorded
  std::vector<ThermalRow> last_samples;  ///< the last thermal samples before a reboot
  /// After a reboot: the last NVRM/Xid/OOM-kill/hung-task/lockup lines the crashed boot left (pstore,
  /// the run's kernel_* events), each prefixed with where it was read (analysis/crash_evidence.h).
  std::vector<std::string> kernel_lines;
  /// issue 33: "driver_memory_error" when the guard stopped the job on an NVRM NV_ERR_NO_MEMORY
  /// record or such records came near the end ("" otherwise), with the records as evidence.
  std::string cause;
  std::vector<std::string> cause_evidence;
};

struct AnalysisResult {
  AnalyzeInputs in;
  std::string zone;
  StepSeries series;
  std::optional<ThermalSeries> thermal;
  std::vector<RunEvent> events;
  std::optional<RunMeta> meta;
  Detection detection;
  std::vector<SlowdownEvent> slowdowns;
  RunEnd end;
  std::vector<std::string> warnings;  ///< e.g. the thermal samples do not overlap the log in time
  std::optional<RunEnergy> energy;    ///< issue 37: from the thermal CSV; absent without power readings
  std::optional<double> price_kwh;    ///< `analyze --price-kwh`: the cost of `energy` is shown
  std::vector<RunAttempt> attempts;   ///< `run --restart-on`: each attempt (none otherwise)
  /// One line for the top of every output: what was found.
  std::string Verdict() const;
};

/// Finds the files of a run directory (train.log required; the rest optional).
Result<AnalyzeInputs> RunDirInputs(const std::string& dir);
/// Reads everything and analyses it. `fs` gives the current boot id (under --root).
Result<AnalysisResult> Analyze(const AnalyzeInputs& in, const LocalZone& zone, const HostFs& fs);

}  // namespace sparkops
