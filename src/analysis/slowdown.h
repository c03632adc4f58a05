#pragma once
/// Sustained step-time slowdowns: a robust baseline after warm-up (the run's fastest sustained
/// window when the one right after warm-up holds a slow stretch), a rolling median that one-off
/// spikes cannot move, a ≥ 1.3× threshold held for a sustained stretch, with hysteresis for the
/// recovery, and the change point placed at the first step whose following window crosses.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sparkops {

struct StepPoint;

struct DetectOptions {
  double ratio = 1.3;          ///< slowdown threshold against the baseline (issue #5), at least
  double recover_ratio = 1.15; ///< back below this = recovered (hysteresis), at least
  /// The threshold also clears the baseline's own noise: 1 + mad_k × (1.4826 × MAD / baseline),
  /// the robust standard deviation of the baseline window (issue #24: 1.3× blips on a busy host).
  /// The recovery level rises with it (halfway between 1 and the threshold).
  double mad_k = 4.0;
  size_t window = 5;           ///< rolling-median width, points
  size_t min_points = 5;       ///< a stretch shorter than this is a spike, not a slowdown
  /// With costs in seconds per step (`cost_is_seconds`): a stretch lasting less than
  /// min(min_seconds, 25 baseline steps) (sum of its costs) is a spike, and stretches at most `merge_gap_s` seconds or
  /// `merge_gap_points` points apart are one episode.
  bool cost_is_seconds = true;
  double min_seconds = 10.0;
  double merge_gap_s = 30.0;
  size_t merge_gap_points = 10;
  /// Blips (issue 30), costs in seconds only: a slowdown that lasted under `blip_seconds` (the sum
  /// of its step times) and lost under `blip_share` of the run's time (the sum of every usable step
  /// time) is listed but never the headline (a VM's steal-time dip on a busy host).
  double blip_seconds = 10.0;
  double blip_share = 0.02;
};

struct Slowdown {
  size_t first = 0, last = 0;  ///< indices into the cost series (inclusive)
  double level = 0;  ///< median cost over the stretch
  double ratio = 0;  ///< level / baseline
  bool recovered = false;  ///< the series came back under recover_ratio before its end
  double lost = 0;  ///< sum over its points of (cost - baseline): seconds lost with s/step costs
  size_t parts = 1;  ///< stretches merged into it (split by short gaps)
  bool blip = false;  ///< short and cheap (DetectOptions::blip_seconds, blip_share): never the headline
};

struct Detection {
  bool ran = false;  ///< false when there are too few steps (see note)
  std::string note;
  double baseline = 0;  ///< median cost of the baseline window
  double spread = 0;  ///< 1.4826 × MAD of the baseline window / baseline (robust CV)
  double threshold_ratio = 0;  ///< the threshold used: max(ratio, 1 + mad_k × spread)
  size_t too_short = 0;  ///< stretches over the threshold dropped for lasting < min_seconds
  size_t warmup = 0;  ///< points skipped at the start
  size_t base_first = 0, base_last = 0;  ///< baseline window, indices
  /// Issue 30: the window right after warm-up (indices) and how many of its points sit in a slow
  /// stretch (5-point rolling median ≥ `ratio` × the run's fastest sustained level). When one such
  /// stretch lasts ≥ min_points the window is bimodal: the baseline is the fastest window instead
  /// (`baseline_moved`) and analyze warns.
  size_t early_first = 0, early_last = 0, early_slow = 0;
  bool baseline_moved = false;
  std::vector<Slowdown> slowdowns;  ///< in time order
  /// The slowdown, not a blip, that cost the most time (lost): the headline; slowdowns.size() when none.
  size_t Largest() const;
  size_t Blips() const;  ///< how many slowdowns are blips
  size_t spikes_eval = 0, spikes_save = 0, spikes_other = 0;  ///< one-off spikes ≥ ratio, ignored
};

/// Centred rolling median of width `w` (no NaN in `v`): out[k] is the median of v[a, a+w) with
/// a = k - w/2, clamped so the window stays inside v (shorter only when v is); an even count
/// gives the mean of the two middle values (rounded to float).
std::vector<float> RollingMedian(const std::vector<float>& v, size_t w);

/// `cost[i]`: seconds per step (NaN when unknown); `flags[i]`: kAfterEval/kAfterSave bits
/// (those points are named spikes and never start a slowdown).
Detection DetectSlowdowns(const std::vector<float>& cost, const std::vector<uint8_t>& flags,
                          const DetectOptions& opt = {});
/// The same over a step series' points (their `cost` and `flags`), without copying them out.
Detection DetectSlowdowns(const std::vector<StepPoint>& points, const DetectOptions& opt = {});

}  // namespace sparkops
