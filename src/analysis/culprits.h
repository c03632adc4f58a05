#pragma once
/// Who took the job's CPUs or storage over a slowdown (issue 30), from the `host_contention`
/// records `run` writes (telemetry/job_tree.h): each process's CPU time (`cpu_s`, cumulative) or
/// bytes (`io_bytes`) over the span against the same length of time before it, so that a process
/// busy all along, or a burst seen in one record, does not outrank one that took the job's CPU
/// for the whole span. Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_dir.h"

namespace sparkops {

struct Culprit {
  int64_t pid = 0;
  std::string cmd;           ///< cmdline, else comm
  double span_rate = 0;      ///< cores (or bytes/s) averaged over the span
  double before_rate = 0;    ///< the same over the stretch before (0 when never recorded there)
  bool on_job_cpus = false;  ///< it last ran on one of the job's CPUs in some record of the span
  double Rise() const { return span_rate - before_rate; }
};

enum class CulpritKind { kCpu, kIo };

/// The processes of the records' `list` ("top": outside the job, "job_top": the job's own) in
/// [t0, t1], ranked by the rise of their rate, those on the job's CPUs first (CPU only); only
/// rises of at least `min_rise` (cores, or bytes/s); at most `n`.
/// A process with two or more points in a window: its counter's difference plus one record gap at
/// its first rate; with one point: that rate for one record gap (the median spacing of the records,
/// at least 1 s). Records without `cpu_s`/`io_bytes` (older runs) count their rates the same way.
/// A process with no point before the span that started before it (`start_s` against the
/// record's `uptime_s`) has its average since it started as its rate before; one that started
/// less than a record gap before the span counts as new to it (all its work in the span).
std::vector<Culprit> RankCulprits(const std::vector<RunEvent>& events, int64_t t0, int64_t t1, const char* list,
                                  CulpritKind kind, double min_rise, size_t n = 3);

/// "pid 4121 `sha256sum /dev/zero` 1.0 cores over the span (0.0 before, on the job's CPUs)", ", "-joined;
/// I/O as MB/s.
std::string CulpritText(const std::vector<Culprit>& v, CulpritKind kind);

/// The median of a numeric field of the `host_contention` records in [t0, t1] (e.g. io_wait.job).
std::optional<double> RecordMedian(const std::vector<RunEvent>& events, int64_t t0, int64_t t1, const char* key,
                                   const char* sub = nullptr);

}  // namespace sparkops
