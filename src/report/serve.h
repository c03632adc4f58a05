#pragma once
/// `plan --serve` and `plan MODEL --beside SPEC` output: the server's footprint, the engine flag and
/// the verdict, as text and JSON (sizes in GiB rounded to 3 decimals; schema: report/plan.h).
#include <ostream>

#include <nlohmann/json.hpp>

#include "memory/serving.h"

namespace sparkops {

/// --serve: {schema, serve{...}, budget_gib, budget_source, mem_total_gib, mem_available_gib, room_gib,
/// verdict}. --beside: the trainer's PlanJson plus "beside": {serve{...}, room_gib, combined_peak_gib,
/// verdict}. serve: engine, model, options, KV layout, components_gib, range, footprint_gib, flag.
nlohmann::json ServePlanJson(const memory::ServePlan& p, const memory::ModelSpec& s);
/// The server's lines; with a trainer, its plan first and the combined verdict after.
void PrintServePlan(std::ostream& out, const memory::ServePlan& p, const memory::ModelSpec& s);

}  // namespace sparkops
