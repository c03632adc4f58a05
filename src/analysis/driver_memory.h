#pragma once
/// The `driver_memory_error` cause (issue 33): the NVIDIA driver logged NVRM `NV_ERR_NO_MEMORY`
/// (it could not get memory for the GPU from the unified pool; on GB10 a silent whole-host wedge
/// has followed, NVIDIA/open-gpu-kernel-modules #1358). Read from a run's events.jsonl: the
/// sampler's `kernel_nvrm_no_memory` records and the memory guard's stop for that reason. Pure.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/run_dir.h"

namespace sparkops {

/// How long before a run's end a no-memory record still names the cause of the end (ms).
inline constexpr int64_t kDriverErrorNearEndMs = 120000;

/// Evidence for a slowdown over `t0..t1` (UTC ms; records up to `lookback_ms` before it count): one
/// line per record, "kernel 10:02:03Z: NVRM: ..." (at most 4, then a count). Empty: none.
std::vector<std::string> DriverMemoryEvidence(const std::vector<RunEvent>& events, int64_t t0, int64_t t1,
                                              int64_t lookback_ms);

/// Evidence that the run ended because of it: the guard stopped the job for a
/// `kernel_nvrm_no_memory` record (its line), or such records came within kDriverErrorNearEndMs of
/// the last record of the run. Empty: the end had another cause.
std::vector<std::string> DriverMemoryEndEvidence(const std::vector<RunEvent>& events);

/// Evidence that the guard stopped the job for `fragmentation` (no free 2 MiB block for the driver while
/// the job grew, guard/fragmentation.h): "the memory guard stopped the job at 10:02:03Z: buddyinfo: ...".
/// Empty: it did not.
std::vector<std::string> FragmentationEndEvidence(const std::vector<RunEvent>& events);

}  // namespace sparkops
