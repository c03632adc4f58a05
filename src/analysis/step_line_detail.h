#pragma once
/// Internals of ParseStepLine: one parser per framework family (step_formats.cc). Each takes the
/// line with logging prefixes stripped and fills the partly filled result (timestamp, rank) in
/// place (StepLine is ~150 bytes: passing it by value showed up in profiles).
#include <cstdint>
#include <optional>
#include <string_view>

#include "analysis/step_line.h"
#include "base/strings.h"

namespace sparkops::detail {

std::optional<double> NumberAfter(std::string_view s, std::string_view key, size_t* end = nullptr);
std::optional<double> GroupedNumberAfter(std::string_view s, std::string_view key);
std::optional<int64_t> IntAt(std::string_view s, size_t* pos);
/// Substring search via memmem (fast on text full of the needle's first letter); npos if absent.
size_t Find(std::string_view s, std::string_view needle, size_t from = 0);
/// Position of the first "step" (npos if none).
size_t FindStep(std::string_view s);
/// Position of the tqdm rate unit ("it/s" or "s/it", whichever comes first); sets *per_it for s/it.
size_t FindRateUnit(std::string_view s, bool* per_it);
/// Length of a "YYYY-MM-DD hh:mm:ss[,mmm]" timestamp at s[pos], 0 when there is none.
size_t TimestampLength(std::string_view s, size_t pos);
std::string_view StripPrefixes(std::string_view s, StepLine* out);

void ParseHfDict(std::string_view s, StepLine& r);            ///< {'loss': 2.1, ...}
void ParseJsonMetrics(std::string_view s, StepLine& r);       ///< {"step": 3, "loss": ...}
void ParseNanoGpt(std::string_view s, StepLine& r);           ///< iter N: loss X, time Yms
void ParseTorchtuneStep(std::string_view s, StepLine& r);     ///< Step N | loss:X ...
/// tqdm bars (HF, Lightning, torchtune); `unit`/`per_it`: FindRateUnit(s) (npos when none).
void ParseTqdm(std::string_view s, size_t unit, bool per_it, StepLine& r);
void ParseTorchtitan(std::string_view s, StepLine& r);        ///< step: N loss: X ... tps: N
void ParseMegatron(std::string_view s, StepLine& r);          ///< iteration N/ M | elapsed ...
void ParseDeepSpeed(std::string_view s, StepLine& r);         ///< global_step=N, ...SamplesPerSec
void ParseMarker(std::string_view s, StepLine& r);            ///< eval / checkpoint banners

}  // namespace sparkops::detail
