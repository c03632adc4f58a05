#pragma once
/// `sparkops ps` output: a text table (children grouped under their server or launcher) and a
/// JSON document. Absent figures are "not reported" in text and omitted keys in JSON.
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/workload.h"

namespace sparkops {

/// The table, the per-workload detail lines, and the footer (the verdict rule against MemTotal,
/// where GPU memory comes from, and that RSS and GPU memory overlap on unified memory).
std::string RenderWorkloadsText(const WorkloadScan& scan);
/// {"mem_total_bytes", "gpu_source", "notes": [...], "workloads": [{pid, kind, ..., children: [...]}]}
nlohmann::ordered_json WorkloadsToJson(const WorkloadScan& scan);
/// One workload as JSON (an element of `ps --json`'s "workloads").
nlohmann::ordered_json WorkloadToJson(const Workload& w);

}  // namespace sparkops
