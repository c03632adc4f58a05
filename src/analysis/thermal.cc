#include "analysis/thermal.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <exception>

#include "analysis/contention.h"
#include "analysis/line_reader.h"
#include "analysis/step_line.h"
#include "base/strings.h"

namespace sparkops {

enum ThermalCsvParser::Col : int {
  kIgnore,
  kTime,
  kTemp,
  kPower,
  kPowerLimit,
  kSmClock,
  kSmClockMax,
  kUtil,
  kMemTotal,
  kMemAvail,
  kSwap,
  kPsi,
  kGpuAttr,
  kReasons,
  kThrottle,
  kEvent,
  // nvidia-smi per-reason columns ("Active" / "Not Active")
  kBitSwPower,
  kBitHwSlow,
  kBitSwThermal,
  kBitHwThermal,
  kBitHwBrake,
  kPageCache,
  kEnergy,  // issue 37: the NVML total-energy counter, J
  kPowerFirst = 1000,  // issue 18: kPowerFirst + PowerColumnIndex(name), clear of other columns
};

namespace {
constexpr size_t kMaxRows = 50'000'000;
constexpr int kPowerColumnBase = 1000;  // == ThermalCsvParser::kPowerFirst

int ColumnFor(std::string name) {
  // "power.draw [W]" -> "power.draw"
  if (auto b = name.find(" ["); b != std::string::npos) name.resize(b);
  name = ToLower(Trim(name));
  struct M {
    const char* n;
    int c;
  };
  static const M kMap[] = {
      {"timestamp", 1},
      {"gpu_temp_c", 2},
      {"temperature.gpu", 2},
      {"power_w", 3},
      {"power.draw", 3},
      {"power.draw.instant", 3},
      {"power_limit_w", 4},
      {"power.limit", 4},
      {"enforced.power.limit", 4},
      {"sm_clock_mhz", 5},
      {"clocks.sm", 5},
      {"clocks.current.sm", 5},
      {"sm_clock_max_mhz", 6},
      {"clocks.max.sm", 6},
      {"gpu_util_pct", 7},
      {"util_pct", 7},
      {"utilization.gpu", 7},
      {"mem_total_gib", 8},
      {"mem_available_gib", 9},
      {"swap_used_gib", 10},
      {"mem_pressure_some_avg10", 11},
      {"gpu_attributed_gib", 12},
      {"clock_event_reasons", 13},
      {"clocks_event_reasons.active", 13},
      {"clocks_throttle_reasons.active", 13},
      {"clocks_event_reasons_counters.active", 0},
      {"throttle", 14},
      {"event", 15},
      {"clocks_event_reasons.sw_power_cap", 16},
      {"clocks_throttle_reasons.sw_power_cap", 16},
      {"clocks_event_reasons.hw_slowdown", 17},
      {"clocks_throttle_reasons.hw_slowdown", 17},
      {"clocks_event_reasons.sw_thermal_slowdown", 18},
      {"clocks_throttle_reasons.sw_thermal_slowdown", 18},
      {"clocks_event_reasons.hw_thermal_slowdown", 19},
      {"clocks_throttle_reasons.hw_thermal_slowdown", 19},
      {"clocks_event_reasons.hw_power_brake_slowdown", 20},
      {"clocks_throttle_reasons.hw_power_brake_slowdown", 20},
      {"page_cache_gib", 21},
      {"energy_j", 22},
  };
  for (const M& m : kMap)
    if (name == m.n) return m.c;
  if (int p = PowerColumnIndex(name); p >= 0) return kPowerColumnBase + p;
  return ContentionColumn(name);
}

bool IsAbsent(std::string_view v) {
  return v.empty() || v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "Not Supported" || v == "-" ||
         v == "[Unknown Error]";
}

// CSV fields: comma-separated, blanks around fields trimmed, surrounding quotes removed.
void SplitFields(std::string_view line, std::vector<std::string_view>* out) {
  out->clear();
  size_t start = 0;
  for (size_t i = 0;; ++i) {  // a byte loop: fields are short, one memchr call each cost more
    if (i < line.size() && line[i] != ',') continue;
    std::string_view f = Trim(line.substr(start, i - start));
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out->push_back(f);
    if (i >= line.size()) break;
    start = i + 1;
  }
}
}  // namespace

std::string ThrottleNames(uint64_t bits) { return Join(ThrottleReasons(bits), "+"); }

Result<bool> ThermalCsvParser::AddLine(std::string_view raw, uint64_t lineno) {
  std::string_view line = Trim(raw);
  if (line.empty()) return true;
  auto where = [&](std::string_view col) {
    return source_ + ":" + std::to_string(lineno) + (col.empty() ? std::string() : ": column " + std::string(col));
  };
  thread_local std::vector<std::string_view> f;
  SplitFields(line, &f);
  if (cols_.empty()) {
    header_ = std::string(line);
    bool has_time = false;
    for (auto name : f) {
      int c = ColumnFor(std::string(name));
      cols_.push_back(c);
      names_.emplace_back(name);
      has_time |= c == kTime;
      if (name.find('.') != std::string_view::npos || name.find(" [") != std::string_view::npos) nvidia_smi_ = true;
    }
    if (!has_time) return InputError(where("") + ": no `timestamp` column in the header (not a thermal CSV)");
    out_.format = nvidia_smi_ ? "nvidia-smi" : "sparkops";
    return true;
  }
  if (line == header_) return true;  // a header repeated by an appended file
  if (f.size() != cols_.size())
    return InputError(where("") + ": " + std::to_string(f.size()) + " fields, the header has " +
                      std::to_string(cols_.size()));
  ThermalRow r;
  uint64_t bits = 0;
  bool have_bits = false;
  for (size_t i = 0; i < f.size(); ++i) {
    int c = cols_[i];
    std::string_view v = f[i];
    if (c == kIgnore || IsAbsent(v)) continue;
    std::string_view colname = names_[i];
    if (c >= kContentionColumn0 && c < kPowerFirst) {  // host contention columns (analysis/contention.h)
      if (auto bad = SetContentionCell(r, c, v); !bad.empty()) return InputError(where(colname) + ": " + bad);
      continue;
    }
    switch (c) {
      case kTime: {
        auto ms = zone_.ParseMillis(v);
        if (!ms) return InputError(where(colname) + ": '" + std::string(v) + "' is not a timestamp");
        r.t_ms = *ms;
        break;
      }
      case kReasons: {
        uint64_t x = 0;
        std::string_view h = v;
        if (StartsWith(h, "0x") || StartsWith(h, "0X")) h.remove_prefix(2);
        auto [p, ec] = std::from_chars(h.data(), h.data() + h.size(), x, 16);
        if (ec != std::errc() || p != h.data() + h.size())
          return InputError(where(colname) + ": '" + std::string(v) + "' is not a hex bitmask");
        r.reasons = x;
        break;
      }
      case kThrottle: r.throttle = std::string(v); break;
      case kEvent: r.events = std::string(v); break;
      case kBitSwPower:
      case kBitHwSlow:
      case kBitSwThermal:
      case kBitHwThermal:
      case kBitHwBrake: {
        static const uint64_t kBits[] = {kReasonSwPowerCap, kReasonHwSlowdown, kReasonSwThermal, kReasonHwThermal,
                                         kReasonHwPowerBrake};
        have_bits = true;
        if (v == "Active") bits |= kBits[c - kBitSwPower];
        else if (v != "Not Active")
          return InputError(where(colname) + ": '" + std::string(v) + "' (expected Active or Not Active)");
        break;
      }
      default: {
        size_t used = 0;
        auto num = ParseNumberPrefix(v, &used);
        std::string_view unit = Trim(v.substr(used));
        if (!num || (unit.size() > 4 && unit != "MHz"))
          return InputError(where(colname) + ": '" + std::string(v) + "' is not a number");
        std::optional<double>* slot[] = {nullptr,
                                         nullptr,
                                         &r.temp_c,
                                         &r.power_w,
                                         &r.power_limit_w,
                                         &r.sm_clock_mhz,
                                         &r.sm_clock_max_mhz,
                                         &r.util_pct,
                                         &r.mem_total_gib,
                                         &r.mem_available_gib,
                                         &r.swap_used_gib,
                                         &r.psi_some_avg10,
                                         &r.gpu_attributed_gib};
        if (c >= kPowerFirst) *PowerColumnSlot(r.power, c - kPowerFirst) = *num;
        else if (c == kPageCache) r.page_cache_gib = *num;
        else if (c == kEnergy) r.energy_j = *num;
        else *slot[c] = *num;
      }
    }
  }
  if (have_bits && !r.reasons) r.reasons = bits;
  if (r.throttle.empty() && r.reasons) r.throttle = ThrottleNames(*r.reasons);
  if (out_.rows.size() >= kMaxRows) return InputError(source_ + ": more than 50 million rows");
  out_.rows.push_back(std::move(r));
  return true;
}

void ThermalCsvParser::Reserve(size_t rows) {
  try {
    out_.rows.reserve(std::min<size_t>(rows, 4'000'000));  // ~1 GiB at most; past that it doubles
  } catch (const std::exception&) {  // a hint: refused, the vector grows as it goes
  }
}

Result<ThermalSeries> ThermalCsvParser::Finish() {
  if (cols_.empty()) return InputError(source_ + ": empty (no header)");
  auto& rows = out_.rows;
  auto by_time = [](const ThermalRow& a, const ThermalRow& b) { return a.t_ms < b.t_ms; };
  if (!std::is_sorted(rows.begin(), rows.end(), by_time)) std::stable_sort(rows.begin(), rows.end(), by_time);
  if (rows.size() >= 2) {
    std::vector<int64_t> d;
    d.reserve(rows.size() - 1);
    for (size_t i = 1; i < rows.size(); ++i) d.push_back(rows[i].t_ms - rows[i - 1].t_ms);
    std::nth_element(d.begin(), d.begin() + static_cast<long>(d.size() / 2), d.end());
    out_.interval_ms = d[d.size() / 2];
  }
  return std::move(out_);
}

Result<ThermalSeries> ParseThermalCsv(std::string_view text, const std::string& source, const LocalZone& zone) {
  ThermalCsvParser p(source, zone);
  const auto lines = SplitLines(text);
  const bool unterminated = !text.empty() && text.back() != '\n';
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool torn_candidate = unterminated && i + 1 == lines.size() && p.has_header();
    auto r = p.AddLine(lines[i], i + 1);
    if (!r && !torn_candidate) return std::unexpected(r.error());
  }
  return p.Finish();
}

