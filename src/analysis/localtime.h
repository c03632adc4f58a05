#pragma once
/// Zone-less timestamps (nvidia-smi, DeepSpeed, Megatron, axolotl) are local time in `TZ`;
/// `--tz` overrides (DESIGN.md conventions). This turns such a timestamp into UTC.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/timefmt.h"

namespace sparkops {

class LocalZone {
 public:
  /// `zone`: "" (the process's local zone), "UTC"/"Z", a fixed offset "+05:30"/"-0800"/"UTC+2",
  /// or an IANA name ("Europe/Berlin") resolved with the C library's tz database.
  static Result<LocalZone> Make(const std::string& zone);

  /// Seconds east of UTC for a local wall-clock time given as if it were UTC (Unix seconds).
  int64_t OffsetForLocal(int64_t local_as_utc_s) const;
  /// Parses a timestamp; a zone-less one is read in this zone, one with Z/±HH:MM as written.
  std::optional<int64_t> ParseMillis(std::string_view text) const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::optional<int64_t> fixed_;                    // fixed offset, seconds east
  mutable std::map<int64_t, int64_t> hour_cache_;   // local hour -> offset
};

}  // namespace sparkops
