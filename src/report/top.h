#pragma once
/// `sparkops top`: one frame of the live view (docs/top.md) as plain text lines and as a JSON
/// snapshot. The frame is a value filled by the command from the existing readers (the sampler,
/// `ps`'s classification, PSI, the guard's ledgers); this file only renders it. Absent figures are
/// "n/r" (not reported) in text and omitted keys in JSON, never 0.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/live_run.h"
#include "host/kmsg.h"
#include "host/pressure.h"
#include "telemetry/sample.h"
#include "workloads/workload.h"

namespace sparkops {

/// The JSON snapshot's version: a rename or removal bumps it (docs/top.md lists the changes).
inline constexpr const char* kTopSchema = "sparkops.top/1";

/// The floor of a running memory guard, from its ledger.
struct TopGuardFloor {
  uint64_t min_available_bytes = 0;
  uint32_t pid = 0;
  std::string mode;  ///< "host" or "run"
};

/// Kernel records that foretell trouble on a Spark (host/kmsg.h's KernelSignTable: NVRM out of
/// memory, Xid, OOM kill, hung task, soft lockup), from /dev/kmsg since boot.
struct TopKernel {
  std::vector<KernelSign> recent;        ///< the last kTopKernelLines, oldest first
  uint64_t counts[5] = {0, 0, 0, 0, 0};  ///< per KernelSignKind since boot (as far as the ring reaches)
  std::string note;                      ///< why the log is not read ("" when it is)
};
inline constexpr size_t kTopKernelLines = 4;

struct TopFrame {
  Sample sample;                       ///< GPU, /proc/meminfo, power (spbm), CPU/IO pressure
  std::optional<Pressure> memory_psi;  ///< /proc/pressure/memory (some and full)
  std::optional<TopGuardFloor> guard;  ///< the highest floor among live guards
  /// MemAvailable, bytes, one per frame, oldest first (the sparkline).
  std::vector<uint64_t> available_history;
  double interval_s = 2;
  std::optional<WorkloadScan> scan;  ///< absent when /proc could not be listed
  std::string scan_error;
  /// pid -> CPU cores used since the previous frame (absent on the first frame).
  std::map<uint32_t, double> cores;
  /// The live `sparkops run`s that advertise themselves (run/live_runs.h), and why others were not shown.
  std::vector<RunProgress> runs;
  std::vector<std::string> runs_ignored;
  std::optional<TopKernel> kernel;  ///< absent when there is no kernel log (a container, a fixture without one)
};

enum class TopSort { kMemory, kCpu };
/// "memory", "cpu".
const char* TopSortName(TopSort s);

/// How to draw: the terminal's size and what the keys toggled.
struct TopView {
  int width = 80, height = 24;
  TopSort sort = TopSort::kMemory;
  bool trees = false;   ///< expand each workload into its processes
  bool paused = false;
  bool unicode = true;  ///< block characters for the sparkline (ASCII on TERM=dumb)
};

/// The frame as lines, each at most `view.width` columns (cut, never wrapped), at most
/// `view.height` lines (the process table is cut first, with a "+N more" line).
std::vector<std::string> RenderTopLines(const TopFrame& frame, const TopView& view);
/// The lines joined with '\n' (what `--once` prints).
std::string RenderTopText(const TopFrame& frame, const TopView& view);
/// {"schema": kTopSchema, "time", "pool", "guard", "gpu", "power", "pressure", "processes", "runs",
/// "runs_ignored", "kernel" (when read)}.
nlohmann::ordered_json TopToJson(const TopFrame& frame);

/// Pure: `values` scaled between their min and max as `width` characters (the last `width`
/// values), "▁".."█" or " .:-=+*#" when !unicode. Empty when there are none.
std::string Sparkline(const std::vector<uint64_t>& values, size_t width, bool unicode);

/// A workload's CPU cores: the sum over its processes that have a figure; absent when none has.
std::optional<double> WorkloadCores(const Workload& w, const std::map<uint32_t, double>& cores);

}  // namespace sparkops
