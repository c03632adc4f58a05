// The sampler's CSV read back (telemetry/csv_read.h ParseThermalCsv): errors name the file;
// a torn last row is counted, not fatal.
#include "fuzz_util.h"
#include "telemetry/csv_read.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto s = sparkops::ParseThermalCsv(AsText(data, size), std::string_view("thermal.csv"));
  if (s) FUZZ_CHECK(s->torn_rows <= 1);
  else FUZZ_CHECK(s.error().message.find("thermal.csv") != std::string::npos);
  return 0;
}
