#pragma once
/// The sampler's events (the CSV `event` cell, stderr, events.jsonl) as one table: each type and
/// what its detail after the colon is. One encoder and one decoder for `name[:detail]`; a name not
/// in the table, or any free text, is kept as text, never refused. Rules: telemetry/events.h.
#include <string>
#include <string_view>
#include <vector>

namespace sparkops {

enum class EventDetail {
  kNone,     ///< a bare name: `pd_degraded`
  kReasons,  ///< "+"-joined throttle reasons: `throttle_start:sw_thermal+sw_power_cap`
  kCount,    ///< a count: `missed_slots:3` (events.jsonl `count`)
  kText,     ///< text kept as it is: `pl_level_change:1->2` (events.jsonl `detail`)
};

/// Who emits an event type: the EventDetector (from a series of samples: `sample`, `run` and the
/// exporter's sparkops_sampler_events_total), the sampling loop (`sample` and `run` only), or the
/// kernel log (host/kmsg.h; the exporter counts those since boot in sparkops_kernel_events_total).
enum class EventSource { kDetector, kLoop, kKernel };

struct EventType {
  std::string_view name;
  EventDetail detail;
  std::string_view example;  ///< a whole event of this type, for tests and docs
  EventSource source;
};

/// Every event the sampler and `run` emit, in docs/telemetry.md's order.
const std::vector<EventType>& SampleEventTypes();
/// The detail kind of `type`; kText for a type not in the table.
EventDetail DetailOf(std::string_view type);

struct SampleEvent {
  std::string type;
  std::string detail;       ///< "" when there is none
  bool has_detail = false;  ///< a colon followed the name
};

/// Pure: "name:detail" (split at the first colon) or "name".
SampleEvent DecodeSampleEvent(std::string_view e);
/// The inverse of DecodeSampleEvent.
std::string EncodeSampleEvent(const SampleEvent& e);

}  // namespace sparkops
