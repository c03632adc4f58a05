#include "analysis/classify.h"
#include "analysis/causes.h"
#include "analysis/contention.h"
#include "analysis/driver_memory.h"
#include "analysis/power_causes.h"
#include "base/json_text.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace sparkops {

namespace {
using Field = std::optional<double> ThermalRow::*;

struct Stats {
  size_t n = 0;
  double median = NAN, min = NAN, max = NAN, first = NAN, last = NAN;
};

Stats Of(const std::vector<const ThermalRow*>& rows, Field f) {
  std::vector<double> v;
  v.reserve(rows.size());
  for (auto* r : rows)
    if (r->*f) v.push_back(*(r->*f));
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  s.first = v.front();
  s.last = v.back();
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  s.median = v[v.size() / 2];
  return s;
}

/// Reason-bit counts over some rows.
struct Bits {
  size_t thermal = 0, power = 0, hw_slow = 0, with_reasons = 0, pd_events = 0;
};

Bits CountBits(const std::vector<const ThermalRow*>& rows) {
  Bits c;
  for (auto* r : rows) {
    uint64_t b = r->reasons.value_or(0);
    if (r->reasons) ++c.with_reasons;
    c.thermal += (b & (kReasonSwThermal | kReasonHwThermal)) || r->throttle.find("thermal") != std::string::npos;
    c.power += (b & (kReasonSwPowerCap | kReasonHwPowerBrake)) || r->throttle.find("power") != std::string::npos;
    c.hw_slow += (b & kReasonHwSlowdown) != 0;
    c.pd_events += r->events.find("pd_degraded") != std::string::npos;
  }
  return c;
}

/// A reason bit explains a slowdown only when it is new to the span: on in at least a quarter
/// more of the samples than in the stretch before, or on while the clocks fell. A bit that was
/// on at the same rate before (a discrete GPU at its power limit all along: an H200 at 700 W
/// under a steady load sets sw_power_cap in every sample) changed nothing.
bool NewInSpan(size_t bits, size_t n, size_t bits_before, size_t n_before, bool clocks_fell) {
  if (bits == 0) return false;
  if (clocks_fell || n_before == 0) return true;
  return static_cast<double>(bits) / n >= static_cast<double>(bits_before) / n_before + 0.25;
}

/// ", 1.1 GiB in the pool" from a process_start record's pool_gib (a number), else "".
std::string PoolText(const RunEvent& e) {
  auto it = e.record.find("pool_gib");
  if (it == e.record.end() || !it->is_number()) return "";
  return fmt::format(", {:.1f} GiB in the pool", it->get<double>());
}

struct Finding {
  std::string cause;
  int priority;  // lower wins (analysis/causes.h)
  std::vector<std::string> evidence;
};
}  // namespace

