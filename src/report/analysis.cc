#include "report/analysis.h"

#include <fmt/format.h>

#include "analysis/causes.h"
#include "base/strings.h"
#include "base/timefmt.h"
#include "report/energy.h"

namespace sparkops {

namespace {
std::string Iso(int64_t t) { return t == kNoTime ? std::string() : FormatUtcMillis(FromUnixMillis(t)); }
nlohmann::json IsoOrNull(int64_t t) { return t == kNoTime ? nlohmann::json() : nlohmann::json(Iso(t)); }

std::string CostText(const AnalysisResult& r, double v) {
  if (r.series.cost_is_inverse_throughput) return fmt::format("{:.3g} s/item", v);
  return fmt::format("{:.3g} s/step", v);
}

std::string SampleLine(const ThermalRow& s) {
  auto f = [](const std::optional<double>& v, const char* unit, int prec) { return FixedOrNotReported(v, prec, unit); };
  return fmt::format("{}  temp {}  power {}  SM {}  MemAvailable {}{}", Iso(s.t_ms), f(s.temp_c, " °C", 0),
                     f(s.power_w, " W", 1), f(s.sm_clock_mhz, " MHz", 0), f(s.mem_available_gib, " GiB", 1),
                     s.throttle.empty() ? "" : "  throttle " + s.throttle);
}
}  // namespace

std::string ShortTime(int64_t t) {
  if (t == kNoTime) return "—";
  std::string s = Iso(t);
  return s.substr(11, 8) + "Z";
}

namespace {
/// "stopped by the guard (exit 0)", "crashed (signal Killed)", "finished (exit 0)" ...
std::string AttemptEndText(const RunAttempt& a) {
  const std::string how = !a.signal.empty() ? "signal " + a.signal
                          : a.code          ? fmt::format("exit {}", *a.code)
                                            : std::string("exit unknown");
  if (a.reason == "guard") return "stopped by the memory guard (" + how + ")";
  if (a.reason == "crash") return "crashed (" + how + ")";
  if (a.reason == "user") return "stopped by a signal to `run` (" + how + ")";
  if (a.reason == "success") return "finished (" + how + ")";
  return a.end_ms == kNoTime ? "no end recorded" : "ended (" + how + ")";
}

/// `run --restart-on`: one line per attempt, with the time each stop and restart cost.
std::string AttemptsText(const std::vector<RunAttempt>& attempts) {
  if (attempts.empty()) return "";
  double lost = 0;
  for (const RunAttempt& a : attempts) lost += a.lost_s.value_or(0);
  std::string o = fmt::format("attempts {} attempt{}", attempts.size(), attempts.size() == 1 ? "" : "s");
  if (attempts.size() > 1) o += fmt::format("; ~{:.0f} s lost to stops and restarts", lost);
  o += "\n";
  for (const RunAttempt& a : attempts) {
    o += fmt::format("         #{} {} – {}  {}", a.number, ShortTime(a.start_ms), ShortTime(a.end_ms),
                     AttemptEndText(a));
    if (a.backoff_s) o += fmt::format(", restarted after {:g} s", *a.backoff_s);
    if (a.lost_s) o += fmt::format("; ~{:.0f} s lost until the next attempt's first step", *a.lost_s);
    o += "\n";
  }
  return o;
}

nlohmann::json AttemptsJson(const std::vector<RunAttempt>& attempts) {
  using nlohmann::json;
  json out = json::array();
  for (const RunAttempt& a : attempts) {
    json exit;
    if (!a.signal.empty()) exit["signal"] = a.signal;
    else exit["code"] = a.code ? json(*a.code) : json();
    out.push_back({{"number", a.number},
                   {"pid", a.pid ? json(*a.pid) : json()},
                   {"start", IsoOrNull(a.start_ms)},
                   {"end", IsoOrNull(a.end_ms)},
                   {"exit", a.end_ms == kNoTime ? json() : exit},
                   {"reason", a.reason.empty() ? json() : json(a.reason)},
                   {"backoff_s", a.backoff_s ? json(*a.backoff_s) : json()},
                   {"lost_s", a.lost_s ? json(*a.lost_s) : json()}});
  }
  return out;
}
}  // namespace

std::string RenderAnalysisText(const AnalysisResult& r) {
  std::string o;
  const StepSeries& s = r.series;
  o += r.Verdict() + "\n\n";
  for (auto& w : r.warnings) o += "warning  " + w + "\n";
  o += fmt::format("log      {}: {} steps ({}), {} lines; times: {}\n", r.in.log, s.points.size(),
                   s.formats.empty() ? "no step format recognised" : s.formats, s.lines, s.time_source);
  if (r.thermal)
    o += fmt::format("thermal  {}: {} samples ({} format){}\n", r.in.thermal, r.thermal->rows.size(), r.thermal->format,
                     r.thermal->interval_ms ? fmt::format(", every {:g} s", r.thermal->interval_ms / 1000.0) : "");
  else o += "thermal  none (causes other than contention cannot be checked)\n";
  o += EnergyText(r);  // issue 37
  if (!r.in.events.empty())
    o += fmt::format("events   {}: {} record{}\n", r.in.events, r.events.size(), r.events.size() == 1 ? "" : "s");
  const Detection& d = r.detection;
  if (d.ran) {
    o +=
        fmt::format("baseline {} — median of steps {}–{} after {} warm-up points; cost = {}\n", CostText(r, d.baseline),
                    s.points[d.base_first].step, s.points[d.base_last].step, d.warmup, s.cost_unit);
    o += fmt::format("         spread {:.1f} % (robust, MAD); slowdown threshold {:.2f}×{}\n", 100 * d.spread,
                     d.threshold_ratio, d.threshold_ratio > 1.3 + 1e-9 ? " (raised above 1.3× by the spread)" : "");
  } else {
    o += "baseline none: " + d.note + "\n";
  }
  o += "\n";
  int n = 0;
  for (const SlowdownEvent& e : r.slowdowns) {
    o += fmt::format("#{} {:<15} steps {}–{} ({} – {}, {}), {:.2f}× baseline ({}){}\n", ++n, e.cls.cause, e.start_step,
                     e.end_step, ShortTime(e.t0), ShortTime(e.t1),
                     e.s.recovered ? "recovered" : "not recovered by the end", e.s.ratio, CostText(r, e.s.level),
                     e.s.blip ? " — a blip: short, little time lost" : "");
    if (!s.cost_is_inverse_throughput)
      o += fmt::format("   time lost:  ~{:.0f} s{}\n", e.s.lost,
                       e.s.parts > 1 ? fmt::format(" ({} stretches split by short gaps, merged)", e.s.parts) : "");
    if (std::string en = SlowdownEnergySentence(e); !en.empty()) o += "   energy:     " + en + "\n";  // issue 37
    for (auto& x : e.cls.evidence) o += "   evidence:   " + x + "\n";
    for (auto& x : e.cls.also) o += "   also seen:  " + x + "\n";
    for (auto& x : e.cls.ruled_out) o += "   ruled out:  " + x + "\n";
  }
  if (d.ran)
    o += fmt::format("{}one-off spikes ignored: {} after evaluation, {} after checkpoint saves, {} unnamed{}\n",
                     r.slowdowns.empty() ? "" : "\n", d.spikes_eval, d.spikes_save, d.spikes_other,
                     d.too_short ? fmt::format(" ({} stretch{} under {:.0f} s)", d.too_short,
                                               d.too_short == 1 ? "" : "es", DetectOptions{}.min_seconds)
                                 : "");
  if (!r.in.dir.empty()) {
    o += "\nend      " + r.end.detail + "\n";
    if (!r.end.last_samples.empty()) {
      o += "         last thermal samples before it:\n";
      for (auto& x : r.end.last_samples) o += "           " + SampleLine(x) + "\n";
    }
    if (!r.end.kernel_lines.empty()) {  // issue 33
      o += "         last kernel lines before it (NVRM, Xid, OOM kill, lockup):\n";
      for (auto& l : r.end.kernel_lines) o += "           " + l + "\n";
    }
    if (!r.end.cause.empty()) {  // issue 33
      o += "cause    " + r.end.cause + " — " + std::string(CauseFor(r.end.cause).help) + "\n";
      for (auto& l : r.end.cause_evidence) o += "           " + l + "\n";
    }
    o += AttemptsText(r.attempts);  // issue 34
  }
  return o;
}

nlohmann::json RenderAnalysisJson(const AnalysisResult& r) {
  using nlohmann::json;
  const StepSeries& s = r.series;
  json j;
  j["verdict"] = r.Verdict();
  j["warnings"] = r.warnings;
  j["log"] = {{"path", r.in.log},  {"formats", s.formats},         {"steps", s.points.size()},
              {"lines", s.lines},  {"time_source", s.time_source}, {"cost_unit", s.cost_unit},
              {"timezone", r.zone}};
  j["thermal"] = r.thermal
                     ? json{{"path", r.in.thermal}, {"format", r.thermal->format}, {"samples", r.thermal->rows.size()}}
                     : json();
  const Detection& d = r.detection;
  j["baseline"] = d.ran ? json{{"cost", d.baseline},
                               {"from_step", s.points[d.base_first].step},
                               {"to_step", s.points[d.base_last].step},
                               {"warmup_points", d.warmup},
                               {"spread", d.spread},
                               {"threshold_ratio", d.threshold_ratio}}
                        : json{{"note", d.note}};
  j["events"] = json::array();
  for (const SlowdownEvent& e : r.slowdowns) {
    j["events"].push_back({{"start", IsoOrNull(e.t0)},
                           {"end", IsoOrNull(e.t1)},
                           {"start_step", e.start_step},
                           {"end_step", e.end_step},
                           {"ratio", e.s.ratio},
                           {"cost", e.s.level},
                           {"recovered", e.s.recovered},
                           {"lost", e.s.lost},
                           {"parts", e.s.parts},
                           {"blip", e.s.blip},
                           {"cause", e.cls.cause},
                           {"evidence", e.cls.evidence},
                           {"also", e.cls.also},
                           {"ruled_out", e.cls.ruled_out}});
    if (e.energy) {  // issue 37: added fields
      j["events"].back()["energy_wh"] = e.energy->wh;
      j["events"].back()["extra_energy_wh"] = e.energy->ExtraWh();
      j["events"].back()["baseline_wh_per_step"] = e.energy->baseline_wh_per_step;
    }
  }
  j["spikes_ignored"] = {{"evaluation", d.spikes_eval}, {"checkpoint", d.spikes_save}, {"unnamed", d.spikes_other}};
  json end = {{"status", r.end.status}, {"detail", r.end.detail}};
  if (!r.end.last_samples.empty()) {
    end["last_samples"] = json::array();
    for (auto& x : r.end.last_samples) end["last_samples"].push_back(SampleLine(x));
  }
  if (const auto& s = r.end.sentinel) {  // issue 30: `run` killed; what its sentinel recorded
    auto t = [](std::optional<int64_t> ms) { return ms ? IsoOrNull(*ms) : json(); };
    end["sentinel"] = {{"terminate", t(s->lost_ms)},
                       {"kill", t(s->kill_ms)},
                       {"done", t(s->done_ms)},
                       {"grace_s", s->grace_s ? json(*s->grace_s) : json()}};
  }
  if (!r.end.kernel_lines.empty()) end["kernel_lines"] = r.end.kernel_lines;  // issue 33
  if (!r.end.cause.empty()) end["cause"] = r.end.cause, end["evidence"] = r.end.cause_evidence;
  j["end"] = r.in.dir.empty() ? json() : end;
  j["energy"] = EnergyJson(r);  // issue 37
  if (!r.attempts.empty()) j["attempts"] = AttemptsJson(r.attempts);  // issue 34: run --restart-on only
  return j;
}

}  // namespace sparkops
