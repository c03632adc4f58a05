#include <fmt/format.h>

#include "base/strings.h"
#include "checks/check.h"
#include "checks/g4_power.h"
#include "telemetry/reasons.h"

namespace sparkops {

// G4: the GPU's thermal state right now, as an INFO reading (one sample cannot show a trend; the
// thermal signature needs `sparkops sample`/`run`). SKIP when no GPU is readable, saying why.
CheckResult CheckG4(const HostFacts& f) {
  CheckResult r{"G4", CheckStatus::kInfo, "", {}, ""};
  const GpuSnapshot& snap = f.gpu();
  if (!snap.any()) {
    r.status = CheckStatus::kSkip;
    r.summary = "no GPU readable: " + snap.why_none;
    return r;
  }
  const GpuReading& g = snap.gpus.front();
  if (!g.error.empty()) {
    r.status = CheckStatus::kSkip;
    std::string who = g.name.empty() ? fmt::format("GPU {}", g.index) : fmt::format("GPU {} ({})", g.index, g.name);
    r.summary = fmt::format("{} cannot be read: {}", who, g.error);
    return r;
  }
  auto num = [](const auto& v, const char* spec) {
    return v ? fmt::format(fmt::runtime(spec), *v) : std::string("not reported");
  };
  std::string clocks = g.sm_clock_mhz ? fmt::format("{} MHz", *g.sm_clock_mhz) : "not reported";
  if (g.sm_clock_mhz && g.sm_clock_max_mhz)
    clocks = fmt::format("{} of {} MHz max", *g.sm_clock_mhz, *g.sm_clock_max_mhz);
  else if (g.sm_clock_max_mhz) clocks += fmt::format(" (max {} MHz)", *g.sm_clock_max_mhz);
  std::string reasons = "not reported";
  if (g.clock_event_reasons) {
    auto names = DecodeReasons(*g.clock_event_reasons);
    auto thr = ThrottleReasons(*g.clock_event_reasons);
    reasons =
        fmt::format("{} ({})", FormatReasonMask(*g.clock_event_reasons), names.empty() ? "none" : Join(names, ", "));
    reasons += thr.empty() ? ", not throttling" : ", THROTTLING: " + Join(thr, "+");
  }
  r.summary = fmt::format("{}: {} degC, power {}, power limit {}, SM clock {}, clock-event reasons {}",
                          g.name.empty() ? "GPU " + std::to_string(g.index) : g.name, num(g.temp_c, "{:g}"),
                          num(g.power_w, "{:.1f} W"), num(g.power_limit_w, "{:.0f} W"), clocks, reasons);
  r.evidence.push_back("source: " + snap.source);
  if (!g.power_limit_w)
    r.evidence.push_back(
        "no power limit reported (GB10 exposes none through NVML); the 240 W figure is a "
        "rated reference, not a reading");
  if (g.temp_c && *g.temp_c >= 86)
    r.evidence.push_back("at or above 86 degC: a reported GB10 trip point is 86-87 degC (inference-atlas PR #225)");
  r.evidence.push_back(
      "a clear reason mask does not prove full speed on GB10: power-delivery-degraded and hidden "
      "slow states set no reason bit; watch clocks under load with `sparkops sample`");
  if (snap.gpus.size() > 1) r.evidence.push_back(fmt::format("{} GPUs; the line shows GPU 0", snap.gpus.size()));
  // issue 18: PROCHOT / power-limit level / DC input / CPU temperature from outside NVML
  PowerReading power = ReadPowerReading(f.ctx().fs);
  for (auto& line : G4PowerLines(power, g.name.find("GB10") != std::string::npos))
    r.evidence.push_back(std::move(line));
  // issue 33: the brake belongs on the line, not only in the JSON evidence.
  if (power.spbm && power.prochot && *power.prochot) {
    r.status = CheckStatus::kWarn;
    r.summary += fmt::format("; PROCHOT ON (hardware brake), power-limit level {}",
                             power.pl_level ? std::to_string(*power.pl_level) : "not reported");
    r.fix =
        "check the power supply and airflow: PROCHOT drops the clocks (reported to 611 MHz) whatever NVML's "
        "reason bits say (github.com/antheas/spark_hwmon)";
  }
  return r;
}

}  // namespace sparkops
