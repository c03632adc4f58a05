#include "telemetry/csv_read.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/strings.h"

namespace sparkops {
namespace {

std::vector<std::string> SplitNonEmpty(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (auto p : Split(s, sep))
    if (!p.empty()) out.emplace_back(p);
  return out;
}

/// Parses one data line into `row`; "" on success, else what is wrong.
std::string ParseRow(std::string_view line, const std::vector<std::string>& header, SampleCsvRow& row) {
  auto cells = Split(line, ',');
  if (cells.size() != header.size()) return fmt::format("{} cells, header has {}", cells.size(), header.size());
  static const std::map<std::string_view, std::optional<double> SampleCsvRow::*> kNumbers = {
      {"gpu_temp_c", &SampleCsvRow::gpu_temp_c},
      {"power_w", &SampleCsvRow::power_w},
      {"power_limit_w", &SampleCsvRow::power_limit_w},
      {"sm_clock_mhz", &SampleCsvRow::sm_clock_mhz},
      {"sm_clock_max_mhz", &SampleCsvRow::sm_clock_max_mhz},
      {"gpu_util_pct", &SampleCsvRow::gpu_util_pct},
      {"energy_j", &SampleCsvRow::energy_j},
      {"mem_total_gib", &SampleCsvRow::mem_total_gib},
      {"mem_available_gib", &SampleCsvRow::mem_available_gib},
      {"mem_free_gib", &SampleCsvRow::mem_free_gib},
      {"page_cache_gib", &SampleCsvRow::page_cache_gib},
      {"swap_used_gib", &SampleCsvRow::swap_used_gib},
      {"mem_pressure_some_avg10", &SampleCsvRow::mem_pressure_some_avg10},
      {"gpu_attributed_gib", &SampleCsvRow::gpu_attributed_gib},
  };
  for (size_t i = 0; i < header.size(); ++i) {
    std::string_view cell = Trim(cells[i]);
    const std::string& col = header[i];
    if (col == "timestamp") {
      auto t = ParseTimestamp(cell);
      if (!t) return fmt::format("column timestamp: not a timestamp: '{}'", cell);
      row.time = *t;
      continue;
    }
    if (cell.empty()) continue;
    if (auto it = kNumbers.find(col); it != kNumbers.end()) {
      auto d = ParseDouble(cell);
      if (!d) return fmt::format("column {}: not a number: '{}'", col, cell);
      row.*(it->second) = *d;
    } else if (col == "clock_event_reasons") {
      std::string_view hex = cell;
      if (StartsWith(hex, "0x")) hex.remove_prefix(2);
      uint64_t v = 0;
      bool ok = !hex.empty() && hex.size() <= 16;
      for (char c : hex) {
        int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (d < 0) ok = false;
        v = v * 16 + static_cast<uint64_t>(d < 0 ? 0 : d);
      }
      if (!ok) return fmt::format("column clock_event_reasons: not a hex mask: '{}'", cell);
      row.clock_event_reasons = v;
    } else if (col == "throttle") {
      row.throttle = SplitNonEmpty(cell, '+');
    } else if (col == "event") {
      row.events = SplitNonEmpty(cell, ';');
    }
  }
  return "";
}

}  // namespace

Result<ThermalCsv> ParseThermalCsv(std::string_view text, std::string_view name) {
  ThermalCsv out;
  auto lines = SplitLines(text);
  if (lines.empty()) return InputError(fmt::format("{}: empty (no header)", name));
  std::vector<std::string> header;
  for (auto h : Split(lines[0], ',')) header.emplace_back(Trim(h));
  if (std::find(header.begin(), header.end(), "timestamp") == header.end())
    return InputError(fmt::format("{}: line 1: header has no 'timestamp' column", name));
  bool ends_with_newline = !text.empty() && text.back() == '\n';
  for (size_t i = 1; i < lines.size(); ++i) {
    if (Trim(lines[i]).empty()) continue;
    SampleCsvRow row;
    std::string why = ParseRow(lines[i], header, row);
    if (!why.empty()) {
      if (i + 1 == lines.size() && !ends_with_newline) {
        ++out.torn_rows;
        break;
      }
      return InputError(fmt::format("{}: line {}: {}", name, i + 1, why));
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace sparkops
