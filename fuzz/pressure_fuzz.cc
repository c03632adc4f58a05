// ParseMemoryPressureSomeAvg10 (/proc/pressure/memory): a result is a finite percentage.
#include <cmath>

#include "fuzz_util.h"
#include "host/pressure.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto v = sparkops::ParseMemoryPressureSomeAvg10(AsText(data, size));
  if (v) FUZZ_CHECK(std::isfinite(*v) && *v >= 0 && *v <= 100);
  return 0;
}
