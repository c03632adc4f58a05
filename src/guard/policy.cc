#include "guard/policy.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/strings.h"

namespace sparkops::guard {

Result<FloorSpec> ParseFloor(std::string_view text) {
  auto bad = [&](const char* why) {
    return InputError("--min-available: " + std::string(why) + ": '" + std::string(text) +
                      "' (expected a size like 8G, 512M or a share like 6%)");
  };
  std::string_view t = Trim(text);
  if (t.empty()) return bad("empty");
  FloorSpec spec;
  if (t.back() == '%') {
    auto d = ParseDouble(Trim(t.substr(0, t.size() - 1)));
    if (!d || !std::isfinite(*d) || *d <= 0 || *d >= 100) return bad("a share must be above 0 and below 100");
    spec.percent = *d;
    return spec;
  }
  if (t.size() > 2 && (t.ends_with("iB") || t.ends_with("ib"))) t.remove_suffix(2);
  else if (t.size() > 1 && (t.back() == 'B' || t.back() == 'b')) t.remove_suffix(1);
  double mult = 1;
  switch (t.empty() ? '\0' : t.back()) {
    case 'K':
    case 'k': mult = 1024.0; break;
    case 'M':
    case 'm': mult = 1024.0 * 1024; break;
    case 'G':
    case 'g': mult = 1024.0 * 1024 * 1024; break;
    case 'T':
    case 't': mult = 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
  }
  if (mult != 1) t.remove_suffix(1);
  auto d = ParseDouble(Trim(t));
  if (!d || !std::isfinite(*d) || *d <= 0) return bad("not a positive size");
  double bytes = *d * mult;
  if (bytes >= 1024.0 * 1024 * 1024 * 1024 * 1024) return bad("larger than 1 PiB");
  if (bytes < 1) return bad("below one byte");
  spec.bytes = static_cast<uint64_t>(bytes);
  return spec;
}

uint64_t ResolveFloor(const std::optional<FloorSpec>& spec, uint64_t mem_total) {
  auto pct = [&](double p) { return static_cast<uint64_t>(static_cast<double>(mem_total) * p / 100.0); };
  if (!spec) return std::max(kDefaultFloorMin, pct(kDefaultFloorPct));
  if (spec->bytes) return *spec->bytes;
  return pct(*spec->percent);
}

Decision Decide(const Config& c, const Reading& r, State& s) {
  if (r.available >= c.floor) s.flushed = false;  // the episode is over: a later one may flush again
  bool pressured = c.max_pressure && r.psi_full_avg10 && *r.psi_full_avg10 > *c.max_pressure;
  if (!pressured) s.pressure_since.reset();
  else if (!s.pressure_since) s.pressure_since = r.t_s;

  if (r.available < c.floor) {
    if (c.may_flush && !s.flushed && r.page_cache && r.available + *r.page_cache >= c.floor) {
      s.flushed = true;
      return {Action::kFlush, Reason::kFloor};
    }
    return {Action::kStop, Reason::kFloor};
  }
  if (pressured && r.t_s - *s.pressure_since >= c.pressure_window_s) return {Action::kStop, Reason::kPressure};
  return {};
}

double PollInterval(const Config& c, const Reading& r) {
  bool near = r.available / 2 < c.floor;  // available < 2 * floor, without overflow
  bool pressured = c.max_pressure && r.psi_full_avg10 && *r.psi_full_avg10 > *c.max_pressure;
  return near || pressured ? kFastPollS : kSlowPollS;
}

const std::vector<ReasonInfo>& Reasons() {
  static const std::vector<ReasonInfo> kReasons = {
      {Reason::kFloor, "min_available", true, "MemAvailable under the floor (--min-available)"},
      {Reason::kPressure, "pressure", true, "memory pressure (PSI full avg10) above --max-pressure for the window"},
      {Reason::kKernelNoMemory, "kernel_nvrm_no_memory", false,
       "the driver logged NVRM NV_ERR_NO_MEMORY (--kernel-signals)"},
      {Reason::kFragmentation, "fragmentation", false,
       "no free 2 MiB block for the driver while the job grew under twice the floor (--kernel-signals)"},
  };
  return kReasons;
}

const ReasonInfo* ReasonNamed(std::string_view name) {
  for (const ReasonInfo& r : Reasons())
    if (name == r.name) return &r;
  return nullptr;
}

const char* ToString(Reason r) {
  for (const ReasonInfo& i : Reasons())
    if (i.reason == r) return i.name;
  return "none";
}

}  // namespace sparkops::guard
