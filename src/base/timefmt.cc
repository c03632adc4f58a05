#include "base/timefmt.h"

#include <ctime>

#include "base/strings.h"

namespace sparkops {

namespace {
// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}
}  // namespace

int64_t ToUnixMillis(SysTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

SysTime FromUnixMillis(int64_t ms) { return SysTime(std::chrono::milliseconds(ms)); }

std::string FormatUtcMillis(SysTime t) {
  int64_t ms = ToUnixMillis(t);
  int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  int millis = static_cast<int>(ms - secs * 1000);
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

std::optional<SysTime> ParseTimestamp(std::string_view s, std::optional<int64_t> local_offset_s) {
  s = Trim(s);
  // YYYY-MM-DD?HH:MM:SS (also YYYY/MM/DD as nvidia-smi prints)
  if (s.size() < 19) return std::nullopt;
  auto num = [&](size_t pos, size_t len) { return ParseInt(s.substr(pos, len)); };
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !se) return std::nullopt;
  if ((s[4] != '-' && s[4] != '/') || s[7] != s[4] || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  // system_clock counts nanoseconds in 64 bits (about 1678..2262): a year outside 1700..2200 would
  // overflow the conversion, and is no log timestamp anyway.
  if (*y < 1700 || *y > 2200) return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h < 0 || *h > 23 || *mi < 0 || *mi > 59 || *se < 0 || *se > 60)
    return std::nullopt;
  int64_t ms = 0;
  size_t pos = 19;
  if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
    ++pos;
    int digits = 0;
    int64_t frac = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 3) {
        frac = frac * 10 + (s[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    while (digits < 3) {
      frac *= 10;
      ++digits;
    }
    ms = frac;
  }
  int64_t offset = 0;
  std::string_view zone = Trim(s.substr(pos));
  if (zone == "Z" || zone == "UTC" || zone == "+00:00") {
    offset = 0;
  } else if (zone.empty()) {
    offset = local_offset_s.value_or(0);
  } else if ((zone[0] == '+' || zone[0] == '-') && zone.size() >= 5) {
    std::string_view hh = zone.substr(1, 2);
    std::string_view mm = zone.substr(zone[3] == ':' ? 4 : 3, 2);
    auto oh = ParseInt(hh), om = ParseInt(mm);
    if (!oh || !om) return std::nullopt;
    offset = (*oh * 3600 + *om * 60) * (zone[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  int64_t days = DaysFromCivil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d));
  int64_t secs = days * 86400 + *h * 3600 + *mi * 60 + *se - offset;
  return FromUnixMillis(secs * 1000 + ms);
}

}  // namespace sparkops
