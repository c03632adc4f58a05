#pragma once
/// The analysis as one self-contained HTML page: a verdict up top, then step time, temperature,
/// power, SM clock and MemAvailable as inline SVG on one shared time axis, slowdowns shaded and
/// labelled. No scripts, no network, no external assets.
#include <string>

#include "analysis/analyze.h"
#include "report/run_memory.h"

namespace sparkops {

/// `memory`: the run's OOM / memory-guard account with the OOM ladder (a card under the verdict), or null.
std::string RenderHtmlReport(const AnalysisResult& r, const RunMemory* memory = nullptr);

}  // namespace sparkops
