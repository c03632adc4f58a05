// The sampler's event decoder (telemetry/event_schema.h DecodeSampleEvent) and events.jsonl's
// records of it (run/run_recorder.h SampleEventRecords): any text is kept, never refused; decoding
// then encoding gives the text back; each event but a kernel_* one becomes one record with a type.
#include "fuzz_util.h"
#include "run/run_recorder.h"
#include "telemetry/event_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = AsText(data, size);
  sparkops::SampleEvent e = sparkops::DecodeSampleEvent(text);
  FUZZ_CHECK(sparkops::EncodeSampleEvent(e) == text);
  FUZZ_CHECK(e.type.find(':') == std::string::npos);
  sparkops::Sample s;
  s.events.emplace_back(text);
  auto recs = sparkops::SampleEventRecords(s);
  // kernel_* events are recorded from their kernel-log records (Sample::kernel), not their text.
  if (text.starts_with("kernel_")) FUZZ_CHECK(recs.empty());
  else FUZZ_CHECK(recs.size() == 1 && recs[0].contains("type"));
  return 0;
}
