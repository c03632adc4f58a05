#pragma once
/// The memory guard's decisions, pure (table-tested in tests/guard/policy_test.cc): the floor on
/// MemAvailable, the PSI rule, flush-first, and the adaptive poll interval. No I/O, no allocation
/// in Decide/PollInterval (they run on the watcher's path, when memory is short).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops::guard {

inline constexpr uint64_t kGiB = 1ull << 30;
inline constexpr uint64_t kDefaultFloorMin = 4 * kGiB;  ///< default floor: max(4 GiB, 5 % of MemTotal)
inline constexpr double kDefaultFloorPct = 5.0;
inline constexpr double kDefaultMaxPressure = 40.0;     ///< PSI memory `full avg10`, percent
inline constexpr double kDefaultPressureWindow = 10.0;  ///< seconds above --max-pressure before acting
inline constexpr double kFastPollS = 0.1;               ///< within 2x the floor
inline constexpr double kSlowPollS = 1.0;               ///< otherwise
inline constexpr double kFootprintRefreshS = 1.0;  ///< the job's footprint, re-read while near the floor

/// `--min-available`: bytes ("8G", "512M", "1.5G", "4096K", "1T", a bare number is bytes) or a share of
/// MemTotal ("6%"). Suffixes are binary (G = GiB); a trailing "iB"/"B" is accepted.
struct FloorSpec {
  std::optional<uint64_t> bytes;
  std::optional<double> percent;  ///< (0, 100)
};

/// Input error naming the flag and the text for anything else (0, negative, NaN, huge, 100 %).
Result<FloorSpec> ParseFloor(std::string_view text);
/// The floor in bytes: the spec resolved against MemTotal, or (no spec) max(4 GiB, 5 % of MemTotal).
uint64_t ResolveFloor(const std::optional<FloorSpec>& spec, uint64_t mem_total);

struct Config {
  uint64_t floor = kDefaultFloorMin;           ///< act when MemAvailable drops below (bytes)
  std::optional<double> max_pressure = kDefaultMaxPressure;  ///< percent; nullopt: PSI not used
  double pressure_window_s = kDefaultPressureWindow;
  bool may_flush = false;                      ///< root and --flush-cache
  bool kernel_signals = true;                  ///< --kernel-signals: stop on NVRM NV_ERR_NO_MEMORY records
};

/// One poll's readings. Absent fields were not readable (no PSI on this kernel ...).
struct Reading {
  double t_s = 0;                      ///< monotonic seconds
  uint64_t available = 0;              ///< MemAvailable, bytes
  std::optional<uint64_t> page_cache;  ///< Cached + Buffers - Shmem, bytes
  std::optional<double> psi_full_avg10;
};

enum class Action { kNone, kFlush, kStop };
/// kKernelNoMemory: an NVRM NV_ERR_NO_MEMORY kernel record while the job ran (guard/kernel_watch.h).
/// kFragmentation: no free 2 MiB block for the driver while the job grew (guard/fragmentation.h).
enum class Reason { kNone, kFloor, kPressure, kKernelNoMemory, kFragmentation };

struct Decision {
  Action action = Action::kNone;
  Reason reason = Reason::kNone;
};

/// The guard's memory between polls (plain values: copyable, no allocation).
struct State {
  std::optional<double> pressure_since;  ///< when full avg10 first went above the limit (this stretch)
  bool flushed = false;                  ///< a flush was tried this episode (one per episode)
};

/// What to do with this reading. Below the floor: flush first when allowed, the page cache would lift
/// MemAvailable above the floor, and no flush was tried since MemAvailable was last above it;
/// else stop. Pressure above the limit for the whole window: stop (a flush does not relieve a stall
/// that drop_caches cannot help: the kernel already reclaims cache before stalling).
Decision Decide(const Config& c, const Reading& r, State& s);

/// Seconds to the next poll: kFastPollS once MemAvailable is within 2x the floor (or PSI is above
/// the limit), kSlowPollS otherwise.
double PollInterval(const Config& c, const Reading& r);

const char* ToString(Reason r);

/// The one table of the reasons a guard acts for: the name events.jsonl, the ledger and the
/// exporter's `reason` label use, and whether the exporter starts a `flush` series for it at 0 (the
/// floor's and, as since the exporter's first release, the PSI rule's; a flush only ever answers the floor).
struct ReasonInfo {
  Reason reason;
  const char* name;
  bool flush_series;
  const char* help;  ///< one line (docs/memory-guard.md)
};
const std::vector<ReasonInfo>& Reasons();
/// A row of Reasons() by name; null for any other text.
const ReasonInfo* ReasonNamed(std::string_view name);

}  // namespace sparkops::guard