Result<ThermalSeries> ReadThermalCsv(const std::string& path, const LocalZone& zone) {
  ThermalCsvParser p(path, zone);
  std::optional<Error> err;
  uint64_t err_line = 0, last_line = 0;
  bool err_after_header = false;
  struct stat sb {};
  const uint64_t size = ::stat(path.c_str(), &sb) == 0 && S_ISREG(sb.st_mode) ? static_cast<uint64_t>(sb.st_size) : 0;
  auto st = ForEachLine(path, [&](std::string_view line, uint64_t n) {
    last_line = n;
    if (err) return false;  // a line follows the bad one: it was not a torn last row
    const bool had_header = p.has_header();
    // Rows are ~260 bytes: room for the file's rows at the first row's length, not doubling.
    if (had_header && n == 2 && size > 0) p.Reserve(static_cast<size_t>(size / (line.size() + 1) * 11 / 10));
    if (auto r = p.AddLine(line, n); !r) {
      err = r.error();
      err_line = n;
      err_after_header = had_header;
    }
    return true;
  });
  if (!st) return std::unexpected(st.error());
  if (err && !(err_line == last_line && err_after_header && st->last_unterminated)) return std::unexpected(*err);
  return p.Finish();
}

namespace {
constexpr double kGiBytes = 1024.0 * 1024 * 1024;
}  // namespace

MeasuredPeaks PeaksFromThermal(const ThermalSeries& s) {
  MeasuredPeaks p;
  std::optional<double> first, lowest, gpu;
  for (const auto& r : s.rows) {
    if (r.mem_available_gib) {
      if (!first) first = r.mem_available_gib;
      lowest = std::min(lowest.value_or(*r.mem_available_gib), *r.mem_available_gib);
    }
    if (r.gpu_attributed_gib) gpu = std::max(gpu.value_or(0.0), *r.gpu_attributed_gib);
  }
  int readings = 0;
  for (const auto& r : s.rows) readings += r.mem_available_gib ? 1 : 0;
  if (readings >= 2) {
    p.pool_drop = std::max(0.0, *first - *lowest) * kGiBytes;
    p.first_available = *first * kGiBytes;
    p.lowest_available = *lowest * kGiBytes;
  }
  if (gpu) p.gpu_process = *gpu * kGiBytes;
  return p;
}
}  // namespace sparkops
