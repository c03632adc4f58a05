#include "report/html.h"
#include "report/label_rows.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "analysis/causes.h"
#include "analysis/guard_summary.h"
#include "base/strings.h"
#include "base/timefmt.h"
#include "report/analysis.h"
#include "report/energy.h"
#include "telemetry/columns.h"

namespace sparkops {

namespace {
struct Pt {
  double x, y;
};

std::string Esc(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// At most `max` points: per x-bucket keep the min and the max (a spike stays visible).
std::vector<Pt> Thin(const std::vector<Pt>& in, size_t max) {
  if (in.size() <= max) return in;
  std::vector<Pt> out;
  size_t buckets = max / 2;
  double x0 = in.front().x, x1 = in.back().x;
  double w = (x1 - x0) / static_cast<double>(buckets);
  if (w <= 0) return {in.front(), in.back()};
  size_t i = 0;
  for (size_t b = 0; b < buckets && i < in.size(); ++b) {
    double end = x0 + w * static_cast<double>(b + 1);
    const Pt* lo = nullptr;
    const Pt* hi = nullptr;
    for (; i < in.size() && (in[i].x <= end || b + 1 == buckets); ++i) {
      if (!lo || in[i].y < lo->y) lo = &in[i];
      if (!hi || in[i].y > hi->y) hi = &in[i];
    }
    if (!lo) continue;
    if (lo->x <= hi->x) {
      out.push_back(*lo);
      if (hi != lo) out.push_back(*hi);
    } else {
      out.push_back(*hi);
      out.push_back(*lo);
    }
  }
  return out;
}

struct Axis {
  double x0 = 0, x1 = 1;
  bool time = true;
  double left = 70, width = 860;
  double X(double x) const { return left + (x - x0) / (x1 - x0) * width; }
};

struct Panel {
  std::string title, unit, color;
  std::vector<Pt> pts;
  std::string note;  // shown instead of a line when there is nothing to draw
};

std::string Num(double v) {
  if (std::fabs(v) >= 100) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2g}", v);
}

std::string DrawPanel(const Panel& p, const Axis& ax, double top, double h) {
  std::string s;
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"pt\">{}</text>", ax.left, top - 6, Esc(p.title));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", ax.left, top, ax.width, h);
  if (p.pts.empty()) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"na\">{}</text>", ax.left + ax.width / 2, top + h / 2 + 4,
                     Esc(p.note.empty() ? "not reported" : p.note));
    return s;
  }
  double lo = p.pts[0].y, hi = p.pts[0].y;
  for (auto& q : p.pts) {
    lo = std::min(lo, q.y);
    hi = std::max(hi, q.y);
  }
  // A flat line stays flat: the range is at least 5% of the value (or 1 unit).
  double min_span = std::max(1.0, std::fabs(hi) * 0.05);
  if (hi - lo < min_span) {
    double mid = (hi + lo) / 2;
    hi = mid + min_span / 2;
    lo = mid - min_span / 2;
  }
  double pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  if (lo < 0 && p.pts[0].y >= 0) lo = std::max(lo, 0.0);
  auto Y = [&](double y) { return top + h - (y - lo) / (hi - lo) * h; };
  for (int g = 0; g <= 2; ++g) {
    double v = lo + (hi - lo) * (0.1 + 0.4 * g);
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/>", ax.left,
                     ax.left + ax.width, Y(v), Y(v));
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"yl\">{} {}</text>", ax.left - 6, Y(v) + 4, Num(v),
                     Esc(p.unit));
  }
  std::string d;
  for (size_t i = 0; i < p.pts.size(); ++i)
    d += fmt::format("{}{:.1f},{:.1f}", i ? " L" : "M", ax.X(p.pts[i].x), Y(p.pts[i].y));
  s += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" stroke-linejoin=\"round\"/>", d,
                   p.color);
  return s;
}

std::string TimeLabel(double x, bool time, double span) {
  if (!time) return fmt::format("{:.0f}", x);
  return FormatUtcMillis(FromUnixMillis(static_cast<int64_t>(x))).substr(11, span < 3600e3 ? 8 : 5);
}

