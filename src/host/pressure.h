#pragma once
/// /proc/pressure/memory (PSI): the share of wall time tasks stalled waiting for memory — an early
/// sign of the silent eviction behind G6. Kernels without PSI have no such file.
#include <string_view>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

/// Pure: the "some avg10" figure (percent, 0..100) from the text of /proc/pressure/memory,
/// e.g. "some avg10=1.23 avg60=0.50 avg300=0.10 total=12345". Error when the line or field is
/// missing or malformed.
Result<double> ParseMemoryPressureSomeAvg10(std::string_view text);
/// Reads /proc/pressure/memory under the HostFs root (NotFound when the kernel has no PSI).
Result<double> ReadMemoryPressureSomeAvg10(const HostFs& fs);

}  // namespace sparkops
