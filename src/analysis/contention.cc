#include "analysis/contention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "analysis/step_line.h"

namespace sparkops {

namespace {
using Field = std::optional<double> ThermalRow::*;
/// The contention columns read back by name: the field (null for pressure_source) and whether the
/// value is a percentage (else a core count).
struct ContentionCol {
  std::string_view name;
  Field field;
  bool pct;
};
constexpr ContentionCol kCols[] = {{"cpu_pressure_pct", &ThermalRow::cpu_pressure, true},
                                   {"io_pressure_some_pct", &ThermalRow::io_pressure_some, true},
                                   {"io_pressure_full_pct", &ThermalRow::io_pressure_full, true},
                                   {"job_cores", &ThermalRow::job_cores, false},
                                   {"other_cores", &ThermalRow::other_cores, false},
                                   {"pressure_source", nullptr, false}};
const ContentionCol* FindCol(std::string_view name) {
  for (const auto& c : kCols)
    if (c.name == name) return &c;
  return nullptr;
}

std::optional<double> Median(const std::vector<const ThermalRow*>& rows, Field f) {
  std::vector<double> v;
  for (auto* r : rows)
    if (r->*f) v.push_back(*(r->*f));
  if (v.empty()) return std::nullopt;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// "pid 4121 `sha256sum /dev/zero` 1.0 cores, 8.0 MB/s I/O" for the top consumers the span's
/// host_contention events named: each pid once, with its highest core figure and its highest I/O
/// rate over the span (each from whichever record held it; no I/O part where no record had one), the
/// three highest by `kind` ("io": I/O rate where known, else cores).
std::string TopConsumers(const std::vector<RunEvent>& events, int64_t t0, int64_t t1, const char* kind) {
  struct Top {
    std::string cmd;
    double cores = 0;
    std::optional<double> io;
    double key = 0;
  };
  std::map<int64_t, Top> by_pid;
  for (const RunEvent& e : events) {
    if (e.type != "host_contention" || e.t_ms < t0 || e.t_ms > t1) continue;
    auto top = e.record.find("top");
    if (top == e.record.end() || !top->is_array()) continue;
    for (const auto& p : *top) {
      if (!p.is_object() || !p.contains("pid") || !p["pid"].is_number_integer()) continue;
      Top& t = by_pid[p["pid"].get<int64_t>()];
      if (p.contains("cores") && p["cores"].is_number()) t.cores = std::max(t.cores, p["cores"].get<double>());
      if (p.contains("io_bytes_per_s") && p["io_bytes_per_s"].is_number() && p["io_bytes_per_s"].get<double>() >= 0)
        t.io = std::max(t.io.value_or(0), p["io_bytes_per_s"].get<double>());
      std::string cmd = p.contains("cmdline") && p["cmdline"].is_string() ? p["cmdline"].get<std::string>() : "";
      if (cmd.empty() && p.contains("comm") && p["comm"].is_string()) cmd = p["comm"].get<std::string>();
      if (t.cmd.empty()) t.cmd = cmd;
    }
  }
  std::vector<std::pair<int64_t, Top>> v(by_pid.begin(), by_pid.end());
  for (auto& [pid, t] : v) t.key = std::string_view(kind) == "io" && t.io ? *t.io : t.cores;
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.key > b.second.key; });
  std::string out;
  for (size_t i = 0; i < v.size() && i < 3; ++i) {
    const auto& [pid, t] = v[i];
    out += fmt::format("{}pid {} `{}` {:.1f} cores{}", i ? ", " : "", pid, t.cmd, t.cores,
                       t.io ? fmt::format(", {:.1f} MB/s I/O", *t.io / 1e6) : "");
  }
  return out;
}
}  // namespace

bool IsContentionColumn(std::string_view lower_name) { return FindCol(lower_name) != nullptr; }

std::string SetContentionCell(ThermalRow& r, std::string_view lower_name, std::string_view v) {
  const ContentionCol* col = FindCol(lower_name);
  if (!col) return "unknown column";
  if (!col->field) {  // pressure_source
    if (v != "psi" && v != "runnable") return "'" + std::string(v) + "' (expected psi or runnable)";
    r.pressure_source = std::string(v);
    return "";
  }
  size_t used = 0;
  auto num = ParseNumberPrefix(v, &used);
  if (!num || used != v.size() || !std::isfinite(*num) || *num < 0 || (col->pct && *num > 100) || *num > 1e6)
    return "'" + std::string(v) + "' is not a " + (col->pct ? "percentage" : "core count");
  r.*(col->field) = *num;
  return "";
}

std::vector<ContentionFinding> FindHostContention(const std::vector<const ThermalRow*>& before,
                                                  const std::vector<const ThermalRow*>& span,
                                                  const std::vector<RunEvent>& events, int64_t t0, int64_t t1,
                                                  std::vector<std::string>* ruled) {
  std::vector<ContentionFinding> out;
  std::string source;
  for (auto* r : span)
    if (!r->pressure_source.empty()) source = r->pressure_source;
  const char* what = source == "runnable" ? " (estimated from runnable tasks: no PSI)" : "";
  // The job's share of the CPUs and the rest of the host's, before and over the span.
  auto jb = Median(before, &ThermalRow::job_cores), js = Median(span, &ThermalRow::job_cores);
  auto ob = Median(before, &ThermalRow::other_cores), os = Median(span, &ThermalRow::other_cores);
  std::string share;
  if (jb && js) share += fmt::format("; the job's share went from {:.1f} to {:.1f} cores", *jb, *js);
  if (ob && os) share += fmt::format("; the rest of the host from {:.1f} to {:.1f} cores", *ob, *os);
  struct Kind {
    const char* cause;
    const char* label;
    Field f;
    const char* top;
  };
  for (const Kind& k : {Kind{"cpu_contention", "CPU pressure", &ThermalRow::cpu_pressure, "cpu"},
                        Kind{"io_contention", "I/O pressure", &ThermalRow::io_pressure_some, "io"}}) {
    auto b = Median(before, k.f), s = Median(span, k.f);
    if (!s) {
      ruled->push_back(fmt::format("{}: {} not recorded over this span{}", k.cause, k.label,
                                   std::string_view(k.cause) == "io_contention" && source == "runnable"
                                       ? " (no PSI: I/O pressure cannot be estimated)"
                                       : ""));
      continue;
    }
    const double base = b.value_or(0);
    if (*s < kPressureHighPct || *s < base + kPressureRisePct) {
      ruled->push_back(fmt::format("{}: {} {:.0f} % over the span{} ({} needs ≥ {:.0f} % and +{:.0f} points)", k.cause,
                                   k.label, *s, b ? fmt::format(", {:.0f} % before", *b) : "", k.cause,
                                   kPressureHighPct, kPressureRisePct));
      continue;
    }
    ContentionFinding f{k.cause, {}};
    f.evidence.push_back(fmt::format("{} {:.0f} % over the span{}{}{}", k.label, *s,
                                     b ? fmt::format(" ({:.0f} % before)", *b) : "", what, share));
    std::string top = TopConsumers(events, t0, t1, k.top);
    f.evidence.push_back(top.empty()
                             ? "outside the job: no top-consumer record in the span (run records them when pressure "
                               "passes its threshold; `sample` does not)"
                             : "outside the job: " + top);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace sparkops
