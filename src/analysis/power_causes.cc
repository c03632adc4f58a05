#include "analysis/power_causes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/causes.h"
#include "telemetry/power_events.h"

namespace sparkops {
namespace {

using PField = std::optional<double> PowerColumns::*;

/// Rows with `f` known, and of those the ones where `pred` holds.
struct Count {
  size_t known = 0, hits = 0;
  double Share() const { return known ? static_cast<double>(hits) / static_cast<double>(known) : 0; }
};

template <typename Pred>
Count CountRows(const std::vector<const ThermalRow*>& rows, PField f, Pred pred) {
  Count c;
  for (const ThermalRow* r : rows) {
    if (!(r->power.*f)) continue;
    ++c.known;
    c.hits += pred(*r) ? 1 : 0;
  }
  return c;
}

double MedianOf(const std::vector<const ThermalRow*>& rows, PField f) {
  std::vector<double> v;
  for (const ThermalRow* r : rows)
    if (r->power.*f) v.push_back(*(r->power.*f));
  if (v.empty()) return NAN;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void Prochot(const std::vector<const ThermalRow*>& before, const std::vector<const ThermalRow*>& span, bool clocks_fell,
             std::vector<PowerFinding>* found, std::vector<std::string>* ruled) {
  auto on = [](const ThermalRow& r) { return *r.power.prochot != 0; };
  Count s = CountRows(span, &PowerColumns::prochot, on), b = CountRows(before, &PowerColumns::prochot, on);
  if (!s.known) {
    ruled->push_back("prochot: PROCHOT not recorded (needs the optional spbm hwmon driver)");
    return;
  }
  if (s.hits && (clocks_fell || !b.known || s.Share() >= b.Share() + 0.25)) {
    std::vector<std::string> ev{fmt::format("PROCHOT (the hardware brake) on in {} of {} samples ({} of {} before)",
                                            s.hits, s.known, b.hits, b.known)};
    double cpu = MedianOf(span, &PowerColumns::cpu_temp_c);
    if (!std::isnan(cpu)) ev.push_back(fmt::format("CPU temperature {:.0f} °C (median over the span)", cpu));
    found->push_back({"prochot", CausePriority("prochot"), ev});
  } else {
    ruled->push_back(
        s.hits ? fmt::format("prochot: on in {} of {} samples, as before ({} of {}), and the clocks did not fall",
                             s.hits, s.known, b.hits, b.known)
               : fmt::format("prochot: PROCHOT off in all {} samples", s.known));
  }
}

void Limiters(const std::vector<const ThermalRow*>& before, const std::vector<const ThermalRow*>& span,
              bool clocks_fell, std::vector<PowerFinding>* found, std::vector<std::string>* ruled) {
  struct L {
    const char* name;
    PField ewma, cap;
  };
  static const L kLimiters[] = {{"PL1", &PowerColumns::pl1_w, &PowerColumns::pl1_cap_w},
                                {"SysPL1", &PowerColumns::syspl1_w, &PowerColumns::syspl1_cap_w}};
  std::vector<std::string> seen;
  const L* best = nullptr;
  double best_share = 0;
  for (const L& l : kLimiters) {
    auto at_cap = [&](const ThermalRow& r) {
      return r.power.*l.cap && *(r.power.*l.ewma) >= kLimiterAtCap * *(r.power.*l.cap);
    };
    Count s = CountRows(span, l.ewma, at_cap), b = CountRows(before, l.ewma, at_cap);
    double ew = MedianOf(span, l.ewma), cap = MedianOf(span, l.cap);
    if (!s.known || std::isnan(cap)) continue;
    seen.push_back(fmt::format("{} EWMA {:.0f} W of its {:.0f} W cap", l.name, ew, cap));
    bool new_in_span = clocks_fell || !b.known || s.Share() >= b.Share() + 0.25;
    if (s.Share() >= 0.5 && new_in_span && s.Share() > best_share) best = &l, best_share = s.Share();
  }
  if (best) {
    double ew = MedianOf(span, best->ewma), cap = MedianOf(span, best->cap);
    found->push_back({"power_cap",
                      CausePriority("power_cap"),
                      {fmt::format("limiter {}: its EWMA {:.0f} W at its cap {:.0f} W in {:.0f} % of the span",
                                   best->name, ew, cap, 100 * best_share),
                       "the firmware's power limit (read from the spbm hwmon driver; NVML shows no cap on GB10)"}});
  } else if (seen.empty()) {
    ruled->push_back("power_cap (firmware limiters PL1/SysPL1): not recorded (needs the optional spbm hwmon driver)");
  } else {
    std::string all;
    for (const auto& x : seen) all += (all.empty() ? "" : "; ") + x;
    ruled->push_back("power_cap (firmware limiters): " + all + " (not at the cap over the span)");
  }
}

void Delivery(const std::vector<const ThermalRow*>& span, std::vector<PowerFinding>* found,
              std::vector<std::string>* ruled) {
  auto low = [](const ThermalRow& r) {
    if (r.events.find("power_delivery_low") != std::string::npos) return true;
    const auto& p = r.power;
    bool busy = !r.util_pct || *r.util_pct >= kPowerDeliveryUtilPct;
    return p.syspl1_cap_w && *p.syspl1_cap_w > 0 && *p.dc_input_w < kPowerDeliveryFraction * *p.syspl1_cap_w && busy &&
           r.sm_clock_mhz && *r.sm_clock_mhz < kPowerDeliveryClockMhz;
  };
  Count s = CountRows(span, &PowerColumns::dc_input_w, low);
  if (!s.known) {
    ruled->push_back("power_delivery: DC input not recorded (needs the optional spbm hwmon driver)");
    return;
  }
  double dc = MedianOf(span, &PowerColumns::dc_input_w), cap = MedianOf(span, &PowerColumns::syspl1_cap_w);
  std::string cap_txt =
      std::isnan(cap) ? std::string("SysPL1 cap not reported") : fmt::format("SysPL1 cap {:.0f} W", cap);
  if (2 * s.hits >= s.known && s.hits) {
    found->push_back(
        {"power_delivery",
         CausePriority("power_delivery"),
         {fmt::format("DC input {:.0f} W, under {:.0f} % of the {} while the GPU is busy with the SM clock "
                      "under {:.0f} MHz ({} of {} samples)",
                      dc, 100 * kPowerDeliveryFraction, cap_txt, kPowerDeliveryClockMhz, s.hits, s.known),
          "the power supply is not delivering (degraded USB-PD state); a full power cycle clears it: unplug "
          "the brick from the wall and from the Spark, wait a minute"}});
  } else {
    ruled->push_back(fmt::format("power_delivery: DC input {:.0f} W against the {} (low in {} of {} samples)", dc,
                                 cap_txt, s.hits, s.known));
  }
}

}  // namespace

void ClassifyPower(const std::vector<const ThermalRow*>& before, const std::vector<const ThermalRow*>& span,
                   bool clocks_fell, std::vector<PowerFinding>* found, std::vector<std::string>* ruled) {
  Prochot(before, span, clocks_fell, found, ruled);
  Limiters(before, span, clocks_fell, found, ruled);
  Delivery(span, found, ruled);
}

}  // namespace sparkops
