#include "analysis/energy.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace sparkops {

namespace {

/// Sums `pair_j(prev, row)` (the energy between two readings, J; nullopt: none there) over the
/// consecutive readings that `has(row)` accepts, each pair's share clipped to [t0, t1] in
/// proportion to time. A pair further apart than `max_gap_ms` is not bridged. Absent when no pair
/// overlaps the span; `*bad` when a pair gives nullopt (a counter that went backwards).
template <class Has, class PairJ>
std::optional<double> SumPairs(const std::vector<ThermalRow>& rows, int64_t t0, int64_t t1, int64_t max_gap_ms, Has has,
                               PairJ pair_j, bool* bad) {
  std::optional<double> j;
  const ThermalRow* prev = nullptr;
  for (const ThermalRow& r : rows) {
    if (!has(r)) continue;
    if (prev && r.t_ms > prev->t_ms && r.t_ms - prev->t_ms <= max_gap_ms) {
      const int64_t a = std::max(prev->t_ms, t0), b = std::min(r.t_ms, t1);
      if (b > a) {
        std::optional<double> pj = pair_j(*prev, r, a, b);
        if (!pj) *bad = true;
        else j = j.value_or(0) + *pj;
      }
    }
    prev = &r;
  }
  return j;
}

bool Finite(const std::optional<double>& v) { return v && std::isfinite(*v) && *v >= 0; }

/// The integral of a power column (W) over [t0, t1], J: trapezoids, linear between readings.
template <class Get>
std::optional<double> IntegralJ(const std::vector<ThermalRow>& rows, int64_t t0, int64_t t1, int64_t max_gap_ms,
                                Get get) {
  bool bad = false;
  return SumPairs(
      rows, t0, t1, max_gap_ms, [&](const ThermalRow& r) { return Finite(get(r)); },
      [&](const ThermalRow& p, const ThermalRow& q, int64_t a, int64_t b) -> std::optional<double> {
        const double wp = *get(p), wq = *get(q), span = static_cast<double>(q.t_ms - p.t_ms);
        auto at = [&](int64_t t) { return wp + (wq - wp) * static_cast<double>(t - p.t_ms) / span; };
        return (at(a) + at(b)) / 2.0 * static_cast<double>(b - a) / 1000.0;
      },
      &bad);
}

/// The energy counter's rise over [t0, t1], J (each interval's rise shared out by time). Absent
/// when it went backwards in the span (a driver reload resets it).
std::optional<double> CounterJ(const std::vector<ThermalRow>& rows, int64_t t0, int64_t t1, int64_t max_gap_ms) {
  bool bad = false;
  auto j = SumPairs(
      rows, t0, t1, max_gap_ms, [](const ThermalRow& r) { return Finite(r.energy_j); },
      [](const ThermalRow& p, const ThermalRow& q, int64_t a, int64_t b) -> std::optional<double> {
        if (*q.energy_j < *p.energy_j) return std::nullopt;
        return (*q.energy_j - *p.energy_j) * static_cast<double>(b - a) / static_cast<double>(q.t_ms - p.t_ms);
      },
      &bad);
  return bad ? std::nullopt : j;
}

/// Wh over [t0, t1] in the scope EnergyOfRun uses: sys_power_w, else the GPU counter, else power_w.
std::optional<double> ScopeWh(const ThermalSeries& th, int64_t t0, int64_t t1, bool system, int64_t max_gap_ms) {
  if (th.rows.empty() || t0 < th.rows.front().t_ms || t1 > th.rows.back().t_ms || t1 <= t0) return std::nullopt;
  std::optional<double> j;
  if (system) {
    j = IntegralJ(th.rows, t0, t1, max_gap_ms, [](const ThermalRow& r) { return r.power.sys_power_w; });
  } else {
    j = CounterJ(th.rows, t0, t1, max_gap_ms);
    if (!j) j = IntegralJ(th.rows, t0, t1, max_gap_ms, [](const ThermalRow& r) { return r.power_w; });
  }
  if (!j) return std::nullopt;
  return *j / 3600.0;
}

/// The rise of a running token count over [t0, t1]: each consecutive pair's rise shared out by
/// the part of its interval inside the span. A pair whose count went back is skipped. Absent
/// when nothing rose in the span.
std::optional<double> TokensSeenIn(const std::vector<StepSeries::TokensSeen>& seen, int64_t t0, int64_t t1) {
  double tokens = 0;
  for (size_t i = 1; i < seen.size(); ++i) {
    const auto &p = seen[i - 1], &q = seen[i];
    if (q.t_ms <= p.t_ms || q.tokens <= p.tokens) continue;
    const int64_t a = std::max(p.t_ms, t0), b = std::min(q.t_ms, t1);
    if (b > a)
      tokens +=
          static_cast<double>(q.tokens - p.tokens) * static_cast<double>(b - a) / static_cast<double>(q.t_ms - p.t_ms);
  }
  if (tokens > 0) return tokens;
  return std::nullopt;
}

}  // namespace

