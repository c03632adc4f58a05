#include "analysis/live_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/energy.h"
#include "analysis/slowdown.h"
#include "analysis/thermal.h"
#include "base/json_parse.h"

namespace sparkops {

namespace {

/// The median of the finite costs among the last `n` points; NaN when none.
double RecentCost(const std::vector<StepPoint>& pts, size_t n) {
  std::vector<float> c;
  for (size_t i = pts.size(); i-- > 0 && c.size() < n;)
    if (std::isfinite(pts[i].cost)) c.push_back(pts[i].cost);
  if (c.empty()) return NAN;
  std::sort(c.begin(), c.end());
  const size_t m = c.size() / 2;
  return c.size() % 2 ? c[m] : (static_cast<double>(c[m - 1]) + c[m]) / 2;
}

/// baseline_s of the last `slowdown` record in events.jsonl text; lines that do not parse are skipped.
std::optional<double> EventBaseline(std::string_view events) {
  std::optional<double> out;
  for (size_t start = 0; start < events.size();) {
    size_t nl = events.find('\n', start);
    if (nl == std::string_view::npos) nl = events.size();
    const std::string_view line = events.substr(start, nl - start);
    start = nl + 1;
    if (line.find("\"slowdown\"") == std::string_view::npos) continue;
    auto j = ParseJsonOrDiscarded(line);
    if (!j.is_object() || j.value("type", "") != "slowdown" || !j.contains("baseline_s") ||
        !j["baseline_s"].is_number())
      continue;
    const double b = j["baseline_s"].get<double>();
    if (std::isfinite(b) && b > 0) out = b;
  }
  return out;
}

}  // namespace

StepSeries ReadLiveRunSteps(std::string_view train_tail, std::string_view events_tail, const LocalZone& zone,
                            RunProgress* run) {
  StepSeries series = ParseStepLog(train_tail, zone);
  const auto& pts = series.points;
  run->total_steps = series.total_steps;
  if (pts.empty()) {
    run->verdict = "no steps yet";
    return series;
  }
  run->step = pts.back().step;
  DetectOptions opt;
  opt.cost_is_seconds = !series.cost_is_inverse_throughput;
  const Detection d = DetectSlowdowns(pts, opt);
  const double now = RecentCost(pts, kLiveRunRecentPoints);
  if (std::isfinite(now) && opt.cost_is_seconds) run->s_per_step = now;
  std::optional<double> base;
  if (auto b = opt.cost_is_seconds ? EventBaseline(events_tail) : std::nullopt) {
    base = *b, run->baseline_from = "slowdown event";
  } else if (d.ran && d.baseline > 0) {
    base = d.baseline, run->baseline_from = "log tail";
  }
  if (base && opt.cost_is_seconds) run->baseline_s = *base;
  if (base && std::isfinite(now)) run->ratio = now / *base;
  if (!base || !run->ratio) {
    run->verdict = "too few steps";
    return series;
  }
  // An episode still open at the end (not recovered, reaching the last points) is a slowdown now.
  if (!d.slowdowns.empty()) {
    const Slowdown& s = d.slowdowns.back();
    if (!s.recovered && s.last + opt.window >= pts.size() && s.first < pts.size()) {
      run->verdict = fmt::format("slowdown x{:.2f} since step {}", *run->ratio, pts[s.first].step);
      return series;
    }
  }
  const double threshold = d.ran && d.threshold_ratio > 0 ? d.threshold_ratio : opt.ratio;
  run->verdict = *run->ratio >= threshold ? fmt::format("slower x{:.2f} (forming)", *run->ratio) : "steady";
  return series;
}

void ReadLiveRunEnergy(std::string_view header, std::string_view rows, const StepSeries& steps, const LocalZone& zone,
                       RunProgress* run) {
  std::string text;
  if (!header.empty()) {
    text.reserve(header.size() + 1 + rows.size());
    text.append(header).append("\n");
  }
  text.append(rows);
  auto thermal = ParseThermalCsv(text, "thermal.csv", zone);
  if (!thermal) {
    run->energy_note = thermal.error().message;
    return;
  }
  auto all = EnergyOfRun(*thermal, StepSeries{});
  const EnergyFigure* total = all ? all->Total() : nullptr;
  if (!total) {
    run->energy_note = header.empty() ? "no power readings in thermal.csv" : "no power readings in thermal.csv's tail";
    return;
  }
  run->energy_wh = total->wh;
  run->energy_source = total->source;
  run->energy_span_s = all->seconds;
  run->energy_from_start = header.empty();
  if (auto per = EnergyOfRun(*thermal, steps)) {
    run->wh_per_step = per->WhPerStep();
    run->wh_per_1k_tokens = per->WhPer1kTokens();
  }
}

std::string LiveRunCommand(std::string_view meta_json, size_t max_chars) {
  auto j = ParseJsonOrDiscarded(meta_json);
  if (!j.is_object() || !j.contains("argv") || !j["argv"].is_array()) return "";
  std::string out;
  for (const auto& a : j["argv"]) {
    if (!a.is_string()) continue;
    if (!out.empty()) out += ' ';
    out += a.get<std::string>();
    if (out.size() > max_chars) break;
  }
  if (out.size() > max_chars) out = out.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
  return out;
}

}  // namespace sparkops
