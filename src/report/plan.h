#pragma once
/// `sparkops plan`'s output: the plan as text and as JSON (also plan.json in a run directory and
/// `oom --json`'s "plan"), and `plan --calibrate`'s report. Sizes in GiB, rounded to 3 decimals in JSON.
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/calibrate.h"
#include "memory/planner.h"

namespace sparkops {

/// The version of PlanJson's shape: bumped when a key is renamed or removed or changes meaning
/// (history in docs/memory-model.md, "plan --json schema"). Absent before 3.
inline constexpr int kPlanJsonSchema = 3;

/// Keys: schema, model, options, params, components (GiB), the three peaks with their ranges, load peak,
/// budget, verdict, largest seq/batch that fit, anchor.
nlohmann::json PlanJson(const memory::Plan& p);
/// The plan for a person: options line, components, phases, peaks, widening notes, budget, verdict.
void PrintPlan(std::ostream& out, const memory::Plan& p);
/// `plan --calibrate --json`: [{dir, model, method, measured_gib, measured_what, predicted_gib,
/// predicted_high_gib, residual_gib}].
nlohmann::json CalibrationJson(const std::vector<memory::Calibration>& runs);
/// Per run predicted vs measured, error, and the residual restated per component (what the
/// activations + logits, or the weights, would have to be for the plan to match).
std::string CalibrationReport(const std::vector<memory::Calibration>& runs);

}  // namespace sparkops
