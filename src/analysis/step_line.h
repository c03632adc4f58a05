#pragma once
/// Per-line parsers for the per-step output of training frameworks (facts: the formats listed
/// in docs/analyze.md, from each framework's formatting code or logs quoted in its issues). Pure functions of one
/// line of text, no regex: `analyze` runs them over every line of a multi-GB log.
#include <cstdint>
#include <optional>
#include <string_view>

namespace sparkops {

/// What one line says. Every field is absent unless the line printed it.
struct StepLine {
  enum class Kind : uint8_t {
    kNone,     ///< nothing the analysis uses
    kStep,     ///< a training step (progress bar, metric line, dict with a step)
    kLoss,     ///< a metric dict without a step number (HF Trainer dict): belongs to the last step
    kEval,     ///< evaluation running or reported (eval dict, eval banner, nanoGPT val line)
    kSave,     ///< a checkpoint being saved
    kBar,      ///< a tqdm bar with no rate yet, or a bar of another loop (eval): step/total only
    kAttempt,  ///< `run --restart-on`'s marker of a new attempt (step_series.h): not the job's output
  };
  Kind kind = Kind::kNone;
  const char* format = "";             ///< "tqdm", "hf_dict", "torchtune", "torchtitan", "lightning", ...
  std::optional<int64_t> step;         ///< optimizer step / iteration number
  std::optional<int64_t> total;        ///< total steps, when printed (tqdm N/M, Megatron N/M)
  std::optional<double> step_time_s;   ///< seconds per step as printed (s/it, 1/(it/s), ms/iter)
  bool step_time_smoothed = false;     ///< true for tqdm rates (an exponential moving average)
  bool other_loop = false;             ///< a tqdm bar with its own description ("Loading checkpoint shards:")
  std::optional<double> throughput;    ///< items per second (samples or tokens), when that is all
  bool throughput_is_tokens = false;   ///< `throughput` is tokens per second (per GPU where the log says so)
  std::optional<double> loss;          ///< training loss
  /// HF Trainer's `num_input_tokens_seen` (include_num_input_tokens_seen): tokens since training
  /// started, a running count (a resume restores it from the checkpoint)
  std::optional<int64_t> tokens_seen;
  std::string_view timestamp;          ///< the line's own timestamp text ("" when none)
  std::optional<double> unix_time_s;   ///< a numeric Unix timestamp (JSON `_timestamp`), seconds
  std::optional<int> rank;             ///< rank prefix ([rank1]:, [RANK:1], [Rank 1]) when present
};

/// Parses one line (no '\n' or '\r' in it). Unknown lines give Kind::kNone.
StepLine ParseStepLine(std::string_view line);

/// N when `line` starts with torch's "[rankN]:"-style prefix "[rankN]" for a rank N ≥ 1 (another
/// rank's copy of a line, which the analysis skips), else 0. Cheap: most lines of a multi-rank
/// log are such copies, and this lets callers skip them before building a StepLine.
inline int OtherRankPrefix(std::string_view line) {
  if (line.size() < 8 || line[0] != '[' || line.substr(1, 4) != "rank") return 0;
  size_t i = 5;
  int n = 0;
  while (i < line.size() && i < 12 && line[i] >= '0' && line[i] <= '9') n = n * 10 + (line[i++] - '0');
  return i > 5 && i < line.size() && line[i] == ']' ? n : 0;
}

/// Tolerant number parse at the start of `s` (leading spaces and quotes, sign, digits, '.',
/// exponent, nan, inf): true with `*out` set and `*used` (when given) the characters consumed.
/// A bool and an out-parameter, not an optional: an optional<double> returned from out of line
/// is reloaded in pieces (a store-forwarding stall that was most of its cost in profiles).
bool ParseNumberPrefixTo(std::string_view s, double* out, size_t* used);
/// ParseNumberPrefixTo as an optional. Exposed for the CSV readers.
inline std::optional<double> ParseNumberPrefix(std::string_view s, size_t* used = nullptr) {
  double v;
  if (ParseNumberPrefixTo(s, &v, used)) return v;
  return std::nullopt;
}

}  // namespace sparkops
