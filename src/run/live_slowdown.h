#pragma once
/// The live slowdown notice of `sparkops run` (issue 34): while the job runs, the step series of
/// train.log so far goes through the detector `analyze` uses (analysis/slowdown.h), at most every
/// `every_s` seconds; each slowdown episode not told yet gives one `slowdown` event (and so one
/// notice). Cheap: each check parses only the records written since the last one (the series is
/// kept between checks) and runs the detector once over the points.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/localtime.h"
#include "analysis/slowdown.h"
#include "analysis/step_series.h"

namespace sparkops {

/// Seconds between checks of the step series.
inline constexpr double kLiveSlowdownEveryS = 10;

/// An episode as told: its first and last step numbers at the last check.
struct ToldEpisode {
  int64_t first_step = 0, last_step = 0;
};

/// The episodes of `d` over `points` not told yet: each one starting after the last step of every
/// told episode. `told` is updated: the told episode an episode of `d` overlaps gets that
/// episode's (later) last step; the new ones are appended. Indices into d.slowdowns. Pure.
std::vector<size_t> NewEpisodes(const Detection& d, const std::vector<StepPoint>& points,
                                std::vector<ToldEpisode>* told);

class LiveSlowdown {
 public:
  /// `log_path`: the run's train.log; `zone` for timestamps the job prints (run's own are UTC).
  LiveSlowdown(std::string log_path, std::string thermal_path, std::string events_path, const LocalZone& zone,
               double every_s = kLiveSlowdownEveryS);
  /// At `now_s` (monotonic seconds): nothing when under `every_s` since the last check; else reads
  /// the records added to train.log, detects, and gives the `slowdown` event fields of each new
  /// episode: `start_step`, `ratio` (step time against the baseline), `baseline_s` and `level_s`
  /// (seconds per step, when the costs are), `cause` where the analysis names one (from thermal.csv
  /// and events.jsonl).
  std::vector<nlohmann::ordered_json> Check(double now_s);

 private:
  void ReadNew();
  std::string log_path_, thermal_path_, events_path_;
  const LocalZone& zone_;
  double every_s_;
  std::optional<double> last_check_;
  uint64_t offset_ = 0;  ///< bytes of train.log parsed (up to the last whole line)
  StepSeriesBuilder builder_;
  std::vector<ToldEpisode> told_;
};

}  // namespace sparkops
