#pragma once
/// nvidia-smi fallback: ONE `--query-gpu=<fields> --format=csv,noheader,nounits` call per read,
/// run by argv with a timeout (RunCommand, 5 s). Unsupported values (`[N/A]`, `[Not Supported]`,
/// `N/A`, empty) become absent. Used per field, only where NVML lacks it.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/gpu.h"

namespace sparkops {

/// The fields sparkops asks for, in order. `clocks_event_reasons.active` is the newer name of
/// `clocks_throttle_reasons.active` (older drivers only know the latter).
const std::vector<std::string>& NvidiaSmiFields();
const std::vector<std::string>& NvidiaSmiLegacyFields();

/// One GPU line: field -> value, absent when nvidia-smi printed no value.
using NvidiaSmiRow = std::map<std::string, std::optional<std::string>, std::less<>>;

/// Pure: parses `--format=csv,noheader,nounits` output for `fields`. Splits on commas only (GPU
/// names contain spaces) and trims. Error (naming the line and what is wrong) when a line has the
/// wrong number of values; blank lines are skipped.
Result<std::vector<NvidiaSmiRow>> ParseNvidiaSmiCsv(std::string_view text, const std::vector<std::string>& fields);

/// Pure: converts one row to a reading. Error when a numeric field holds something that is neither a
/// number nor an "unsupported" token (garbage output is never turned into readings).
Result<GpuReading> NvidiaSmiRowToReading(const NvidiaSmiRow& row);

/// Runs `exe` once (timeout 5 s by default) and parses its output. Error when it cannot run, exits non-zero,
/// hangs, or prints garbage; the message says which. Retries once with the legacy field name when
/// the driver rejects `clocks_event_reasons.active`.
Result<std::vector<GpuReading>> QueryNvidiaSmi(const std::string& exe,
                                               std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

}  // namespace sparkops
