#include "telemetry/event_schema.h"

namespace sparkops {

const std::vector<EventType>& SampleEventTypes() {
  static const std::vector<EventType> kTypes = {
      {"throttle_start", EventDetail::kReasons, "throttle_start:sw_thermal+sw_power_cap"},
      {"throttle_end", EventDetail::kNone, "throttle_end"},
      {"pd_degraded", EventDetail::kNone, "pd_degraded"},
      {"thermal_signature", EventDetail::kNone, "thermal_signature"},
      {"hot", EventDetail::kNone, "hot"},
      {"prochot_on", EventDetail::kNone, "prochot_on"},
      {"prochot_off", EventDetail::kNone, "prochot_off"},
      {"pl_level_change", EventDetail::kText, "pl_level_change:1->2"},
      {"power_delivery_low", EventDetail::kNone, "power_delivery_low"},
      {"missed_slots", EventDetail::kCount, "missed_slots:3"},
      {"rows_lost", EventDetail::kCount, "rows_lost:2"},
      {"cpu_temp_high", EventDetail::kNone, "cpu_temp_high"},
      // kernel-log records (host/kmsg.h), after the sample's other events
      {"kernel_nvrm_no_memory", EventDetail::kNone, "kernel_nvrm_no_memory"},
      {"kernel_xid", EventDetail::kText, "kernel_xid:79"},
      {"kernel_oom_kill", EventDetail::kText, "kernel_oom_kill:4242"},
      {"kernel_hung_task", EventDetail::kNone, "kernel_hung_task"},
      {"kernel_lockup", EventDetail::kNone, "kernel_lockup"},
  };
  return kTypes;
}

EventDetail DetailOf(std::string_view type) {
  for (const EventType& t : SampleEventTypes())
    if (t.name == type) return t.detail;
  return EventDetail::kText;
}

SampleEvent DecodeSampleEvent(std::string_view e) {
  SampleEvent out;
  const size_t colon = e.find(':');
  out.type = std::string(e.substr(0, colon));
  if (colon != std::string_view::npos) {
    out.has_detail = true;
    out.detail = std::string(e.substr(colon + 1));
  }
  return out;
}

std::string EncodeSampleEvent(const SampleEvent& e) { return e.has_detail ? e.type + ":" + e.detail : e.type; }

}  // namespace sparkops
