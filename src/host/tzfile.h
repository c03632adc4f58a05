#pragma once
/// Time zones read from the tz database files (TZif, RFC 8536) and POSIX TZ strings, without the
/// C library's process-wide TZ (no setenv/tzset: safe with worker threads, readable under --root).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops {

class HostFs;

/// A POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3"): the zone after a TZif file's last transition,
/// or a TZ value that is not a file name.
struct PosixTz {
  int64_t std_offset = 0;                 ///< seconds east of UTC in standard time
  std::optional<int64_t> dst_offset;      ///< seconds east of UTC in daylight time (none: no DST)
  struct Date {
    char kind = 'M';   ///< 'J' (1..365, no Feb 29), 'D' (0..365), 'M' (month.week.day)
    int a = 0, b = 0, c = 0;
    int64_t time = 7200;  ///< local seconds after midnight when the change happens (may be < 0 or > 24 h)
  } start, end;
  /// Seconds east of UTC at `utc` (Unix seconds).
  int64_t OffsetAtUtc(int64_t utc) const;
};

/// Pure: parses a POSIX TZ string. Input error naming the text when it is not one.
Result<PosixTz> ParsePosixTz(std::string_view text);

/// A zone: the transitions of a TZif file, then its footer rule.
struct TzRules {
  std::vector<int64_t> transitions;  ///< UTC seconds, ascending
  std::vector<int64_t> offsets;      ///< offset in force from transitions[i] on
  int64_t initial_offset = 0;        ///< before the first transition
  std::optional<PosixTz> tail;       ///< after the last transition (v2+ footer)
  int64_t OffsetAtUtc(int64_t utc) const;
  /// Seconds east of UTC for a local wall-clock time given as if it were UTC. In a gap (spring
  /// forward) the offset before the change; in an overlap (fall back) the earlier (daylight) one.
  int64_t OffsetForLocal(int64_t local_as_utc) const;
};

/// Pure: parses a TZif file (versions 1-4). Every count is bounded by the data's size before use.
Result<TzRules> ParseTzif(std::string_view data, const std::string& name);

/// Resolves a TZ value the way the C library does, from files under `fs`'s root: "" or unset ->
/// /etc/localtime (UTC when absent); ":NAME" or "NAME" -> /usr/share/zoneinfo/NAME (an absolute
/// path is read as is); otherwise a POSIX TZ string. Input error naming the zone when none fits.
Result<TzRules> ResolveZone(const HostFs& fs, std::string_view tz);

}  // namespace sparkops
