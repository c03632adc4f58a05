#include "analysis/attempts.h"

#include <algorithm>

namespace sparkops {

namespace {

std::optional<int64_t> Int(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::optional<double> Num(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

/// The time of the first step at or after `from` (kNoTime when none).
int64_t FirstStepFrom(const StepSeries& s, int64_t from) {
  for (const StepPoint& p : s.points)
    if (p.t_ms != kNoTime && p.t_ms >= from) return p.t_ms;
  return kNoTime;
}

}  // namespace

std::vector<RunAttempt> ReadAttempts(const std::vector<RunEvent>& events, const StepSeries& series) {
  std::vector<RunAttempt> out;
  for (const RunEvent& e : events) {
    if (e.type == "attempt_start") {
      RunAttempt a;
      a.number = static_cast<int>(Int(e.record, "attempt").value_or(static_cast<int64_t>(out.size()) + 1));
      a.pid = Int(e.record, "pid");
      a.start_ms = e.t_ms;
      out.push_back(std::move(a));
      continue;
    }
    if (out.empty() || out.back().end_ms != kNoTime) continue;
    if (e.type != "restart" && e.type != "exit") continue;
    RunAttempt& a = out.back();
    a.end_ms = e.t_ms;
    a.code = Int(e.record, "code");
    a.signal = e.Str("signal");
    a.reason = e.Str("reason");
    if (e.type == "restart") a.backoff_s = Num(e.record, "backoff_s");
  }
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    RunAttempt& a = out[i];
    if (a.end_ms == kNoTime) continue;
    int64_t resumed = FirstStepFrom(series, out[i + 1].start_ms);
    if (resumed == kNoTime) resumed = out[i + 1].start_ms;  // the next attempt printed no step
    if (i + 2 < out.size() && resumed > out[i + 2].start_ms) resumed = out[i + 1].start_ms;  // its step came later
    a.lost_s = static_cast<double>(std::max<int64_t>(0, resumed - a.end_ms)) / 1000.0;
  }
  return out;
}

std::span<const RunEvent> LastAttemptEvents(const std::vector<RunEvent>& events) {
  size_t from = 0;
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].type == "attempt_start") from = i;
  return std::span<const RunEvent>(events).subspan(from);
}

}  // namespace sparkops