Classification Classify(const ThermalSeries* thermal, const std::vector<RunEvent>& events, int64_t t0, int64_t t1) {
  Classification c;
  std::vector<Finding> found;
  std::vector<std::string> ruled;
  std::vector<const ThermalRow*> before, span;
  int64_t slack = thermal && thermal->interval_ms > 0 ? thermal->interval_ms : 30000;
  if (thermal) {
    for (const ThermalRow& r : thermal->rows) {
      if (r.t_ms < t0) before.push_back(&r);
      else if (r.t_ms <= t1 + slack) span.push_back(&r);
    }
  }
  // Compare with the stretch just before, not the whole history: the last 20 rows before t0.
  if (before.size() > 20) before.erase(before.begin(), before.end() - 20);

  if (span.empty()) {
    ruled.push_back(
        thermal ? "thermal, power_cap, pd_degraded, memory_pressure: not checked — no thermal samples over this span"
                : "thermal, power_cap, pd_degraded, memory_pressure: not checked — no thermal CSV");
  } else {
    size_t n = span.size();
    Bits in_span = CountBits(span), bb = CountBits(before);
    size_t thermal_bits = in_span.thermal, power_bits = in_span.power, hw_slow = in_span.hw_slow;
    size_t with_reasons = in_span.with_reasons, pd_events = in_span.pd_events;
    Stats tb = Of(before, &ThermalRow::temp_c), ts = Of(span, &ThermalRow::temp_c);
    Stats cb = Of(before, &ThermalRow::sm_clock_mhz), cs = Of(span, &ThermalRow::sm_clock_mhz);
    Stats pb = Of(before, &ThermalRow::power_w), ps = Of(span, &ThermalRow::power_w);
    Stats lim = Of(span, &ThermalRow::power_limit_w);
    Stats us = Of(span, &ThermalRow::util_pct);
    bool clocks_fell = cb.n && cs.n && cs.median < kClockDropFactor * cb.median;
    bool thermal_new = NewInSpan(thermal_bits, n, bb.thermal, bb.with_reasons, clocks_fell);
    bool power_new = NewInSpan(power_bits, n, bb.power, bb.with_reasons, clocks_fell);
    bool hw_slow_new = NewInSpan(hw_slow, n, bb.hw_slow, bb.with_reasons, clocks_fell);
    std::string temp_txt =
        ts.n ? (tb.n ? fmt::format("temperature {:.0f} → {:.0f} °C (max {:.0f})", tb.median, ts.last, ts.max)
                     : fmt::format("temperature up to {:.0f} °C", ts.max))
             : "temperature not reported";
    std::string clock_txt = cs.n ? (cb.n ? fmt::format("SM clock {:.0f} → {:.0f} MHz", cb.median, cs.median)
                                         : fmt::format("SM clock {:.0f} MHz", cs.median))
                                 : "SM clock not reported";
    std::string power_txt = ps.n ? (pb.n ? fmt::format("power {:.1f} → {:.1f} W", pb.median, ps.median)
                                         : fmt::format("power {:.1f} W", ps.median))
                                 : "power not reported";
    auto already = [&](const char* what, size_t bits, size_t bits_before) {
      return fmt::format(
          "the {} reason was already on in {} of {} samples before the slowdown ({} of {} during it) "
          "and the clocks did not fall ({})",
          what, bits_before, bb.with_reasons, bits, n, clock_txt);
    };
    // thermal
    bool temp_sig = ts.n && clocks_fell &&
                    (ts.max >= kTripPointC || (tb.n && ts.max - tb.median >= 5 && pb.n && ps.n &&
                                               std::fabs(ps.median - pb.median) <= 0.1 * pb.median));
    if (thermal_new || (hw_slow_new && ts.n && ts.max >= kTripPointC)) {
      found.push_back(
          {"thermal",
           CausePriority("thermal"),
           {fmt::format("thermal slowdown reason (sw_thermal/hw_thermal) active in {} of {} samples", thermal_bits, n),
            temp_txt, clock_txt, power_txt}});
    } else if (temp_sig) {
      found.push_back({"thermal",
                       CausePriority("thermal", /*weak=*/true),
                       {"no thermal reason bit, but the G4 signature: temperature climbing while clocks fall", temp_txt,
                        clock_txt, power_txt}});
    } else if (thermal_bits) {
      ruled.push_back(fmt::format("thermal: {}; {}", already("thermal", thermal_bits, bb.thermal), temp_txt));
    } else {
      ruled.push_back(fmt::format("thermal: {} ({}; {}; trip point {:.0f} °C)",
                                  with_reasons ? "no thermal reason bit" : "no clock-event reasons recorded", temp_txt,
                                  clock_txt, kTripPointC));
    }
    // power cap
    bool at_limit = lim.n && ps.n && ps.median >= 0.95 * lim.median && clocks_fell;
    if (power_new || (hw_slow_new && !thermal_new)) {
      found.push_back({"power_cap",
                       CausePriority("power_cap"),
                       {fmt::format("power-cap reason (sw_power_cap/hw_power_brake{}) active in {} of {} samples",
                                    power_new ? "" : "/hw_slowdown", power_new ? power_bits : hw_slow, n),
                        power_txt, clock_txt}});
    } else if (at_limit) {
      found.push_back(
          {"power_cap",
           CausePriority("power_cap", /*weak=*/true),
           {fmt::format("power {:.1f} W at its limit {:.1f} W while clocks fall", ps.median, lim.median), clock_txt}});
    } else if (power_bits) {
      ruled.push_back(fmt::format("power_cap: {}; {}", already("power-cap", power_bits, bb.power), power_txt));
    } else {
      ruled.push_back(
          fmt::format("power_cap: no power-cap reason bit; {}; limit {}", power_txt,
                      lim.n ? fmt::format("{:.0f} W", lim.median) : std::string("not reported (GB10 reports none)")));
    }
    // PD-degraded: clocks far down, GPU busy, no reason bit.
    bool busy = !us.n || us.median >= kPdBusyUtilPct;
    bool far_down = cs.n && (cs.median < kPdClockMhz || (cb.n && cs.median < 0.5 * cb.median));
    if (pd_events || (far_down && busy && !thermal_new && !power_new)) {
      std::vector<std::string> ev{clock_txt,
                                  us.n ? fmt::format("utilization {:.0f} %", us.median) : "utilization not reported",
                                  "no clock-event reason bit", power_txt};
      if (pd_events)
        ev.insert(ev.begin(), fmt::format("sampler flagged pd_degraded in {} of {} samples", pd_events, n));
      found.push_back({"pd_degraded", CausePriority("pd_degraded"), ev});
    } else {
      ruled.push_back(fmt::format("pd_degraded: {}",
                                  cs.n ? fmt::format("{} (not below {:.0f} MHz nor halved)", clock_txt, kPdClockMhz)
                                       : std::string("SM clock not reported")));
    }
    // memory pressure
    Stats mb = Of(before, &ThermalRow::mem_available_gib), ms = Of(span, &ThermalRow::mem_available_gib);
    Stats sb = Of(before, &ThermalRow::swap_used_gib), ss = Of(span, &ThermalRow::swap_used_gib);
    Stats qb = Of(before, &ThermalRow::psi_some_avg10), qs = Of(span, &ThermalRow::psi_some_avg10);
    std::vector<std::string> mem_ev;
    if (mb.n && ms.n && mb.median - ms.min >= kMemDropGib && ms.min <= 0.75 * mb.median)
      mem_ev.push_back(fmt::format("MemAvailable {:.1f} → {:.1f} GiB", mb.median, ms.min));
    if (sb.n && ss.n && ss.max - sb.median >= kSwapRiseGib)
      mem_ev.push_back(fmt::format("swap used {:.1f} → {:.1f} GiB", sb.median, ss.max));
    if (qs.n && qs.max >= kPsiSomeHigh && (!qb.n || qb.median < kPsiSomeHigh / 2))
      mem_ev.push_back(fmt::format("memory pressure stall (some avg10) up to {:.1f} %", qs.max));
    if (!mem_ev.empty()) found.push_back({"memory_pressure", CausePriority("memory_pressure"), mem_ev});
    else
      ruled.push_back(ms.n ? fmt::format("memory_pressure: MemAvailable {:.1f}–{:.1f} GiB over the span{}", ms.min,
                                         ms.max, ss.n ? fmt::format(", swap {:.1f} GiB", ss.max) : std::string())
                           : std::string("memory_pressure: MemAvailable not recorded"));
    // issue 18: PROCHOT, firmware limiters, DC input (analysis/power_causes.h)
    std::vector<PowerFinding> power_found;
    ClassifyPower(before, span, clocks_fell, &power_found, &ruled);
    for (PowerFinding& f : power_found) found.push_back({f.cause, f.priority, std::move(f.evidence)});
  }
  // contention: a new near-capacity or uncapped process shortly before or during the span.
  std::vector<std::string> cont;
  int64_t lookback = std::max<int64_t>(2 * slack, 60000);
  for (const RunEvent& e : events) {
    if (e.t_ms < t0 - lookback || e.t_ms > t1) continue;
    if (e.type == "process_start") {
      std::string verdict = e.Str("verdict");
      if (verdict != "uncapped" && verdict != "near-capacity") continue;
      std::string what = e.Str("name").empty() ? e.Str("kind") : e.Str("name");
      std::string cap = e.Str("cap");
      cont.push_back(fmt::format("{} {} process started (pid {}{}{})", verdict, what, e.Str("pid"),
                                 cap.empty() ? "" : ", cap " + cap, PoolText(e)));
    } else if (e.type == "contention") {
      cont.push_back("run recorded contention: " +
                     (e.Str("detail").empty() ? JsonText(e.record, -1) : e.Str("detail")));
    }
  }
  if (!cont.empty()) found.push_back({"contention", CausePriority("contention"), cont});
  else
    ruled.push_back(events.empty() ? "contention: no process events recorded (events.jsonl absent)"
                                   : "contention: no new uncapped or near-capacity process around this span");

  // issue 33: the driver could not allocate (analysis/driver_memory.h)
  if (auto ev = DriverMemoryEvidence(events, t0, t1, lookback); !ev.empty())
    found.push_back({"driver_memory_error", CausePriority("driver_memory_error"), ev});
  else
    ruled.push_back(events.empty() ? "driver_memory_error: no kernel-log records (events.jsonl absent)"
                                   : "driver_memory_error: no NVRM NV_ERR_NO_MEMORY record around this span");

  // host CPU / I/O contention (issue #24, analysis/contention.cc)
  for (auto& f : FindHostContention(before, span, events, t0, t1, &ruled))
    found.push_back({f.cause, CausePriority(f.cause, f.weak), f.evidence});

  std::stable_sort(found.begin(), found.end(),
                   [](const Finding& a, const Finding& b) { return a.priority < b.priority; });
  if (!found.empty()) {
    c.cause = std::string(CauseFor(found[0].cause).name);  // a finder's cause is a row of the table
    c.evidence = found[0].evidence;
    for (size_t i = 1; i < found.size(); ++i) c.also.push_back(found[i].cause + ": " + found[i].evidence.front());
  }
  c.ruled_out = ruled;
  return c;
}

}  // namespace sparkops
