#include "analysis/driver_memory.h"

#include <fmt/format.h>

#include "base/timefmt.h"

namespace sparkops {

namespace {

constexpr size_t kMaxLines = 4;
constexpr const char* kEvent = "kernel_nvrm_no_memory";

std::string Hms(int64_t t_ms) { return FormatUtcMillis(FromUnixMillis(t_ms)).substr(11, 8) + "Z"; }

bool IsGuardStop(const RunEvent& e) {
  return e.type == "memory_guard" && e.Str("reason") == kEvent &&
         (e.Str("action") == "terminate" || e.Str("action") == "kill");
}

/// The kernel records in [from, to], as evidence lines (the first kMaxLines, then how many more).
std::vector<std::string> Lines(const std::vector<RunEvent>& events, int64_t from, int64_t to) {
  std::vector<std::string> out;
  size_t more = 0;
  for (const RunEvent& e : events) {
    if (e.type != kEvent || e.t_ms < from || e.t_ms > to) continue;
    if (out.size() == kMaxLines) {
      ++more;
      continue;
    }
    const std::string line = e.Str("line");
    out.push_back(fmt::format("kernel {}: {}", Hms(e.t_ms), line.empty() ? "NVRM: NV_ERR_NO_MEMORY" : line));
  }
  if (more) out.push_back(fmt::format("and {} more NV_ERR_NO_MEMORY record{}", more, more == 1 ? "" : "s"));
  return out;
}

}  // namespace

std::vector<std::string> DriverMemoryEvidence(const std::vector<RunEvent>& events, int64_t t0, int64_t t1,
                                              int64_t lookback_ms) {
  return Lines(events, t0 - lookback_ms, t1);
}

std::vector<std::string> DriverMemoryEndEvidence(const std::vector<RunEvent>& events) {
  if (events.empty()) return {};
  std::vector<std::string> out;
  for (const RunEvent& e : events) {
    if (!IsGuardStop(e) || !out.empty()) continue;
    const std::string line = e.Str("kernel_line");
    out.push_back(fmt::format("the memory guard stopped the job at {} on the driver's record: {}", Hms(e.t_ms),
                              line.empty() ? "NVRM: NV_ERR_NO_MEMORY" : line));
  }
  const int64_t end = events.back().t_ms;  // sorted by time: the exit record, or the last one written
  std::vector<std::string> near = Lines(events, end - kDriverErrorNearEndMs, end);
  out.insert(out.end(), near.begin(), near.end());
  return out;
}

std::vector<std::string> FragmentationEndEvidence(const std::vector<RunEvent>& events) {
  for (const RunEvent& e : events) {
    if (e.type != "memory_guard" || e.Str("reason") != "fragmentation") continue;
    if (e.Str("action") != "terminate" && e.Str("action") != "kill") continue;
    const std::string b = e.Str("buddyinfo");
    return {fmt::format("the memory guard stopped the job at {}: {}", Hms(e.t_ms),
                        b.empty() ? "no free 2 MiB block for the driver while the job grew" : b)};
  }
  return {};
}

}  // namespace sparkops
