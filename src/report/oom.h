#pragma once
/// `sparkops oom`'s output: the OOM found in a log (if one was given) and the ladder, as text or JSON.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/oom_signature.h"
#include "memory/ladder.h"
#include "memory/planner.h"

namespace sparkops {

/// Keys: next_step, why, page_cache_gib (null when not read), steps (LadderStepsJson), oom
/// (OomSignatureJson, null without --log), plan (PlanJson, null without MODEL).
nlohmann::json OomJson(const memory::Ladder& ladder, const std::optional<OomSignature>& sig,
                       const std::optional<memory::Plan>& plan);
/// "log PATH: kind during phase" with the message and the failed allocation (when a log was given),
/// then each ladder step ("->" marks the next one) and "next: step N - why".
std::string OomText(const memory::Ladder& ladder, const std::optional<OomSignature>& sig, const std::string& log);

}  // namespace sparkops
