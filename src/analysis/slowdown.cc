#include "analysis/slowdown.h"

#include <algorithm>
#include <cmath>

#include "analysis/step_series.h"

namespace sparkops {

namespace {
// Median of v, reordering it (no copy); an even count gives the mean of the middle two in double.
double MedianInPlace(std::vector<float>& v) {
  if (v.empty()) return NAN;
  size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(m), v.end());
  const double hi = v[m];
  if (v.size() % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(m));
  return (lo + hi) / 2;
}

/// The centred median of 5 at k over v[0, n) (n >= 5; the window clamped inside), branch-free:
/// a min/max network.
inline float Median5At(const float* v, size_t n, size_t k) {
  const float* x = v + std::min(k >= 2 ? k - 2 : 0, n - 5);
  const float f = std::max(std::min(x[0], x[1]), std::min(x[2], x[3]));
  const float g = std::min(std::max(x[0], x[1]), std::max(x[2], x[3]));
  return std::max(std::min(f, g), std::min(std::max(f, g), x[4]));
}
}  // namespace

std::vector<float> RollingMedian(const std::vector<float>& v, size_t w) {
  const size_t n = v.size();
  w = std::max<size_t>(w, 1);
  std::vector<float> out(n);
  if (w == 5 && n >= 5) {  // the detector's width
    for (size_t k = 0; k < n; ++k) out[k] = Median5At(v.data(), n, k);
    return out;
  }
  // The window [a, b) only stays or moves right by one, so a sorted copy of it is kept: one
  // removal and one insertion per point instead of a selection over the whole window.
  std::vector<float> sorted;
  size_t ca = 0, cb = 0;  // the window `sorted` holds
  for (size_t k = 0; k < n; ++k) {
    size_t a = k >= w / 2 ? k - w / 2 : 0;
    size_t b = std::min(n, a + w);
    if (b - a < w && b == n) a = n >= w ? n - w : 0;
    for (; cb < b; ++cb) sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), v[cb]), v[cb]);
    for (; ca < a; ++ca) sorted.erase(std::lower_bound(sorted.begin(), sorted.end(), v[ca]));
    size_t m = sorted.size() / 2;
    out[k] = sorted.size() % 2 ? sorted[m] : static_cast<float>((double{sorted[m - 1]} + sorted[m]) / 2);
  }
  return out;
}

namespace {
/// The point index of the u-th usable point, from the sorted list of skipped points: walked with
/// a cursor, so increasing queries cost one pass over the list in all (going back starts over).
class PointIndex {
 public:
  explicit PointIndex(const std::vector<uint32_t>& skipped) : skipped_(skipped) {}
  size_t operator()(size_t u) {
    if (u < last_u_) j_ = 0;
    last_u_ = u;
    size_t i = u + j_;
    for (; j_ < skipped_.size() && skipped_[j_] <= i; ++j_) ++i;
    return i;
  }

