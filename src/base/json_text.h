#pragma once
/// JSON text for output and files. Text read from the machine (process command lines, paths,
/// package metadata, log lines) need not be UTF-8; nlohmann's dump() throws on such bytes, so
/// every JSON document sparkops writes goes through here.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace sparkops {

/// `j` (json or ordered_json) as text, `indent` < 0: one line. Bytes that are not UTF-8 become
/// U+FFFD; never throws.
template <class Json>
std::string JsonText(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

/// `v` as a JSON value (json or ordered_json), null when absent: a value the machine did not
/// report is null, never 0.
template <class Json = nlohmann::json, class T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}

}  // namespace sparkops
