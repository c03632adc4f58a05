#pragma once
/// Timestamps: sparkops writes UTC `YYYY-MM-DDTHH:MM:SS.mmmZ` everywhere.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparkops {

using SysTime = std::chrono::system_clock::time_point;

/// Formats a wall-clock time as `2026-11-29T13:02:29.123Z` (UTC, milliseconds).
std::string FormatUtcMillis(SysTime t);
/// Milliseconds since the Unix epoch, UTC.
int64_t ToUnixMillis(SysTime t);
SysTime FromUnixMillis(int64_t ms);
/// Parses `YYYY-MM-DDTHH:MM:SS[.fff][Z|+HH:MM]` (also with a space instead of `T`).
/// Zone-less input is read as UTC unless `local_offset_s` is given (seconds east of UTC).
/// Years outside 1700..2200 (beyond what system_clock holds) are rejected.
std::optional<SysTime> ParseTimestamp(std::string_view s, std::optional<int64_t> local_offset_s = std::nullopt);

}  // namespace sparkops
