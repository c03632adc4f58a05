#pragma once
/// The energy of a run (issue 37, analysis/energy.h) in `analyze`'s text, JSON (and so
/// summary.json) and the HTML report.
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/analyze.h"

namespace sparkops {

/// "energy   12.34 Wh (system: integral of sys_power_w (spbm)); GPU 8.10 Wh (nvml energy counter);
/// over 3600 s; 0.0123 Wh/step over 1000 steps; cost 0.0037 at 0.30/kWh\n", or a line saying why
/// there is none. "" without a thermal CSV (the thermal line says so).
std::string EnergyText(const AnalysisResult& r);
/// The same figures without the "energy   " label and line end (the HTML report's line); "" likewise.
std::string EnergySentence(const AnalysisResult& r);
/// What one slowdown cost (SlowdownEvent::energy, analysis/energy.h): "8.2 Wh over its 41 steps,
/// +4.1 Wh against the baseline's 0.1 Wh/step"; "" when absent. analyze's text and the HTML report.
std::string SlowdownEnergySentence(const SlowdownEvent& e);
/// {"energy_wh", "scope", "source", "gpu_wh", "gpu_source", "system_wh", "system_source", "seconds",
/// "steps", "wh_per_step", "tokens", "tokens_source", "wh_per_1k_tokens", "price_per_kwh", "cost"} (absent figures
/// omitted), or null.
nlohmann::json EnergyJson(const AnalysisResult& r);

}  // namespace sparkops
