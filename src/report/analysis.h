#pragma once
/// Text and JSON renderings of an analysis (the HTML one is src/report/html.h).
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/analyze.h"

namespace sparkops {

std::string RenderAnalysisText(const AnalysisResult& r);
/// Keys: log, thermal, baseline, events [{start, end, start_step, end_step, ratio, cause,
/// recovered, evidence, ruled_out, also}], spikes_ignored, end, verdict.
nlohmann::json RenderAnalysisJson(const AnalysisResult& r);

/// "12:03:04Z"-style short time, or "—" for kNoTime.
std::string ShortTime(int64_t t_ms);

}  // namespace sparkops
