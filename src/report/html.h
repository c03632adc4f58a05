#pragma once
/// The analysis as one self-contained HTML page: a verdict up top, then step time, temperature,
/// power, SM clock and MemAvailable as inline SVG on one shared time axis, slowdowns shaded and
/// labelled. No scripts, no network, no external assets.
#include <string>

#include "analysis/analyze.h"

namespace sparkops {

std::string RenderHtmlReport(const AnalysisResult& r);

}  // namespace sparkops
