#include "analysis/slowdown.h"

#include <algorithm>
#include <cmath>

#include "analysis/step_series.h"

namespace sparkops {

namespace {
// Median of v, reordering it (no copy).
double MedianInPlace(std::vector<double>& v) {
  if (v.empty()) return NAN;
  size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(m), v.end());
  double hi = v[m];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(m));
  return (lo + hi) / 2;
}
}  // namespace

std::vector<double> RollingMedian(const std::vector<double>& v, size_t w) {
  const size_t n = v.size();
  w = std::max<size_t>(w, 1);
  std::vector<double> out(n);
  if (w == 5 && n >= 5) {  // the detector's width: a branch-free median of 5 (min/max network)
    for (size_t k = 0; k < n; ++k) {
      const double* x = v.data() + std::min(k >= 2 ? k - 2 : 0, n - 5);
      double f = std::max(std::min(x[0], x[1]), std::min(x[2], x[3]));
      double g = std::min(std::max(x[0], x[1]), std::max(x[2], x[3]));
      out[k] = std::max(std::min(f, g), std::min(std::max(f, g), x[4]));
    }
    return out;
  }
  // The window [a, b) only stays or moves right by one, so a sorted copy of it is kept: one
  // removal and one insertion per point instead of a selection over the whole window.
  std::vector<double> sorted;
  size_t ca = 0, cb = 0;  // the window `sorted` holds
  for (size_t k = 0; k < n; ++k) {
    size_t a = k >= w / 2 ? k - w / 2 : 0;
    size_t b = std::min(n, a + w);
    if (b - a < w && b == n) a = n >= w ? n - w : 0;
    for (; cb < b; ++cb) sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), v[cb]), v[cb]);
    for (; ca < a; ++ca) sorted.erase(std::lower_bound(sorted.begin(), sorted.end(), v[ca]));
    size_t m = sorted.size() / 2;
    out[k] = sorted.size() % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  }
  return out;
}

namespace {
/// The detector over `size` points: `cost(i)` seconds per step (NaN when unknown), `flag(i)` the
/// kAfterEval/kAfterSave bits. Works on a copy of the usable costs only.
template <class Cost, class Flag>
Detection Detect(size_t size, Cost cost, Flag flag, const DetectOptions& opt) {
  Detection d;
  // Usable points: a known cost and no evaluation/save inside the interval.
  std::vector<size_t> idx;
  std::vector<double> usable;
  idx.reserve(size);
  usable.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    const float c = cost(i);
    if (std::isfinite(c) && c > 0 && flag(i) == 0) {
      idx.push_back(i);
      usable.push_back(c);
    }
  }
  size_t n = idx.size();
  d.warmup = std::clamp<size_t>(n / 10, 3, 500);
  size_t base_len = std::clamp<size_t>(n / 5, 10, 2000);
  if (n < d.warmup + base_len + opt.min_points) {
    d.note = "too few steps with a step time (" + std::to_string(n) + ") for a baseline after warm-up";
    return d;
  }
  std::vector<double> base(usable.begin() + static_cast<long>(d.warmup),
                           usable.begin() + static_cast<long>(d.warmup + base_len));
  d.baseline = MedianInPlace(base);
  d.base_first = idx[d.warmup];
  d.base_last = idx[d.warmup + base_len - 1];
  d.ran = true;
  const double up = opt.ratio * d.baseline, down = opt.recover_ratio * d.baseline;
  const size_t w = std::max<size_t>(opt.window, 1);
  // Rolling median over usable points, centred.
  const std::vector<double> smooth = RollingMedian(usable, w);
  std::vector<double> win;
  // Window median of raw points starting at k (for placing change points).
  auto ahead = [&](size_t k) {
    win.assign(usable.begin() + static_cast<long>(k), usable.begin() + static_cast<long>(std::min(n, k + w)));
    return MedianInPlace(win);
  };
  size_t k = d.warmup;
  while (k < n) {
    if (smooth[k] < up) {
      ++k;
      continue;
    }
    size_t e = k;
    while (e + 1 < n && smooth[e + 1] >= down) ++e;
    // stretch [k, e] in usable-point indices
    if (e - k + 1 >= opt.min_points) {
      size_t start = k >= w ? k - w : 0;
      start = std::max(start, d.warmup);
      while (start < k && (usable[start] < up || ahead(start) < up)) ++start;
      size_t end = e;
      while (end > start && usable[end] < up && smooth[end] < up) --end;
      std::vector<double> lv(usable.begin() + static_cast<long>(start), usable.begin() + static_cast<long>(end + 1));
      Slowdown s;
      s.first = idx[start];
      s.last = idx[end];
      s.level = MedianInPlace(lv);
      s.ratio = s.level / d.baseline;
      s.recovered = e + 1 < n;
      d.slowdowns.push_back(s);
    }
    k = e + 1;
  }
  // One-off spikes: points at or above the threshold outside any slowdown.
  std::vector<bool> covered(size, false);
  for (auto& s : d.slowdowns)
    for (size_t i = s.first; i <= s.last; ++i) covered[i] = true;
  for (size_t i = d.base_first; i < size; ++i) {
    const float c = cost(i);
    if (!std::isfinite(c) || c < up || covered[i]) continue;
    uint8_t f = flag(i);
    if (f & kAfterEval) ++d.spikes_eval;
    else if (f & kAfterSave) ++d.spikes_save;
    else ++d.spikes_other;
  }
  return d;
}
}  // namespace

Detection DetectSlowdowns(const std::vector<float>& cost, const std::vector<uint8_t>& flags, const DetectOptions& opt) {
  return Detect(
      cost.size(), [&](size_t i) { return cost[i]; }, [&](size_t i) { return i < flags.size() ? flags[i] : uint8_t{0}; },
      opt);
}

Detection DetectSlowdowns(const std::vector<StepPoint>& points, const DetectOptions& opt) {
  return Detect(
      points.size(), [&](size_t i) { return points[i].cost; }, [&](size_t i) { return points[i].flags; }, opt);
}

}  // namespace sparkops
