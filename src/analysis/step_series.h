#pragma once
/// The step series of a training log: one point per optimizer step seen (step, time, cost per
/// step, loss), plus evaluation / checkpoint markers. Built line by line, so memory grows with
/// the number of steps, not with the size of the log.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/line_reader.h"
#include "analysis/localtime.h"
#include "analysis/parallel_lines.h"
#include "analysis/step_line.h"
#include "analysis/step_template.h"
#include "base/error.h"

namespace sparkops {

inline constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

/// 32 bytes: a multi-hour log has millions of them.
struct StepPoint {
  int64_t step = 0;
  int64_t t_ms = kNoTime;   ///< UTC ms: the log's own timestamp, else the arrival time; kNoTime if none
  float direct = NAN;       ///< cost the log printed: s/step, or 1/throughput when only that is printed
  float cost = NAN;         ///< the cost the detector uses: `direct`, or s/step from the time since
                            ///< the previous point (chosen for the whole series by Finish)
  float loss = NAN;
  uint8_t flags = 0;        ///< kAfterEval / kAfterSave: an evaluation or save ran before this point
};
inline constexpr uint8_t kAfterEval = 1;
inline constexpr uint8_t kAfterSave = 2;

struct StepMarker {
  int64_t t_ms = kNoTime;
  int64_t step = 0;     ///< last training step seen before the marker
  uint8_t kind = 0;     ///< kAfterEval or kAfterSave
};

struct StepSeries {
  std::vector<StepPoint> points;
  std::vector<StepMarker> markers;
  std::string formats;       ///< "+"-joined formats seen, e.g. "tqdm+hf_dict"
  std::string cost_unit;     ///< what `cost` is: "s/step (printed)", "s/step (from timestamps)", ...
  bool cost_is_inverse_throughput = false;
  /// Every printed cost (`direct`) is 1/(tokens per second): the log gave tokens/s and no step
  /// time, so the tokens of a span are its seconds / direct, step by step (analysis/energy.h).
  bool direct_is_s_per_token = false;
  std::string time_source;   ///< "log timestamps", "arrival times (train.log)", "none"
  std::optional<int64_t> total_steps;
  /// HF Trainer's running token count (StepLine::tokens_seen) at each logging step with a time, in
  /// log order: the tokens of a span where the log prints no tokens/s (analysis/energy.h).
  struct TokensSeen {
    int64_t t_ms = 0;
    int64_t tokens = 0;
  };
  std::vector<TokensSeen> tokens_seen;
  uint64_t lines = 0, bytes = 0, ignored_rank_lines = 0;
  bool has_times() const;
};

/// `run --restart-on` writes this line (stream `o`) into train.log when attempt K starts:
/// "[sparkops run] attempt K starts (SPARKOPS_ATTEMPT=K)". It is never a step; the series takes the
/// first step after it without a time delta (the gap between attempts is not a step time), and a
/// step counter going back after it (a resume from an older checkpoint, or from zero) replaces the
/// points from that step on: the steps redone are the ones that count.
inline constexpr std::string_view kAttemptMarkerPrefix = "[sparkops run] attempt ";
std::string AttemptMarkerText(int attempt);

/// What one output record contributes, resolved without any builder state, so records can be
/// parsed on several threads and applied in order afterwards. Only what the builder uses,
/// packed: 48 bytes instead of a StepLine's ~170 (a 16 MiB segment's events are written by one
/// thread and read by another).
struct StepEvent {
  int64_t t_ms = kNoTime;   ///< the record's own time, else its arrival time
  const char* format = "";  ///< StepLine::format
  StepLine::Kind kind = StepLine::Kind::kNone;
  bool own_time = false;    ///< t_ms came from the log's own timestamp
  bool smoothed = false;    ///< StepLine::step_time_smoothed
  bool other_loop = false;  ///< StepLine::other_loop
  bool inverse = false;     ///< direct() is 1/throughput (the line printed no step time)
  bool tokens = false;      ///< ... and that throughput is tokens per second
  /// Copies what the builder uses from a parsed line.
  void Set(const StepLine& l);
  std::optional<int64_t> step() const { return Get(kHasStep, step_); }
  std::optional<int64_t> total() const { return Get(kHasTotal, total_); }
  std::optional<int64_t> tokens_seen() const { return Get(kHasTokensSeen, total_); }
  std::optional<float> loss() const { return Get(kHasLoss, loss_); }
  /// The printed cost per step: a step time > 0, else 1/throughput for a throughput > 0, else NaN.
  float direct() const { return direct_; }