 private:
  const std::vector<uint32_t>& skipped_;
  size_t j_ = 0, last_u_ = 0;
};

/// The detector over `size` points: `cost(i)` seconds per step (NaN when unknown), `flag(i)` the
/// kAfterEval/kAfterSave bits. Works on a float copy of the usable costs only; the points it
/// skipped are listed instead of an index per usable point, and the rolling median of the
/// default width is computed where it is read: on millions of points the fresh memory of such
/// copies (page faults, zeroing: ~1 ms per MB on a VM) was most of the detector's time.
template <class Cost, class Flag>
Detection Detect(size_t size, Cost cost, Flag flag, const DetectOptions& opt) {
  Detection d;
  if (size > UINT32_MAX) {
    d.note = "too many steps (" + std::to_string(size) + ") for the detector";
    return d;
  }
  // Usable points: a known cost and no evaluation/save inside the interval.
  std::vector<float> usable;
  std::vector<uint32_t> skipped;  // the others, in order
  struct Flagged {
    uint32_t i;
    float cost;
    uint8_t flag;
  };
  std::vector<Flagged> flagged;  // a known cost after an evaluation or save: only counted as spikes
  usable.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    const float c = cost(i);
    const uint8_t f = flag(i);
    if (std::isfinite(c) && c > 0 && f == 0) {
      usable.push_back(c);
      continue;
    }
    skipped.push_back(static_cast<uint32_t>(i));
    if (std::isfinite(c) && c > 0) flagged.push_back({static_cast<uint32_t>(i), c, f});
  }
  const size_t n = usable.size();
  PointIndex point(skipped);
  d.warmup = std::clamp<size_t>(n / 10, 3, 500);
  size_t base_len = std::clamp<size_t>(n / 5, 10, 2000);
  if (n < d.warmup + base_len + opt.min_points) {
    d.note = "too few steps with a step time (" + std::to_string(n) + ") for a baseline after warm-up";
    return d;
  }
  size_t base_at = d.warmup;
  auto window = [&](std::vector<float>& v, size_t a) {
    v.assign(usable.begin() + static_cast<long>(a), usable.begin() + static_cast<long>(a + base_len));
  };
  std::vector<float> base;
  window(base, base_at);
  d.baseline = MedianInPlace(base);
  // Issue 30: a slow stretch right after warm-up must not become the baseline. The run's fast
  // level is the lowest median of the windows of base_len points (a quarter window apart); when
  // the early window's 5-point rolling median stays ≥ opt.ratio × that level for min_points
  // points in a row, the baseline is that fastest window instead.
  const size_t stride = std::max<size_t>(base_len / 4, 1);
  size_t fast_at = base_at;
  double fast = d.baseline;
  for (size_t a = base_at + stride; a + base_len <= n; a += stride) {
    window(base, a);
    if (const double m = MedianInPlace(base); m < fast) fast = m, fast_at = a;
  }
  size_t in_row = 0, longest = 0;
  for (size_t k = base_at; k < base_at + base_len; ++k) {
    const bool slow = Median5At(usable.data(), n, k) >= opt.ratio * fast;
    d.early_slow += slow;
    in_row = slow ? in_row + 1 : 0;
    longest = std::max(longest, in_row);
  }
  d.early_first = point(base_at);
  d.early_last = point(base_at + base_len - 1);
  if (fast_at != base_at && longest >= opt.min_points) {
    d.baseline_moved = true;
    base_at = fast_at;
    d.baseline = fast;
  }
  window(base, base_at);
  d.base_first = point(base_at);
  d.base_last = point(base_at + base_len - 1);
  d.ran = true;
  for (float& x : base) x = static_cast<float>(std::fabs(x - d.baseline));
  d.spread = 1.4826 * MedianInPlace(base) / d.baseline;
  d.threshold_ratio = std::max(opt.ratio, 1.0 + opt.mad_k * d.spread);
  const double recover_ratio = std::max(opt.recover_ratio, 1.0 + (d.threshold_ratio - 1.0) / 2);
  const double up = d.threshold_ratio * d.baseline, down = recover_ratio * d.baseline;
  const size_t w = std::max<size_t>(opt.window, 1);
  // Rolling median over usable points, centred.
  const std::vector<float> smooth_other = w == 5 ? std::vector<float>() : RollingMedian(usable, w);
  auto smooth = [&](size_t k) { return w == 5 ? Median5At(usable.data(), n, k) : smooth_other[k]; };
  std::vector<float> win;
  // Window median of raw points starting at k (for placing change points).
  auto ahead = [&](size_t k) {
    win.assign(usable.begin() + static_cast<long>(k), usable.begin() + static_cast<long>(std::min(n, k + w)));
    return MedianInPlace(win);
  };
  std::vector<std::pair<size_t, size_t>> stretches;  // the slowdowns in usable-point indices
  struct Found {
    size_t start, end;
    bool recovered;
    size_t parts;
  };
  std::vector<Found> found;  // stretches over the threshold, before merging
  size_t k = d.warmup;
  while (k < n) {
    if (smooth(k) < up) {
      ++k;
      continue;
    }
    size_t e = k;
    while (e + 1 < n && smooth(e + 1) >= down) ++e;
    // stretch [k, e] in usable-point indices
    if (e - k + 1 >= opt.min_points) {
      size_t start = k >= w ? k - w : 0;
      start = std::max(start, d.warmup);
      while (start < k && (usable[start] < up || ahead(start) < up)) ++start;
      size_t end = e;
      while (end > start && usable[end] < up && smooth(end) < up) --end;
      found.push_back({start, end, e + 1 < n, 1});
    }
    k = e + 1;
  }
  // Stretches split by a short gap are one episode; then episodes too short to matter are spikes.
  auto seconds = [&](size_t a, size_t b) {  // sum of usable costs over [a, b)
    double t = 0;
    for (size_t i = a; i < b; ++i) t += usable[i];
    return t;
  };
  std::vector<Found> merged;
  for (const Found& f : found) {
    if (!merged.empty()) {
      Found& m = merged.back();
      const size_t gap = f.start - m.end - 1;
      if (gap <= opt.merge_gap_points || (opt.cost_is_seconds && seconds(m.end + 1, f.start) <= opt.merge_gap_s)) {
        m.end = f.end;
        m.recovered = f.recovered;
        ++m.parts;
        continue;
      }
    }
    merged.push_back(f);
  }
  // A fast loop's slowdown may be short in seconds: at most 25 baseline steps are asked for.
  const double min_seconds = std::min(opt.min_seconds, 25 * d.baseline);
  const double run_seconds = seconds(0, n);
  for (const Found& f : merged) {
    if (opt.cost_is_seconds && seconds(f.start, f.end + 1) < min_seconds) {
      ++d.too_short;
      continue;
    }
    std::vector<float> lv(usable.begin() + static_cast<long>(f.start), usable.begin() + static_cast<long>(f.end + 1));
    Slowdown s;
    s.first = point(f.start);
    s.last = point(f.end);
    s.level = MedianInPlace(lv);
    s.ratio = s.level / d.baseline;
    s.recovered = f.recovered;
    s.parts = f.parts;
    for (size_t i = f.start; i <= f.end; ++i) s.lost += usable[i] - d.baseline;
    s.blip =
        opt.cost_is_seconds && seconds(f.start, f.end + 1) < opt.blip_seconds && s.lost < opt.blip_share * run_seconds;
    d.slowdowns.push_back(s);
    stretches.emplace_back(f.start, f.end);
  }
  // One-off spikes: points at or above the threshold outside any slowdown, from the baseline on.
  // The slowdowns are in order and do not overlap: a cursor walks them (usable points in
  // usable-index space, flagged ones in point-index space).
  size_t cur = 0;
  for (size_t u = d.warmup; u < n; ++u) {
    if (usable[u] < up) continue;
    while (cur < stretches.size() && stretches[cur].second < u) ++cur;
    if (cur == stretches.size() || stretches[cur].first > u) ++d.spikes_other;
  }
  cur = 0;
  for (const Flagged& p : flagged) {
    while (cur < d.slowdowns.size() && d.slowdowns[cur].last < p.i) ++cur;
    if (p.cost < up || p.i < d.early_first || (cur < d.slowdowns.size() && d.slowdowns[cur].first <= p.i)) continue;
    if (p.flag & kAfterEval) ++d.spikes_eval;
    else if (p.flag & kAfterSave) ++d.spikes_save;
    else ++d.spikes_other;
  }
  return d;
}
}  // namespace

size_t Detection::Largest() const {
  size_t best = slowdowns.size();
  for (size_t i = 0; i < slowdowns.size(); ++i)
    if (!slowdowns[i].blip && (best == slowdowns.size() || slowdowns[i].lost > slowdowns[best].lost)) best = i;
  return best;
}

size_t Detection::Blips() const {
  return static_cast<size_t>(
      std::count_if(slowdowns.begin(), slowdowns.end(), [](const Slowdown& s) { return s.blip; }));
}

Detection DetectSlowdowns(const std::vector<float>& cost, const std::vector<uint8_t>& flags, const DetectOptions& opt) {
  return Detect(
      cost.size(), [&](size_t i) { return cost[i]; },
      [&](size_t i) { return i < flags.size() ? flags[i] : uint8_t{0}; }, opt);
}

Detection DetectSlowdowns(const std::vector<StepPoint>& points, const DetectOptions& opt) {
  return Detect(
      points.size(), [&](size_t i) { return points[i].cost; }, [&](size_t i) { return points[i].flags; }, opt);
}

}  // namespace sparkops
