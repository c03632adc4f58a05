#include "host/tzfile.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "host/hostfs.h"

namespace sparkops {

namespace {

// ---- calendar (proleptic Gregorian, days since 1970-01-01) ----
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t YearOf(int64_t days) {  // civil year of a day number
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  return yoe + era * 400 + (mp >= 10 ? 1 : 0);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

/// Local midnight (as Unix seconds, no offset) of a rule's date in year `y`, plus its time.
int64_t RuleLocalSeconds(int64_t y, const PosixTz::Date& d) {
  int64_t day;
  if (d.kind == 'J') {
    day = DaysFromCivil(y, 1, 1) + d.a - 1 + (IsLeap(y) && d.a >= 60 ? 1 : 0);
  } else if (d.kind == 'D') {
    day = DaysFromCivil(y, 1, 1) + d.a;
  } else {  // M month.week.weekday (week 5: the last such weekday)
    int64_t first = DaysFromCivil(y, d.a, 1);
    int wday_first = static_cast<int>(((first % 7) + 11) % 7);  // 1970-01-01 was a Thursday (4)
    int dom = 1 + ((d.c - wday_first) % 7 + 7) % 7 + (d.b - 1) * 7;
    while (dom > DaysInMonth(y, d.a)) dom -= 7;
    day = first + dom - 1;
  }
  return day * 86400 + d.time;
}

// ---- POSIX TZ string ----
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool more() const { return i < s.size(); }
  char peek() const { return more() ? s[i] : '\0'; }
};

bool Name(Cursor& c) {
  if (c.peek() == '<') {
    size_t close = c.s.find('>', c.i);
    if (close == std::string_view::npos || close - c.i < 4) return false;
    c.i = close + 1;
    return true;
  }
  size_t start = c.i;
  while (c.more() && std::isalpha(static_cast<unsigned char>(c.peek()))) ++c.i;
  return c.i - start >= 3;
}

std::optional<int64_t> Number(Cursor& c, int max) {
  size_t start = c.i;
  int64_t v = 0;
  while (c.more() && std::isdigit(static_cast<unsigned char>(c.peek())) && c.i - start < 3)
    v = v * 10 + (c.s[c.i++] - '0');
  if (c.i == start || v > max) return std::nullopt;
  return v;
}

/// [+-]hh[:mm[:ss]] in seconds; `max_hours` 24 for offsets, 167 for rule times.
std::optional<int64_t> Hms(Cursor& c, int max_hours) {
  int sign = 1;
  if (c.peek() == '+' || c.peek() == '-') sign = c.s[c.i++] == '-' ? -1 : 1;
  auto h = Number(c, max_hours);
  if (!h) return std::nullopt;
  int64_t secs = *h * 3600;
  for (int mult : {60, 1}) {
    if (c.peek() != ':') break;
    ++c.i;
    auto v = Number(c, 59);
    if (!v) return std::nullopt;
    secs += *v * mult;
  }
  return sign * secs;
}

std::optional<PosixTz::Date> RuleDate(Cursor& c) {
  PosixTz::Date d;
  if (c.peek() == 'J') {
    ++c.i;
    auto n = Number(c, 365);
    if (!n || *n < 1) return std::nullopt;
    d.kind = 'J', d.a = static_cast<int>(*n);
  } else if (c.peek() == 'M') {
    ++c.i;
    auto m = Number(c, 12);
    if (!m || *m < 1 || c.peek() != '.') return std::nullopt;
    ++c.i;
    auto w = Number(c, 5);
    if (!w || *w < 1 || c.peek() != '.') return std::nullopt;
    ++c.i;
    auto wd = Number(c, 6);
    if (!wd) return std::nullopt;
    d.kind = 'M', d.a = static_cast<int>(*m), d.b = static_cast<int>(*w), d.c = static_cast<int>(*wd);
  } else {
    auto n = Number(c, 365);
    if (!n) return std::nullopt;
    d.kind = 'D', d.a = static_cast<int>(*n);
  }
  if (c.peek() == '/') {
    ++c.i;
    auto t = Hms(c, 167);
    if (!t) return std::nullopt;
    d.time = *t;
  }
  return d;
}

uint64_t Be(std::string_view d, size_t at, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v = (v << 8) | static_cast<unsigned char>(d[at + static_cast<size_t>(k)]);
  return v;
}

}  // namespace

Result<PosixTz> ParsePosixTz(std::string_view text) {
  auto bad = [&] { return InputError(fmt::format("TZ '{}': not a zone name or POSIX TZ rule", text)); };
  Cursor c{text};
  PosixTz z;
  if (!Name(c)) return bad();
  auto std_off = Hms(c, 24);
  if (!std_off) return bad();
  z.std_offset = -*std_off;  // POSIX counts west of UTC as positive
  if (!c.more()) return z;
  if (!Name(c)) return bad();
  z.dst_offset = z.std_offset + 3600;
  if (c.more() && c.peek() != ',') {
    auto dst_off = Hms(c, 24);
    if (!dst_off) return bad();
    z.dst_offset = -*dst_off;
  }
  if (!c.more()) {  // no rule: the POSIX default, US rules since 2007
    z.start = {'M', 3, 2, 0, 7200};
    z.end = {'M', 11, 1, 0, 7200};
    return z;
  }
  if (c.peek() != ',') return bad();
  ++c.i;
  auto start = RuleDate(c);
  if (!start || c.peek() != ',') return bad();
  ++c.i;
  auto end = RuleDate(c);
  if (!end || c.more()) return bad();
  z.start = *start, z.end = *end;
  return z;
}

int64_t PosixTz::OffsetAtUtc(int64_t utc) const {
  if (!dst_offset) return std_offset;
  int64_t year = YearOf(FloorDiv(utc + std_offset, 86400));
  int64_t on = RuleLocalSeconds(year, start) - std_offset;
  int64_t off = RuleLocalSeconds(year, end) - *dst_offset;
  bool dst = on < off ? (utc >= on && utc < off) : !(utc >= off && utc < on);
  return dst ? *dst_offset : std_offset;
}

int64_t TzRules::OffsetAtUtc(int64_t utc) const {
  if (transitions.empty() || utc < transitions.front()) {
    if (transitions.empty() && tail) return tail->OffsetAtUtc(utc);
    return initial_offset;
  }
  if (utc >= transitions.back() && tail) return tail->OffsetAtUtc(utc);
  auto it = std::upper_bound(transitions.begin(), transitions.end(), utc);
  return offsets[static_cast<size_t>(it - transitions.begin()) - 1];
}

int64_t TzRules::OffsetForLocal(int64_t local) const {
  // Offsets are under a day and changes are days apart: the ones in force a day either side are
  // the only candidates. A candidate is right when the instant it gives has that offset.
  const int64_t before = OffsetAtUtc(local - 86400), after = OffsetAtUtc(local + 86400);
  const bool before_ok = OffsetAtUtc(local - before) == before, after_ok = OffsetAtUtc(local - after) == after;
  if (before_ok && after_ok) return std::max(before, after);  // overlap: the earlier instant
  if (after_ok) return after;
  return before;  // valid, or a gap: the offset before the change
}

Result<TzRules> ParseTzif(std::string_view d, const std::string& name) {
  auto bad = [&](std::string_view why) {
    return InputError(fmt::format("{}: not a tz database file ({})", name, why));
  };
  constexpr size_t kHeader = 44;
  auto header = [&](size_t at, uint64_t(&n)[6]) -> bool {
    if (d.size() < at + kHeader || d.substr(at, 4) != "TZif") return false;
    for (int k = 0; k < 6; ++k) n[k] = Be(d, at + 20 + 4 * static_cast<size_t>(k), 4);
    return true;
  };
  uint64_t n[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  if (!header(0, n)) return bad("no TZif header");
  auto block = [&](const uint64_t(&c)[6], uint64_t tsize) {  // counts < 2^32: no overflow in 64 bits
    return c[3] * tsize + c[3] + c[4] * 6 + c[5] + c[2] * (tsize + 4) + c[1] + c[0];
  };
  const char version = d[4];
  size_t at = kHeader;
  uint64_t tsize = 4;
  if (version >= '2') {
    uint64_t v1 = block(n, 4);
    if (v1 > d.size() - at) return bad("truncated");
    at += static_cast<size_t>(v1);
    if (!header(at, n)) return bad("no second header");
    at += kHeader;
    tsize = 8;
  }
  const uint64_t timecnt = n[3], typecnt = n[4];
  if (typecnt == 0 || typecnt > 256) return bad("bad type count");
  if (block(n, tsize) > d.size() - at) return bad("truncated");
  TzRules z;
  std::vector<int64_t> type_off(static_cast<size_t>(typecnt));
  const size_t types_at = at + static_cast<size_t>(timecnt * tsize + timecnt);
  for (size_t k = 0; k < typecnt; ++k)
    type_off[k] = static_cast<int32_t>(static_cast<uint32_t>(Be(d, types_at + 6 * k, 4)));
  z.initial_offset = type_off[0];
  z.transitions.reserve(static_cast<size_t>(timecnt));
  for (size_t k = 0; k < timecnt; ++k) {
    uint64_t raw = Be(d, at + k * tsize, static_cast<int>(tsize));
    int64_t t = tsize == 8 ? static_cast<int64_t>(raw) : static_cast<int32_t>(static_cast<uint32_t>(raw));
    unsigned idx = static_cast<unsigned char>(d[at + static_cast<size_t>(timecnt * tsize) + k]);
    if (idx >= typecnt) return bad("transition type out of range");
    if (!z.transitions.empty() && t <= z.transitions.back()) return bad("transitions out of order");
    z.transitions.push_back(t);
    z.offsets.push_back(type_off[idx]);
  }
  if (tsize == 8) {  // footer: "\nTZ\n"
    size_t f = at + static_cast<size_t>(block(n, 8));
    if (f < d.size() && d[f] == '\n') {
      size_t e = d.find('\n', f + 1);
      std::string_view tz = d.substr(f + 1, (e == std::string_view::npos ? d.size() : e) - f - 1);
      if (!tz.empty()) {
        auto p = ParsePosixTz(tz);
        if (!p) return bad("bad footer rule");
        z.tail = *p;
      }
    }
  }
  return z;
}

Result<TzRules> ResolveZone(const HostFs& fs, std::string_view tz) {
  if (!tz.empty() && tz.front() == ':') tz.remove_prefix(1);
  std::string path;
  if (tz.empty()) path = "/etc/localtime";
  else if (tz.front() == '/') path = std::string(tz);
  else if (tz.find("..") == std::string_view::npos) path = "/usr/share/zoneinfo/" + std::string(tz);
  if (!path.empty()) {
    auto data = fs.Read(path, 1u << 20);
    if (data) return ParseTzif(*data, fs.Path(path));
    if (data.error().kind != Error::Kind::kNotFound) return std::unexpected(data.error());
    if (tz.empty()) return TzRules{};  // no /etc/localtime: UTC, as the C library does
  }
  auto posix = ParsePosixTz(tz);
  if (!posix) {
    return InputError(
        fmt::format("zone '{}': not in the tz database ({} not found) and not a POSIX TZ rule "
                    "(use UTC, +HH:MM, or a name like Europe/Berlin)",
                    tz, fs.Path("/usr/share/zoneinfo/" + std::string(tz))));
  }
  TzRules z;
  z.tail = *posix;
  return z;
}

}  // namespace sparkops
