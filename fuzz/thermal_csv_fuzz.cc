// analyze's thermal input (analysis/thermal.h ParseThermalCsv): sparkops CSV or nvidia-smi CSV
// with local timestamps; errors name the source.
#include "analysis/thermal.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto zone = sparkops::LocalZone::Make("+05:30");
  if (!zone) std::abort();
  auto s = sparkops::ParseThermalCsv(AsText(data, size), "t.csv", *zone);
  if (s) FUZZ_CHECK(s->interval_ms >= 0);
  else FUZZ_CHECK(s.error().message.find("t.csv") != std::string::npos);
  (void)zone->ParseMillis(AsText(data, size));
  return 0;
}
