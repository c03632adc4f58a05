#pragma once
/// `sparkops preflight`'s output: one line per check, or one JSON object per check.
#include <string>

#include <nlohmann/json.hpp>

#include "checks/check.h"

namespace sparkops {

/// `G3 INFO: reading` for raw readings, `G1 PASS reason` otherwise.
std::string CheckLine(const CheckResult& r);
/// {"id", "status", "summary", "evidence": [...], "fix"}.
nlohmann::ordered_json CheckJson(const CheckResult& r);

}  // namespace sparkops
