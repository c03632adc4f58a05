#include "analysis/localtime.h"

#include "base/strings.h"

namespace sparkops {

namespace {
std::optional<int64_t> FixedOffset(std::string_view z) {
  if (z == "UTC" || z == "Z" || z == "GMT" || z == "UTC0" || z == "Etc/UTC") return 0;
  if (StartsWith(z, "UTC") || StartsWith(z, "GMT")) z.remove_prefix(3);
  if (z.size() < 2 || (z[0] != '+' && z[0] != '-')) return std::nullopt;
  int sign = z[0] == '-' ? -1 : 1;
  std::string_view rest = z.substr(1);
  std::string_view hh = rest, mm = "0";
  if (auto c = rest.find(':'); c != std::string_view::npos) {
    hh = rest.substr(0, c);
    mm = rest.substr(c + 1);
  } else if (rest.size() == 4) {
    hh = rest.substr(0, 2);
    mm = rest.substr(2);
  }
  auto h = ParseInt(hh), m = ParseInt(mm);
  if (!h || !m || *h > 14 || *m > 59 || *h < 0 || *m < 0) return std::nullopt;
  return sign * (*h * 3600 + *m * 60);
}
}  // namespace

Result<LocalZone> LocalZone::Make(const std::string& zone, const HostFs& fs) {
  LocalZone z;
  z.name_ = zone;
  if (auto f = FixedOffset(zone)) {
    z.fixed_ = f;
    return z;
  }
  auto rules = ResolveZone(fs, zone);
  if (!rules) return std::unexpected(Error{rules.error().kind, "--tz: " + rules.error().message});
  z.rules_ = std::move(*rules);
  if (z.rules_.transitions.empty() && (!z.rules_.tail || !z.rules_.tail->dst_offset))
    z.fixed_ = z.rules_.tail ? z.rules_.tail->std_offset : z.rules_.initial_offset;
  return z;
}

int64_t LocalZone::OffsetForLocal(int64_t local_as_utc_s) const {
  return fixed_ ? *fixed_ : rules_.OffsetForLocal(local_as_utc_s);
}

std::optional<int64_t> LocalZone::ParseMillis(std::string_view text) const {
  text = Trim(text);
  auto as_utc = ParseTimestamp(text, 0);
  if (!as_utc) return std::nullopt;
  int64_t ms = ToUnixMillis(*as_utc);
  if (!text.empty() && text.back() == 'Z') return ms;
  // Does it carry its own zone? A parse with another local offset tells.
  auto probe = ParseTimestamp(text, 3600);
  if (probe && ToUnixMillis(*probe) == ms) return ms;
  int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  return ms - OffsetForLocal(secs) * 1000;
}

}  // namespace sparkops
