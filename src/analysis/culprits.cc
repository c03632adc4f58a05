#include "analysis/culprits.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace sparkops {

namespace {
struct Point {
  int64_t t_ms = 0;
  double rate = 0;                ///< cores, or bytes/s
  std::optional<double> counter;  ///< cpu_s, or io_bytes
};
struct Seen {
  std::string cmd;
  bool on_job_cpus = false;
  std::vector<Point> before, span;
  std::optional<double> age_s;  ///< at its first point in the span (the record's uptime_s - start_s)
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Work (core-seconds, or bytes) in the window [w0, w1] (ms) averaged over it. With counters:
/// the last reading less the counter at the window's start (0 for a process that started inside
/// it, `started_inside`; else the first reading less its rate back to the window's start), plus
/// its last rate until the next record would come (`gap_s`) or the window ends. Without: each
/// point's rate for one record gap.
double Rate(const std::vector<Point>& pts, double gap_s, int64_t w0, int64_t w1, bool started_inside) {
  const double len_s = static_cast<double>(w1 - w0) / 1000;
  if (pts.empty() || !(len_s > 0)) return 0;
  const Point& a = pts.front();
  const Point& b = pts.back();
  double amount = 0;
  if (a.counter && b.counter && *b.counter >= *a.counter) {
    const double back_s = std::min(gap_s, static_cast<double>(a.t_ms - w0) / 1000);
    const double base = started_inside ? 0 : std::max(0.0, *a.counter - a.rate * back_s);
    amount = *b.counter - base + b.rate * std::clamp(static_cast<double>(w1 - b.t_ms) / 1000, 0.0, gap_s);
  } else {
    for (const Point& p : pts) amount += p.rate * gap_s;
  }
  return amount / std::max(len_s, gap_s);
}
}  // namespace

std::vector<Culprit> RankCulprits(const std::vector<RunEvent>& events, int64_t t0, int64_t t1, const char* list,
                                  CulpritKind kind, double min_rise, size_t n) {
  const int64_t len = std::max<int64_t>(t1 - t0, 1000);
  const int64_t b0 = t0 - std::max<int64_t>(len, 60000);
  const bool io = kind == CulpritKind::kIo;
  std::map<int64_t, Seen> by_pid;
  std::vector<int64_t> times;
  std::optional<int64_t> first_before;  // the before window is what the records cover
  for (const RunEvent& e : events) {
    if (e.type != "host_contention" || e.t_ms < b0 || e.t_ms > t1) continue;
    const bool in_span = e.t_ms >= t0;
    if (in_span) times.push_back(e.t_ms);
    else if (!first_before || e.t_ms < *first_before) first_before = e.t_ms;
    auto it = e.record.find(list);
    if (it == e.record.end() || !it->is_array()) continue;
    for (const auto& p : *it) {
      if (!p.is_object() || !p.contains("pid") || !p["pid"].is_number_integer()) continue;
      Point pt{e.t_ms, 0, std::nullopt};
      const char* rate_key = io ? "io_bytes_per_s" : "cores";
      const char* counter_key = io ? "io_bytes" : "cpu_s";
      if (p.contains(rate_key) && p[rate_key].is_number() && p[rate_key].get<double>() >= 0)
        pt.rate = p[rate_key].get<double>();
      if (p.contains(counter_key) && p[counter_key].is_number() && p[counter_key].get<double>() >= 0)
        pt.counter = p[counter_key].get<double>();
      if (io && !pt.counter && !p.contains(rate_key)) continue;  // unreadable I/O: no reading, not 0
      Seen& s = by_pid[p["pid"].get<int64_t>()];
      if (s.cmd.empty()) {
        std::string cmd = p.contains("cmdline") && p["cmdline"].is_string() ? p["cmdline"].get<std::string>() : "";
        if (cmd.empty() && p.contains("comm") && p["comm"].is_string()) cmd = p["comm"].get<std::string>();
        s.cmd = cmd;
      }
      if (in_span && p.contains("on_job_cpus") && p["on_job_cpus"].is_boolean() && p["on_job_cpus"].get<bool>())
        s.on_job_cpus = true;
      if (in_span && s.span.empty() && p.contains("start_s") && p["start_s"].is_number() &&
          e.record.contains("uptime_s") && e.record["uptime_s"].is_number())
        s.age_s = e.record["uptime_s"].get<double>() - p["start_s"].get<double>();
      (in_span ? s.span : s.before).push_back(pt);
    }
  }
  std::vector<double> gaps;
  std::sort(times.begin(), times.end());
  for (size_t i = 1; i < times.size(); ++i) gaps.push_back(static_cast<double>(times[i] - times[i - 1]) / 1000);
  const double gap_s = std::max(1.0, gaps.empty() ? 5.0 : Median(gaps));
  std::vector<Culprit> out;
  for (auto& [pid, s] : by_pid) {
    if (s.span.empty()) continue;
    const Point& first = s.span.front();
    const double into_span_s = static_cast<double>(first.t_ms - t0) / 1000;
    // New to the span: started after t0, or within one record gap before it (the detector's first
    // slow step lags the cause by a few steps; a dd started just before it is the trigger).
    const bool new_in_span = s.age_s && *s.age_s < into_span_s + gap_s;
    const int64_t w0 = first_before ? std::max(b0, *first_before - static_cast<int64_t>(gap_s * 1000)) : t0;
    Culprit c{pid, s.cmd, Rate(s.span, gap_s, t0, t1, new_in_span), Rate(s.before, gap_s, w0, t0, false),
              s.on_job_cpus && !io};
    // Never recorded before the span but older than it (a quiet host writes no records): its
    // average since it started stands for "before".
    if (!new_in_span && s.before.empty() && s.age_s && first.counter && *s.age_s > into_span_s + 1)
      c.before_rate = std::max(0.0, *first.counter - first.rate * into_span_s) / (*s.age_s - into_span_s);
    if (c.Rise() >= min_rise) out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const Culprit& a, const Culprit& b) {
    if (a.on_job_cpus != b.on_job_cpus) return a.on_job_cpus;
    return a.Rise() > b.Rise();
  });
  if (out.size() > n) out.resize(n);
  return out;
}

std::string CulpritText(const std::vector<Culprit>& v, CulpritKind kind) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    const Culprit& c = v[i];
    if (kind == CulpritKind::kIo)
      out += fmt::format("{}pid {} `{}` {:.1f} MB/s of storage I/O over the span ({:.1f} before)", i ? ", " : "", c.pid,
                         c.cmd, c.span_rate / 1e6, c.before_rate / 1e6);
    else
      out += fmt::format("{}pid {} `{}` {:.1f} cores over the span ({:.1f} before{})", i ? ", " : "", c.pid, c.cmd,
                         c.span_rate, c.before_rate, c.on_job_cpus ? ", on the job's CPUs" : "");
  }
  return out;
}

std::optional<double> RecordMedian(const std::vector<RunEvent>& events, int64_t t0, int64_t t1, const char* key,
                                   const char* sub) {
  std::vector<double> v;
  for (const RunEvent& e : events) {
    if (e.type != "host_contention" || e.t_ms < t0 || e.t_ms > t1) continue;
    auto it = e.record.find(key);
    if (it == e.record.end()) continue;
    const nlohmann::json* x = &*it;
    if (sub) {
      if (!x->is_object() || !x->contains(sub)) continue;
      x = &(*x)[sub];
    }
    if (x->is_number()) v.push_back(x->get<double>());
  }
  if (v.empty()) return std::nullopt;
  return Median(std::move(v));
}

}  // namespace sparkops
