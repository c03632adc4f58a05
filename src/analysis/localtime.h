#pragma once
/// Zone-less timestamps (nvidia-smi, DeepSpeed, Megatron, axolotl) are local time in `TZ`;
/// `--tz` overrides (docs/analyze.md, "Time axis"). This turns such a timestamp into UTC.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/timefmt.h"
#include "host/hostfs.h"
#include "host/tzfile.h"

namespace sparkops {

class LocalZone {
 public:
  /// `zone`: "" (the host's /etc/localtime), "UTC"/"Z", a fixed offset "+05:30"/"-0800"/"UTC+2",
  /// an IANA name ("Europe/Berlin") read once from the tz database under `fs`'s root, or a POSIX
  /// TZ rule. An unknown zone is an Input error naming it. Never touches the process's TZ.
  /// `fs` defaults to the real machine's root (fixed offsets and "UTC" never read it).
  static Result<LocalZone> Make(const std::string& zone, const HostFs& fs = HostFs("/"));

  /// Seconds east of UTC for a local wall-clock time given as if it were UTC (Unix seconds).
  int64_t OffsetForLocal(int64_t local_as_utc_s) const;
  /// Parses a timestamp; a zone-less one is read in this zone, one with Z/±HH:MM as written.
  std::optional<int64_t> ParseMillis(std::string_view text) const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::optional<int64_t> fixed_;  // fixed offset, seconds east
  TzRules rules_;                 // otherwise (pure: copies may be used from any thread)
};

}  // namespace sparkops
