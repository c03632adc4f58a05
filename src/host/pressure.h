#pragma once
/// Pressure-stall information (PSI) for memory: `/proc/pressure/memory`, the kernel's share of
/// wall time in which tasks stalled waiting for memory (an early sign of the silent eviction that
/// G6 describes). Absent on kernels built without PSI.
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

struct PressureLine {
  double avg10 = 0, avg60 = 0, avg300 = 0;  ///< percent of wall time, over 10 s / 60 s / 300 s
  uint64_t total_us = 0;                    ///< cumulative stall time, microseconds
};

struct Pressure {
  std::optional<PressureLine> some;  ///< at least one task stalled
  std::optional<PressureLine> full;  ///< all non-idle tasks stalled (absent on old kernels)
};

/// Pure: parses `some avg10=0.00 avg60=0.00 avg300=0.00 total=0` lines. Error naming the line and
/// field when a line is malformed or no `some` line is present.
Result<Pressure> ParsePressure(std::string_view text);
/// Reads `/proc/pressure/memory` under the HostFs root (NotFound without PSI).
Result<Pressure> ReadMemoryPressure(const HostFs& fs);

}  // namespace sparkops
