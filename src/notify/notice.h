#pragma once
/// What `run --notify` / `--notify-cmd` deliver (docs/notify.md): which events.jsonl records are
/// told (one table), the one readable line each becomes, and the versioned JSON object
/// (`sparkops.notify/1`) sent per event. Pure but for the filter's memory of what it let through.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sparkops {

inline constexpr std::string_view kNotifySchema = "sparkops.notify/1";

/// The run an event belongs to, as every notice names it.
struct NoticeContext {
  std::string host;     ///< the machine's host name
  std::string run_dir;  ///< the run directory
  std::string job;      ///< the job's command line (argv joined by spaces)
};

/// One event to tell: its name (`exit`, `memory_guard`, `throttle_start`, `kernel_xid`, ...) and
/// the whole JSON object to send, as one line of text (NoticeJson's).
struct Notice {
  std::string event;
  std::string text;
  std::string body;
};

/// A notified event type: a type of events.jsonl (`throttle` with state start is `throttle_start`)
/// and whether it is told at most once per kRateLimit (a flood of one kind is told once).
struct NotifiedType {
  std::string_view event;
  bool rate_limited;
  std::string_view why;  ///< for docs/notify.md
};
inline constexpr std::chrono::seconds kRateLimit{600};

/// Every event that is told, in docs/notify.md's order.
const std::vector<NotifiedType>& NotifiedTypes();

/// The one readable line for `event` made of `record` (its events.jsonl fields) (pure).
/// `oom`: the OOM signature recorded just before an `exit`, if any.
std::string NoticeText(std::string_view event, const nlohmann::ordered_json& record, const NoticeContext& ctx,
                       const std::string& oom = "");

/// The JSON object sent (pure): schema, event, time, run_dir, host (absent when unknown), job, text, then the record's
/// own fields (a field named like one of these is left out).
nlohmann::ordered_json NoticeJson(std::string_view event, const std::string& text, const nlohmann::ordered_json& record,
                                  const NoticeContext& ctx);

/// Chooses the records to tell from the stream of events.jsonl records, in order.
class NoticeFilter {
 public:
  explicit NoticeFilter(NoticeContext ctx) : ctx_(std::move(ctx)) {}
  /// The notice for `record`, or nullopt when it is not told (not in the table, a guard flush, a
  /// throttle end, or a rate-limited type already told less than kRateLimit before `now`).
  std::optional<Notice> Select(const nlohmann::ordered_json& record, std::chrono::steady_clock::time_point now);

 private:
  NoticeContext ctx_;
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> last_;
  std::string oom_;  ///< the signature of an `oom` record, told with the `exit` after it
};

}  // namespace sparkops
