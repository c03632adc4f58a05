#include "analysis/run_dir.h"

#include <algorithm>

#include "base/json_parse.h"
#include "base/strings.h"
#include "base/timefmt.h"

namespace sparkops {

std::string RunEvent::Str(const char* key) const {
  auto it = record.find(key);
  if (it == record.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_null()) return "";
  return it->dump();
}

Result<std::vector<RunEvent>> ParseEventsJsonl(std::string_view text, const std::string& source) {
  std::vector<RunEvent> out;
  const auto lines = SplitLines(text);
  const bool unterminated = !text.empty() && text.back() != '\n';
  size_t n = 0;
  for (std::string_view line : lines) {
    ++n;
    if (Trim(line).empty()) continue;
    auto where = source + ":" + std::to_string(n);
    auto j = ParseJsonOrDiscarded(line);
    if (j.is_discarded() && unterminated && n == lines.size()) break;  // a torn last record: ignored
    if (!j.is_object()) return InputError(where + ": not a JSON object");
    auto t = j.find("time");
    auto ty = j.find("type");
    if (t == j.end() || !t->is_string()) return InputError(where + ": field `time` missing or not a string");
    if (ty == j.end() || !ty->is_string()) return InputError(where + ": field `type` missing or not a string");
    auto ts = ParseTimestamp(t->get<std::string>());
    if (!ts) return InputError(where + ": field `time`: '" + t->get<std::string>() + "' is not a timestamp");
    out.push_back(RunEvent{ToUnixMillis(*ts), ty->get<std::string>(), std::move(j)});
  }
  std::stable_sort(out.begin(), out.end(), [](const RunEvent& a, const RunEvent& b) { return a.t_ms < b.t_ms; });
  return out;
}

Result<RunMeta> ParseRunMeta(std::string_view text, const std::string& source) {
  auto j = ParseJsonOrDiscarded(text);
  if (!j.is_object()) return InputError(source + ": not a JSON object");
  RunMeta m;
  if (auto it = j.find("start_time"); it != j.end()) {
    if (!it->is_string()) return InputError(source + ": field `start_time` is not a string");
    auto ts = ParseTimestamp(it->get<std::string>());
    if (!ts) return InputError(source + ": field `start_time`: not a timestamp");
    m.start_ms = ToUnixMillis(*ts);
  }
  if (auto it = j.find("argv"); it != j.end() && it->is_array())
    for (auto& a : *it)
      if (a.is_string()) m.argv.push_back(a.get<std::string>());
  if (auto it = j.find("pid"); it != j.end() && it->is_number_integer()) m.pid = it->get<int64_t>();
  if (auto it = j.find("boot_id"); it != j.end() && it->is_string()) m.boot_id = it->get<std::string>();
  if (auto it = j.find("host"); it != j.end() && it->is_string()) m.host = it->get<std::string>();
  if (auto it = j.find("interval_s"); it != j.end() && it->is_number()) m.interval_s = it->get<double>();
  if (auto it = j.find("plan_args"); it != j.end() && it->is_string()) m.plan_args = it->get<std::string>();
  return m;
}

}  // namespace sparkops
