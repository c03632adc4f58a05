#pragma once
/// The files of a run directory other than the log and the CSV (format: docs/run-directory.md):
/// events.jsonl (one JSON object per line) and meta.json.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace sparkops {

struct RunEvent {
  int64_t t_ms = 0;       ///< `time`, UTC ms
  std::string type;       ///< throttle, slowdown, contention, process_start, process_exit, oom, exit, ...
  nlohmann::json record;  ///< the whole object (details differ per type)

  /// A string field of the record, "" when absent.
  std::string Str(const char* key) const;
};

struct RunMeta {
  std::optional<int64_t> start_ms;
  std::vector<std::string> argv;
  std::optional<int64_t> pid;
  std::string boot_id, host;
  std::optional<double> interval_s;
  std::string plan_args;  ///< `run --plan-args` ("" when not given)
};

/// Pure: parses events.jsonl text; blank lines skipped; a malformed line is an error naming
/// `source` and the line, except a last line without its newline that is not JSON at all: a
/// record whose write was cut short (kill -9 of `run`, power loss), ignored. Sorted by time.
Result<std::vector<RunEvent>> ParseEventsJsonl(std::string_view text, const std::string& source);
Result<RunMeta> ParseRunMeta(std::string_view text, const std::string& source);

}  // namespace sparkops
