#include "host/pressure.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace sparkops {

Result<Pressure> ParsePressure(std::string_view text) {
  Pressure p;
  size_t line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    line = Trim(line);
    if (line.empty()) continue;
    auto words = Split(line, ' ');
    std::string_view kind = words[0];
    if (kind != "some" && kind != "full")
      return InputError(fmt::format("pressure line {}: expected 'some' or 'full', got '{}'", line_no, kind));
    PressureLine pl;
    int seen = 0;
    for (size_t i = 1; i < words.size(); ++i) {
      if (words[i].empty()) continue;
      auto eq = words[i].find('=');
      if (eq == std::string_view::npos)
        return InputError(fmt::format("pressure line {}: '{}' is not key=value", line_no, words[i]));
      std::string_view key = words[i].substr(0, eq), val = words[i].substr(eq + 1);
      std::optional<double> d = ParseDouble(val);
      if (key == "total") {
        auto u = ParseUint(val);
        if (!u) return InputError(fmt::format("pressure line {}: total: not a number: '{}'", line_no, val));
        pl.total_us = *u, seen |= 8;
        continue;
      }
      double* dst = key == "avg10" ? &pl.avg10 : key == "avg60" ? &pl.avg60 : key == "avg300" ? &pl.avg300 : nullptr;
      if (!dst) continue;  // a future field
      // A share of wall time: 0..100 (an out-of-range or infinite figure is not a reading).
      if (!d || !(*d >= 0 && *d <= 100))
        return InputError(fmt::format("pressure line {}: {}: not a percentage: '{}'", line_no, key, val));
      *dst = *d;
      seen |= key == "avg10" ? 1 : key == "avg60" ? 2 : 4;
    }
    if (seen != 15) return InputError(fmt::format("pressure line {}: missing avg10/avg60/avg300/total", line_no));
    (kind == "some" ? p.some : p.full) = pl;
  }
  if (!p.some) return InputError("pressure: no 'some' line");
  return p;
}

Result<Pressure> ReadMemoryPressure(const HostFs& fs) {
  auto text = fs.Read("/proc/pressure/memory", 4096);
  if (!text) return std::unexpected(text.error());
  auto p = ParsePressure(*text);
  if (!p) return InputError(fs.Path("/proc/pressure/memory") + ": " + p.error().message);
  return p;
}

}  // namespace sparkops