std::optional<SlowdownEnergy> EnergyOfSlowdown(const ThermalSeries& thermal, const StepSeries& steps,
                                               const Detection& d, const Slowdown& s, bool system, int64_t max_gap_ms) {
  const auto& p = steps.points;
  if (!d.ran || s.first == 0 || s.last >= p.size() || d.base_last >= p.size() || d.base_last <= d.base_first)
    return std::nullopt;
  const StepPoint &a = p[s.first - 1], &b = p[s.last], &ba = p[d.base_first], &bb = p[d.base_last];
  for (const StepPoint* q : {&a, &b, &ba, &bb})
    if (q->t_ms == kNoTime) return std::nullopt;
  if (b.step <= a.step || bb.step <= ba.step) return std::nullopt;
  auto span = ScopeWh(thermal, a.t_ms, b.t_ms, system, max_gap_ms);
  auto base = ScopeWh(thermal, ba.t_ms, bb.t_ms, system, max_gap_ms);
  if (!span || !base) return std::nullopt;
  SlowdownEnergy e;
  e.wh = *span;
  e.steps = b.step - a.step;
  e.baseline_wh_per_step = *base / static_cast<double>(bb.step - ba.step);
  e.baseline_wh = e.baseline_wh_per_step * static_cast<double>(e.steps);
  return e;
}

std::optional<double> RunEnergy::WhPer1kTokens() const {
  const EnergyFigure* t = Total();
  if (!t || !tokens || *tokens <= 0) return std::nullopt;
  return t->wh / (*tokens / 1000.0);
}

std::optional<double> RunEnergy::WhPerStep() const {
  const EnergyFigure* t = Total();
  if (!t || steps <= 0) return std::nullopt;
  return t->wh / static_cast<double>(steps);
}

std::optional<RunEnergy> EnergyOfRun(const ThermalSeries& thermal, const StepSeries& steps, int64_t max_gap_ms) {
  if (thermal.rows.empty()) return std::nullopt;
  int64_t t0 = thermal.rows.front().t_ms, t1 = thermal.rows.back().t_ms;
  RunEnergy e;
  // The steps' span inside the samples: the energy per step over the same time.
  const StepPoint* a = nullptr;
  const StepPoint* b = nullptr;
  for (const StepPoint& p : steps.points) {
    if (p.t_ms == kNoTime || p.t_ms < t0 || p.t_ms > t1) continue;
    if (!a) a = &p;
    b = &p;
  }
  if (a && b && b->t_ms > a->t_ms && b->step > a->step) {
    t0 = a->t_ms;
    t1 = b->t_ms;
    e.steps = b->step - a->step;
    if (steps.direct_is_s_per_token) {  // tokens between consecutive steps: the time × the later's tokens/s
      double tokens = 0;
      for (const StepPoint* p = a + 1; p <= b; ++p)
        if (p->t_ms != kNoTime && (p - 1)->t_ms != kNoTime && p->t_ms > (p - 1)->t_ms && std::isfinite(p->direct) &&
            p->direct > 0)
          tokens += static_cast<double>(p->t_ms - (p - 1)->t_ms) / 1000.0 / static_cast<double>(p->direct);
      if (tokens > 0) e.tokens = tokens, e.tokens_source = "tokens/s x time";
    } else if (auto seen = TokensSeenIn(steps.tokens_seen, t0, t1)) {
      e.tokens = *seen, e.tokens_source = "num_input_tokens_seen";
    }
  } else if (!steps.has_times() && !steps.points.empty()) {
    e.steps = steps.points.back().step;  // no times in the log: the whole run over every step seen
  }
  e.seconds = static_cast<double>(t1 - t0) / 1000.0;
  if (auto c = CounterJ(thermal.rows, t0, t1, max_gap_ms)) e.gpu = EnergyFigure{*c / 3600.0, "nvml energy counter"};
  else if (auto i = IntegralJ(thermal.rows, t0, t1, max_gap_ms, [](const ThermalRow& r) { return r.power_w; }))
    e.gpu = EnergyFigure{*i / 3600.0, "integral of power_w"};
  if (auto i = IntegralJ(thermal.rows, t0, t1, max_gap_ms, [](const ThermalRow& r) { return r.power.sys_power_w; }))
    e.system = EnergyFigure{*i / 3600.0, "integral of sys_power_w (spbm)"};
  if (!e.gpu && !e.system) return std::nullopt;
  return e;
}

}  // namespace sparkops
