#pragma once
/// G3's text for the fragmentation and pinned-memory reading (host/buddyinfo.h, issue 33).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/buddyinfo.h"

namespace sparkops {

/// "free blocks: 1 at 2 MiB (order 9), 0 at 4 MiB (order 10); Mlocked 61.5 GiB, ..."
std::string UmaPressureSummary(const UmaPressure& p);
/// One line per known precursor (empty when none): no free 2 MiB/4 MiB block, a quarter of the pool
/// pinned or in shared memory.
std::vector<std::string> UmaPressureWarnings(const UmaPressure& p, std::optional<uint64_t> mem_total);

}  // namespace sparkops