 private:
  enum : uint8_t { kHasStep = 1, kHasTotal = 2, kHasLoss = 4, kHasTokensSeen = 8 };
  template <class T>
  std::optional<T> Get(uint8_t bit, T v) const {
    return (has_ & bit) ? std::optional<T>(v) : std::nullopt;
  }
  uint8_t has_ = 0;
  float direct_ = NAN, loss_ = 0;
  int64_t step_ = 0;
  int64_t total_ = 0;  ///< the total, else the tokens seen (StepLine::tokens_seen; a line with a total keeps it)
};

/// Parses one output record (already split on '\r'; `arrival_ms` kNoTime when unknown) into
/// `*out`; false for lines the analysis does not use (`*other_rank` set for another rank's copy).
/// `zone` caches offsets and must not be shared between threads (give each its own copy).
/// `tmpl` (--step-format, may be null): a line it matches is read by it instead.
bool ParseStepEvent(std::string_view text, int64_t arrival_ms, const LocalZone& zone, StepEvent* out, bool* other_rank,
                    const StepTemplate* tmpl = nullptr);

/// Calls `fn(text, arrival_ms)` for every record of one log line: a `run` train.log record has
/// its arrival time split off; carriage-return redraws are separate records (`may_have_cr`
/// false: the caller knows the line has no '\r', so it is not searched for one).
template <class Fn>
void ForEachRecord(std::string_view line, Fn&& fn, bool may_have_cr = true);

class StepSeriesBuilder {
 public:
  explicit StepSeriesBuilder(const LocalZone& zone, const StepTemplate* tmpl = nullptr) : zone_(zone), tmpl_(tmpl) {}
  /// One output record (already split on '\r'); `arrival_ms` kNoTime when unknown.
  void Add(std::string_view text, int64_t arrival_ms);
  /// A record parsed by ParseStepEvent, in log order.
  void Apply(const StepEvent& e);
  void CountOtherRankLines(uint64_t n) { s_.ignored_rank_lines += n; }
  size_t Points() const { return s_.points.size(); }
  /// Capacity for `n` points in all: a hint (only the pages used are touched), ignored when the
  /// allocator refuses it.
  void ReservePoints(size_t n);
  StepSeries Finish();

 private:
  void AddPoint(const StepEvent& l, int64_t t);
  const LocalZone& zone_;
  const StepTemplate* tmpl_ = nullptr;
  StepSeries s_;
  std::optional<int64_t> bar_total_;
  uint8_t pending_flags_ = 0;
  bool new_attempt_ = false;  ///< an attempt marker came since the last point
  uint64_t n_exact_ = 0, n_smoothed_ = 0, n_throughput_ = 0, n_tokens_ = 0, n_delta_ = 0, n_own_time_ = 0,
           n_arrival_ = 0;
  std::vector<const char*> formats_;  ///< format names seen (static strings; a handful)
};

/// Splits one train.log record `<UTC timestamp>\t<o|e>\t<text>`; false when `line` is not one.
bool SplitRunLogRecord(std::string_view line, int64_t* arrival_ms, std::string_view* text);

/// Reads a training log: a `run` train.log (arrival times used) or any plain log. Streaming;
/// a big regular file is parsed on several threads (`opt`, see ForEachLineParallel) and gives
/// the same series as one thread.
/// `tmpl`: the --step-format template (null: none).
Result<StepSeries> ReadStepLog(const std::string& path, const LocalZone& zone, ParallelLineOptions opt = {},
                               const StepTemplate* tmpl = nullptr);
/// The same over text in memory (tests).
StepSeries ParseStepLog(std::string_view text, const LocalZone& zone, const StepTemplate* tmpl = nullptr);

template <class Fn>
void ForEachRecord(std::string_view line, Fn&& fn, bool may_have_cr) {
  int64_t arrival = kNoTime;
  std::string_view text = line;
  if (!SplitRunLogRecord(line, &arrival, &text)) text = line;
  if (!may_have_cr) {
    if (!text.empty()) fn(text, arrival);
    return;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t cr = text.find('\r', start);
    std::string_view part = text.substr(start, cr == std::string_view::npos ? std::string_view::npos : cr - start);
    if (!part.empty()) fn(part, arrival);
    if (cr == std::string_view::npos) break;
    start = cr + 1;
  }
}

}  // namespace sparkops
