#pragma once
/// JSON read from files sparkops does not control (config.json, safetensors headers and indexes,
/// plan/peak/meta JSON, guard ledgers, events.jsonl lines, DeepSpeed configs). nlohmann's DOM costs
/// ~80 bytes per nesting level, so an 8 MB header of `[` would take ~600 MB: every such document is
/// parsed here, through a SAX pass that stops at the first array or object nested deeper than
/// `max_depth`, before that level's DOM is built. Peak memory is then bounded by the text's size
/// times a small constant, never by its nesting.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace sparkops {

/// The deepest nesting of arrays and objects any file sparkops reads needs (HF configs nest 3-4).
inline constexpr int kMaxJsonDepth = 64;

/// One JSON document (the whole of `text`, strict). Errors (kInput) say what is wrong and at which
/// byte, without a file name ("nested deeper than 64 levels at byte 65", "not valid JSON at byte 3:
/// ..."): the caller prefixes its file. Never throws.
Result<nlohmann::json> ParseJson(std::string_view text, int max_depth = kMaxJsonDepth);

/// ParseJson, a discarded value on any failure: for callers that only ask is_object().
nlohmann::json ParseJsonOrDiscarded(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace sparkops
