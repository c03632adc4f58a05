#include "telemetry/event_schema.h"

namespace sparkops {

const std::vector<EventType>& SampleEventTypes() {
  static const std::vector<EventType> kTypes = {
      {"throttle_start", EventDetail::kReasons, "throttle_start:sw_thermal+sw_power_cap", EventSource::kDetector},
      {"throttle_end", EventDetail::kNone, "throttle_end", EventSource::kDetector},
      {"pd_degraded", EventDetail::kNone, "pd_degraded", EventSource::kDetector},
      {"thermal_signature", EventDetail::kNone, "thermal_signature", EventSource::kDetector},
      {"hot", EventDetail::kNone, "hot", EventSource::kDetector},
      {"prochot_on", EventDetail::kNone, "prochot_on", EventSource::kDetector},
      {"prochot_off", EventDetail::kNone, "prochot_off", EventSource::kDetector},
      {"pl_level_change", EventDetail::kText, "pl_level_change:1->2", EventSource::kDetector},
      {"power_delivery_low", EventDetail::kNone, "power_delivery_low", EventSource::kDetector},
      {"missed_slots", EventDetail::kCount, "missed_slots:3", EventSource::kLoop},
      {"rows_lost", EventDetail::kCount, "rows_lost:2", EventSource::kLoop},
      {"cpu_temp_high", EventDetail::kNone, "cpu_temp_high", EventSource::kDetector},
      // kernel-log records (host/kmsg.h), after the sample's other events
      {"kernel_nvrm_no_memory", EventDetail::kNone, "kernel_nvrm_no_memory", EventSource::kKernel},
      {"kernel_xid", EventDetail::kText, "kernel_xid:79", EventSource::kKernel},
      {"kernel_oom_kill", EventDetail::kText, "kernel_oom_kill:4242", EventSource::kKernel},
      {"kernel_hung_task", EventDetail::kNone, "kernel_hung_task", EventSource::kKernel},
      {"kernel_lockup", EventDetail::kNone, "kernel_lockup", EventSource::kKernel},
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