const char* kCss =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2430}
main{max-width:980px;margin:24px auto;padding:0 16px}
h1{font-size:20px;margin:0 0 4px}.sub{color:#5b6575;font-size:13px;margin-bottom:16px}
.verdict{padding:14px 18px;border-radius:10px;font-size:17px;font-weight:600;margin-bottom:16px}
.ok{background:#e4f5ea;color:#17603a;border:1px solid #b6e0c5}.bad{background:#fdeceb;color:#8a1f17;border:1px solid #f3c1bc}
.warn{background:#fff5e0;color:#7a5200;border:1px solid #f0d9a4}
.card{background:#fff;border:1px solid #e1e5ec;border-radius:10px;padding:12px 16px;margin-bottom:16px}
.ev h3{margin:0 0 6px;font-size:15px}.ev ul{margin:4px 0 8px 18px;padding:0;font-size:13px}.ev li{margin:2px 0}
.tag{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;font-size:12px;margin-right:6px}
.legend{margin-top:8px;display:flex;flex-wrap:wrap;gap:4px 16px}
.muted{color:#6b7483;font-size:12px}svg{width:100%;height:auto;display:block}
.pt{font-size:12px;font-weight:600;fill:#2b3442}.yl{font-size:10px;fill:#6b7483;text-anchor:end}
.xl{font-size:10px;fill:#6b7483;text-anchor:middle}.na{font-size:12px;fill:#9aa2ae;text-anchor:middle}
.frame{fill:#fff;stroke:#dde2ea}.grid{stroke:#eef1f5}.band{opacity:.16}.bl{font-size:11px;font-weight:600}
table{border-collapse:collapse;font-size:12px}td{padding:2px 10px 2px 0}
.mem ol{margin:6px 0 6px 18px;padding:0;font-size:13px}.mem li{margin:3px 0;color:#5b6575}.mem li.next{color:#1d2430})";

/// The report panel's title of a sample column (telemetry/columns.h); a test checks each exists.
std::string PanelTitle(std::string_view column) {
  const SampleColumn* c = FindSampleColumn(column);
  return c ? std::string(c->panel) : std::string(column);
}

/// The cause's colour, from the table of causes (analysis/causes.h).
std::string_view CauseColor(const std::string& c) { return CauseFor(c).colour; }

/// The legend under the timeline: each cause a band is drawn for, once, in the cause table's order,
/// with its colour and one-line help; "" when no band is drawn.
std::string CauseLegend(const std::vector<SlowdownEvent>& slowdowns) {
  std::string out;
  for (const CauseInfo& c : Causes()) {
    bool drawn = false;
    for (const auto& e : slowdowns) drawn = drawn || CauseFor(e.cls.cause).name == c.name;
    if (!drawn) continue;
    out += fmt::format("<div><span class=\"tag\" style=\"background:{}\">{}</span>{}</div>", c.colour, Esc(c.name),
                       Esc(c.help));
  }
  return out.empty() ? out : "<div class=\"legend muted\">" + out + "</div>";
}
}  // namespace

std::string RenderHtmlReport(const AnalysisResult& r, const RunMemory* memory) {
  const auto& pts = r.series.points;
  bool time = r.series.has_times();
  Axis ax;
  ax.time = time;
  std::vector<Pt> cost;
  for (auto& p : pts) {
    if (!std::isfinite(p.cost)) continue;
    if (time && p.t_ms == kNoTime) continue;
    cost.push_back({time ? static_cast<double>(p.t_ms) : static_cast<double>(p.step), p.cost});
  }
  std::vector<Panel> panels;
  panels.push_back({r.series.cost_is_inverse_throughput ? "Step cost (1 / throughput)" : "Step time",
                    r.series.cost_is_inverse_throughput ? "s/item" : "s", "#2b6cb0", Thin(cost, 1600),
                    "no step times in the log"});
  // Panel titles are the sample-column registry's (telemetry/columns.h), by column name.
  struct F {
    std::string title;
    const char* unit;
    const char* color;
    std::optional<double> ThermalRow::*f;
  };
  const F fields[] = {{PanelTitle("gpu_temp_c"), "°C", "#d9480f", &ThermalRow::temp_c},
                      {PanelTitle("power_w"), "W", "#b8860b", &ThermalRow::power_w},
                      {PanelTitle("sm_clock_mhz"), "MHz", "#2f9e44", &ThermalRow::sm_clock_mhz},
                      {PanelTitle("mem_available_gib"), "GiB", "#1971c2", &ThermalRow::mem_available_gib}};
  for (const F& f : fields) {
    Panel p{f.title, f.unit, f.color, {}, ""};
    if (!r.thermal) p.note = "no thermal CSV";
    else if (!time) p.note = "the log has no timestamps to line this up with";
    else {
      std::vector<Pt> v;
      for (auto& row : r.thermal->rows)
        if (row.*f.f) v.push_back({static_cast<double>(row.t_ms), *(row.*f.f)});
      p.pts = Thin(v, 1600);
      p.note = "not reported by this machine";
    }
    panels.push_back(std::move(p));
  }
  if (r.thermal && time) {  // issue 18: spbm rails and the CPU temperature, drawn only when recorded
    struct PF {
      std::string title;
      const char* unit;
      const char* color;
      std::optional<double> PowerColumns::*f;
    };
    const PF power_fields[] = {{PanelTitle("dc_input_w"), "W", "#862e9c", &PowerColumns::dc_input_w},
                               {PanelTitle("soc_pkg_power_w"), "W", "#e67700", &PowerColumns::soc_pkg_power_w},
                               {PanelTitle("cpu_temp_c"), "°C", "#c92a2a", &PowerColumns::cpu_temp_c}};
    for (const PF& f : power_fields) {
      std::vector<Pt> v;
      for (auto& row : r.thermal->rows)
        if (row.power.*f.f) v.push_back({static_cast<double>(row.t_ms), *(row.power.*f.f)});
      if (!v.empty()) panels.push_back({f.title, f.unit, f.color, Thin(v, 1600), ""});
    }
  }
  // host contention (issue #24): drawn only when the samples carry it
  const F host_fields[] = {{PanelTitle("cpu_pressure_pct"), "%", "#862e9c", &ThermalRow::cpu_pressure},
                           {PanelTitle("io_pressure_some_pct"), "%", "#5f3dc4", &ThermalRow::io_pressure_some},
                           {PanelTitle("job_cores"), "cores", "#0b7285", &ThermalRow::job_cores},
                           {PanelTitle("other_cores"), "cores", "#868e96", &ThermalRow::other_cores},
                           {PanelTitle("others_on_job_cpus"), "cores", "#e8590c", &ThermalRow::others_on_job_cpus}};
  for (const F& f : host_fields) {
    std::vector<Pt> v;
    if (r.thermal && time)
      for (auto& row : r.thermal->rows)
        if (row.*f.f) v.push_back({static_cast<double>(row.t_ms), *(row.*f.f)});
    if (!v.empty()) panels.push_back(Panel{f.title, f.unit, f.color, Thin(v, 1600), ""});
  }
  // x range over everything drawn
  bool any = false;
  for (auto& p : panels)
    for (auto& q : p.pts) {
      if (!any) ax.x0 = ax.x1 = q.x;
      ax.x0 = std::min(ax.x0, q.x);
      ax.x1 = std::max(ax.x1, q.x);
      any = true;
    }
  if (!any || ax.x1 <= ax.x0) ax.x1 = ax.x0 + 1;
  const double ph = 110, gap = 34, top0 = 24;
  double height = top0 + panels.size() * (ph + gap) + 10;
  double bottom = top0 + panels.size() * (ph + gap) - gap;
  std::string svg = fmt::format(
      "<svg viewBox=\"0 0 960 {:.0f}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"run timeline\">",
      height);
  for (size_t i = 0; i < panels.size(); ++i) svg += DrawPanel(panels[i], ax, top0 + i * (ph + gap), ph);
  // processes that appeared (contention evidence) and OOM records, across all panels
  if (time) {
    for (const RunEvent& e : r.events) {
      std::string guard = GuardMarkerLabel(e);  // memory guard / run's sentinel
      if (e.type != "process_start" && e.type != "oom" && guard.empty()) continue;
      double x = static_cast<double>(e.t_ms);
      if (x < ax.x0 || x > ax.x1) continue;
      std::string label = !guard.empty() ? guard
                          : e.type == "oom"
                              ? "OOM"
                              : (e.Str("name").empty() ? e.Str("kind") : e.Str("name")) + " " + e.Str("verdict");
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2:.0f}\" stroke=\"#c2255c\" stroke-width=\"1.2\"/>",
          ax.X(x), top0, bottom);
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" fill=\"#c2255c\" class=\"bl\" text-anchor=\"end\">{}</text>",
                         ax.X(x) - 3, top0 + ph - 6, Esc(label));
    }
  }
  // run --restart-on: where each attempt after the first started, across all panels (issue 34)
  if (time)
    for (const RunAttempt& a : r.attempts) {
      const double x = static_cast<double>(a.start_ms);
      if (a.number < 2 || a.start_ms == kNoTime || x < ax.x0 || x > ax.x1) continue;
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2:.0f}\" stroke=\"#1c7ed6\" stroke-width=\"1.2\" "
          "stroke-dasharray=\"6,3\" class=\"attempt\"/>",
          ax.X(x), top0, bottom);
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#1c7ed6\" class=\"bl\">attempt {}</text>", ax.X(x) + 3,
                         top0 + 10, a.number);
    }
  // evaluation / checkpoint markers on the step panel
  for (auto& m : r.series.markers) {
    double x = time ? static_cast<double>(m.t_ms) : static_cast<double>(m.step);
    if (time && m.t_ms == kNoTime) continue;
    if (x < ax.x0 || x > ax.x1) continue;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-dasharray=\"2,3\"/>", ax.X(x),
        top0, top0 + ph, m.kind == kAfterEval ? "#868e96" : "#adb5bd");
  }
  // slowdown bands across all panels, over the lines (translucent); labels in rows that keep
  // near episodes' labels apart
  std::vector<LabelSpan> spans;
  for (size_t i = 0; i < r.slowdowns.size(); ++i) {
    const auto& e = r.slowdowns[i];
    double a = time ? static_cast<double>(e.t0) : static_cast<double>(e.start_step);
    spans.push_back({std::clamp(ax.X(a), ax.left, ax.left + ax.width) + 4,
                     LabelWidth(fmt::format("#{} {} {:.2f}x", i + 1, e.cls.cause, e.s.ratio).size())});
  }
  const std::vector<int> label_row = LabelRows(spans, 4);
  for (size_t i = 0; i < r.slowdowns.size(); ++i) {
    const auto& e = r.slowdowns[i];
    double a = time ? static_cast<double>(e.t0) : static_cast<double>(e.start_step);
    double b = time ? static_cast<double>(e.t1) : static_cast<double>(e.end_step);
    if (time && (e.t0 == kNoTime || e.t1 == kNoTime)) continue;
    double xa = std::clamp(ax.X(a), ax.left, ax.left + ax.width), xb = std::clamp(ax.X(b), ax.left, ax.left + ax.width);
    const std::string_view c = CauseColor(e.cls.cause);
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" class=\"band\"/>",
                       xa, top0 - 4, std::max(2.0, xb - xa), bottom - top0 + 4, c);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"{}\" class=\"bl\">#{} {} {:.2f}×</text>", xa + 4,
                       top0 + 14 + 13 * label_row[i], c, i + 1, Esc(e.cls.cause), e.s.ratio);
  }
  for (int t = 0; t <= 6; ++t) {
    double x = ax.x0 + (ax.x1 - ax.x0) * t / 6.0;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" class=\"xl\">{}</text>", ax.X(x), bottom + 16,
                       TimeLabel(x, time, ax.x1 - ax.x0));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{:.0f}\" class=\"xl\">{}</text>", ax.left + ax.width / 2, bottom + 30,
                     time ? "time (UTC)" : "step");
  svg += "</svg>";

  std::string cls = r.detection.Largest() >= r.detection.slowdowns.size()  // none, or blips only (issue 30)
                        ? (r.end.status == "reboot" || r.end.status == "supervisor_lost" ? "warn" : "ok")
                        : "bad";
  std::string h =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<title>sparkops analyze</title><style>";
  h += kCss;
  h += "</style></head><body><main>";
  h += "<h1>sparkops analyze</h1>";
  h += fmt::format("<div class=\"sub\">{} · {} steps · {} · times: {}</div>",
                   Esc(r.in.dir.empty() ? r.in.log : r.in.dir), pts.size(),
                   Esc(r.series.formats.empty() ? "no step format recognised" : r.series.formats),
                   Esc(r.series.time_source));
  h += fmt::format("<div class=\"verdict {}\">{}</div>", cls, Esc(r.Verdict()));
  if (std::string e = EnergySentence(r); !e.empty()) h += "<div class=\"sub\">" + Esc(e) + "</div>";
  if (memory) {
    h += "<div class=\"card mem\"><b>Memory.</b> " + Esc(memory->headline) + ".<ol>";
    for (const auto& st : memory->ladder.steps)
      h += fmt::format("<li{}><b>{}</b>{} — {}</li>", st.number == memory->ladder.next ? " class=\"next\"" : "",
                       Esc(st.title), st.number == memory->ladder.next ? " (next)" : "", Esc(st.detail));
    h += "</ol><div class=\"muted\">Why this step: " + Esc(memory->ladder.why_next) + ".";
    if (!memory->plan_note.empty()) h += " " + Esc(memory->plan_note) + ".";
    h += memory->ladder.kind == memory::LadderKind::kOom
             ? " The OOM ladder: flush, then packing/batch, then the method, then the model or a second "
               "Spark.</div></div>"
             : " After a driver-side sign the host may wedge: save and stop, reboot if the kernel log repeats it, "
               "then reduce the job's memory.</div></div>";
  }
  for (size_t i = 0; i < r.slowdowns.size(); ++i) {
    const auto& e = r.slowdowns[i];
    h += "<div class=\"card ev\">";
    h += fmt::format(
        "<h3><span class=\"tag\" style=\"background:{}\">{}</span>#{} steps {}–{} · {} – {} · {:.2f}× baseline{}</h3>",
        CauseColor(e.cls.cause), Esc(e.cls.cause), i + 1, e.start_step, e.end_step, ShortTime(e.t0), ShortTime(e.t1),
        e.s.ratio, e.s.recovered ? " · recovered" : " · not recovered");
    h += "<ul>";
    if (std::string en = SlowdownEnergySentence(e); !en.empty()) h += "<li>energy: " + Esc(en) + "</li>";  // issue 37
    for (auto& x : e.cls.evidence) h += "<li>" + Esc(x) + "</li>";
    for (auto& x : e.cls.also) h += "<li>also seen: " + Esc(x) + "</li>";
    h += "</ul><div class=\"muted\">Ruled out: ";
    for (size_t k = 0; k < e.cls.ruled_out.size(); ++k) h += (k ? " · " : "") + Esc(e.cls.ruled_out[k]);
    h += "</div></div>";
  }
  h += "<div class=\"card\">" + svg + CauseLegend(r.slowdowns) + "</div>";
  std::string end;
  if (!r.in.dir.empty() && !r.end.detail.empty()) {
    end = "<div class=\"card\"><b>How the run ended.</b> " + Esc(r.end.detail);
    if (!r.end.last_samples.empty()) {
      end +=
          "<table><tr><td><b>time (UTC)</b></td><td><b>temp</b></td><td><b>power</b></td><td><b>SM "
          "clock</b></td><td><b>throttle</b></td></tr>";
      for (auto& s : r.end.last_samples)
        end += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                           FormatUtcMillis(FromUnixMillis(s.t_ms)), FixedOrNotReported(s.temp_c, 0, " °C"),
                           FixedOrNotReported(s.power_w, 1, " W"), FixedOrNotReported(s.sm_clock_mhz, 0, " MHz"),
                           Esc(s.throttle));
      end += "</table>";
    }
    if (!r.end.kernel_lines.empty()) {  // issue 33: what the frozen boot left
      end += "<p><b>Last kernel lines before it.</b></p><pre>";
      for (auto& l : r.end.kernel_lines) end += Esc(l) + "\n";
      end += "</pre>";
    }
    end += "</div>";
  }
  h += end;
  const Detection& d = r.detection;
  h += "<div class=\"muted\">";
  if (d.ran)
    h += fmt::format(
        "Baseline {:.3g} ({}), median after {} warm-up points. Slowdown = step time ≥ 1.3× baseline for ≥ 5 points; "
        "one-off spikes ignored: {} at evaluation, {} at checkpoint saves, {} unnamed. ",
        d.baseline, Esc(r.series.cost_unit), d.warmup, d.spikes_eval, d.spikes_save, d.spikes_other);
  h += "Dashed lines: evaluation/checkpoint. Generated by sparkops; no network, no scripts.</div>";
  h += "</main></body></html>\n";
  return h;
}

}  // namespace sparkops
