#include "analysis/thermal.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <exception>

#include "analysis/contention.h"
#include "analysis/line_reader.h"
#include "analysis/step_line.h"
#include "base/csv_field.h"
#include "base/strings.h"

namespace sparkops {

namespace {
constexpr size_t kMaxRows = 50'000'000;
constexpr size_t kMaxRecordBytes = 1 << 20;  // a record spread over lines by a quoted field: 1 MiB at most
using RowField = std::optional<double> ThermalRow::*;

/// How a column of the header is read, looked up by its name (never its position).
struct ColumnRule {
  const char* name;
  ThermalCsvParser::Kind kind;
  RowField field = nullptr;  ///< kNumber
  uint64_t bit = 0;          ///< kBit
};

/// sparkops' own names (telemetry/csv.h), then nvidia-smi's --query-gpu names.
constexpr ColumnRule kRules[] = {
    {"timestamp", ThermalCsvParser::kTime},
    {"gpu_temp_c", ThermalCsvParser::kNumber, &ThermalRow::temp_c},
    {"temperature.gpu", ThermalCsvParser::kNumber, &ThermalRow::temp_c},
    {"power_w", ThermalCsvParser::kNumber, &ThermalRow::power_w},
    {"power.draw", ThermalCsvParser::kNumber, &ThermalRow::power_w},
    {"power.draw.instant", ThermalCsvParser::kNumber, &ThermalRow::power_w},
    {"power_limit_w", ThermalCsvParser::kNumber, &ThermalRow::power_limit_w},
    {"power.limit", ThermalCsvParser::kNumber, &ThermalRow::power_limit_w},
    {"enforced.power.limit", ThermalCsvParser::kNumber, &ThermalRow::power_limit_w},
    {"sm_clock_mhz", ThermalCsvParser::kNumber, &ThermalRow::sm_clock_mhz},
    {"clocks.sm", ThermalCsvParser::kNumber, &ThermalRow::sm_clock_mhz},
    {"clocks.current.sm", ThermalCsvParser::kNumber, &ThermalRow::sm_clock_mhz},
    {"sm_clock_max_mhz", ThermalCsvParser::kNumber, &ThermalRow::sm_clock_max_mhz},
    {"clocks.max.sm", ThermalCsvParser::kNumber, &ThermalRow::sm_clock_max_mhz},
    {"gpu_util_pct", ThermalCsvParser::kNumber, &ThermalRow::util_pct},
    {"util_pct", ThermalCsvParser::kNumber, &ThermalRow::util_pct},
    {"utilization.gpu", ThermalCsvParser::kNumber, &ThermalRow::util_pct},
    {"mem_total_gib", ThermalCsvParser::kNumber, &ThermalRow::mem_total_gib},
    {"mem_available_gib", ThermalCsvParser::kNumber, &ThermalRow::mem_available_gib},
    {"swap_used_gib", ThermalCsvParser::kNumber, &ThermalRow::swap_used_gib},
    {"mem_pressure_some_avg10", ThermalCsvParser::kNumber, &ThermalRow::psi_some_avg10},
    {"gpu_attributed_gib", ThermalCsvParser::kNumber, &ThermalRow::gpu_attributed_gib},
    {"page_cache_gib", ThermalCsvParser::kNumber, &ThermalRow::page_cache_gib},
    {"mem_free_gib", ThermalCsvParser::kNumber, &ThermalRow::mem_free_gib},
    {"energy_j", ThermalCsvParser::kNumber, &ThermalRow::energy_j},  // NVML total-energy counter, J
    {"clock_event_reasons", ThermalCsvParser::kReasons},
    {"clocks_event_reasons.active", ThermalCsvParser::kReasons},
    {"clocks_throttle_reasons.active", ThermalCsvParser::kReasons},
    {"clocks_event_reasons_counters.active", ThermalCsvParser::kIgnore},
    {"throttle", ThermalCsvParser::kThrottle},
    {"event", ThermalCsvParser::kEvent},
    // nvidia-smi per-reason columns ("Active" / "Not Active")
    {"clocks_event_reasons.sw_power_cap", ThermalCsvParser::kBit, nullptr, kReasonSwPowerCap},
    {"clocks_throttle_reasons.sw_power_cap", ThermalCsvParser::kBit, nullptr, kReasonSwPowerCap},
    {"clocks_event_reasons.hw_slowdown", ThermalCsvParser::kBit, nullptr, kReasonHwSlowdown},
    {"clocks_throttle_reasons.hw_slowdown", ThermalCsvParser::kBit, nullptr, kReasonHwSlowdown},
    {"clocks_event_reasons.sw_thermal_slowdown", ThermalCsvParser::kBit, nullptr, kReasonSwThermal},
    {"clocks_throttle_reasons.sw_thermal_slowdown", ThermalCsvParser::kBit, nullptr, kReasonSwThermal},
    {"clocks_event_reasons.hw_thermal_slowdown", ThermalCsvParser::kBit, nullptr, kReasonHwThermal},
    {"clocks_throttle_reasons.hw_thermal_slowdown", ThermalCsvParser::kBit, nullptr, kReasonHwThermal},
    {"clocks_event_reasons.hw_power_brake_slowdown", ThermalCsvParser::kBit, nullptr, kReasonHwPowerBrake},
    {"clocks_throttle_reasons.hw_power_brake_slowdown", ThermalCsvParser::kBit, nullptr, kReasonHwPowerBrake},
};

ThermalCsvParser::Column ColumnFor(std::string name) {
  // "power.draw [W]" -> "power.draw"
  if (auto b = name.find(" ["); b != std::string::npos) name.resize(b);
  name = ToLower(Trim(name));
  ThermalCsvParser::Column c;
  for (const ColumnRule& r : kRules)
    if (name == r.name) {
      c.kind = r.kind;
      c.field = r.field;
      c.bit = r.bit;
      return c;
    }
  if (PowerField f = PowerColumnField(name)) {
    c.kind = ThermalCsvParser::kPower;
    c.power = f;
  } else if (IsContentionColumn(name)) {
    c.kind = ThermalCsvParser::kContention;
    c.lower_name = std::move(name);
  }
  return c;
}

bool IsAbsent(std::string_view v) {
  return v.empty() || v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "Not Supported" || v == "-" ||
         v == "[Unknown Error]";
}
}  // namespace

std::string ThrottleNames(uint64_t bits) { return Join(ThrottleReasons(bits), "+"); }

Result<bool> ThermalCsvParser::AddLine(std::string_view raw, uint64_t lineno) {
  // A quoted field may hold line ends (RFC 4180): such a record is gathered over several lines.
  if (!pending_.empty()) {
    if (pending_.size() + raw.size() > kMaxRecordBytes)
      return InputError(source_ + ":" + std::to_string(pending_line_) + ": a quoted field runs past 1 MiB");
    pending_ += '\n';
    pending_ += raw;
    if (CsvOpenQuote(raw, /*in_quotes=*/true)) return true;  // this line only: the record's start was scanned
    std::string record = std::move(pending_);
    pending_.clear();
    return AddRecord(record, pending_line_);
  }
  if (CsvOpenQuote(raw)) {
    pending_.assign(raw);
    pending_line_ = lineno;
    return true;
  }
  return AddRecord(raw, lineno);
}

Result<bool> ThermalCsvParser::AddRecord(std::string_view raw, uint64_t lineno) {
  std::string_view line = Trim(raw);
  if (line.empty()) return true;
  auto where = [&](std::string_view col) {
    return source_ + ":" + std::to_string(lineno) + (col.empty() ? std::string() : ": column " + std::string(col));
  };
  thread_local std::vector<std::string> f;
  if (auto bad = CsvSplit(line, &f); !bad.empty()) return InputError(where("") + ": " + bad);
  if (cols_.empty()) {
    header_ = std::string(line);
    bool has_time = false;
    for (const auto& name : f) {
      Column c = ColumnFor(name);
      has_time |= c.kind == kTime;
      cols_.push_back(std::move(c));
      names_.emplace_back(name);
      if (name.find('.') != std::string::npos || name.find(" [") != std::string::npos) nvidia_smi_ = true;
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
    const Column& c = cols_[i];
    std::string_view v = f[i];
    if (c.kind == kIgnore || IsAbsent(v)) continue;
    std::string_view colname = names_[i];
    switch (c.kind) {
      case kIgnore: break;
      case kContention:  // host contention columns (analysis/contention.h)
        if (auto bad = SetContentionCell(r, c.lower_name, v); !bad.empty())
          return InputError(where(colname) + ": " + bad);
        break;
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
      case kBit:
        have_bits = true;
        if (v == "Active") bits |= c.bit;
        else if (v != "Not Active")
          return InputError(where(colname) + ": '" + std::string(v) + "' (expected Active or Not Active)");
        break;
      case kNumber:
      case kPower: {
        size_t used = 0;
        auto num = ParseNumberPrefix(v, &used);
        std::string_view unit = Trim(v.substr(used));
        if (!num || (unit.size() > 4 && unit != "MHz"))
          return InputError(where(colname) + ": '" + std::string(v) + "' is not a number");
        if (c.kind == kPower) r.power.*(c.power) = *num;
        else r.*(c.field) = *num;
        break;
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
  if (!pending_.empty())
    return InputError(source_ + ":" + std::to_string(pending_line_) + ": a quoted field is not closed");
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
  if (unterminated && p.has_header()) p.DropPending();  // a quoted record cut short
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
  if (!err && st->last_unterminated && p.has_header()) p.DropPending();  // a quoted record cut short
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
