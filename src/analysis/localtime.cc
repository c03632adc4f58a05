#include "analysis/localtime.h"

#include <cstdlib>
#include <ctime>

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

Result<LocalZone> LocalZone::Make(const std::string& zone) {
  LocalZone z;
  z.name_ = zone;
  if (auto f = FixedOffset(zone)) {
    z.fixed_ = f;
    return z;
  }
  if (!zone.empty() && zone[0] != ':' && zone.find('/') == std::string::npos && zone.find_first_of("0123456789") == std::string::npos)
    return InputError("--tz " + zone + ": not a zone (use UTC, +HH:MM, or a name like Europe/Berlin)");
  return z;
}

int64_t LocalZone::OffsetForLocal(int64_t local_as_utc_s) const {
  if (fixed_) return *fixed_;
  int64_t hour = local_as_utc_s / 3600;
  if (auto it = hour_cache_.find(hour); it != hour_cache_.end()) return it->second;
  // mktime() interprets a broken-down time in the process zone; switch TZ for the call only.
  const char* old = std::getenv("TZ");
  std::string saved = old ? old : "";
  if (!name_.empty()) setenv("TZ", name_.c_str(), 1);
  tzset();
  std::time_t t = static_cast<std::time_t>(local_as_utc_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  tm.tm_isdst = -1;
  std::time_t utc = mktime(&tm);
  if (!name_.empty()) {
    if (old) setenv("TZ", saved.c_str(), 1);
    else unsetenv("TZ");
    tzset();
  }
  int64_t off = utc == static_cast<std::time_t>(-1) ? 0 : local_as_utc_s - static_cast<int64_t>(utc);
  if (hour_cache_.size() > 100000) hour_cache_.clear();
  hour_cache_[hour] = off;
  return off;
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
