// ParsePressure (/proc/pressure/memory): every figure read is a finite percentage in 0..100.
#include <cmath>

#include "fuzz_util.h"
#include "host/pressure.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto p = sparkops::ParsePressure(AsText(data, size));
  if (!p) {
    FUZZ_CHECK(!p.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(p->some.has_value());
  for (const auto& l : {p->some, p->full}) {
    if (!l) continue;
    for (double v : {l->avg10, l->avg60, l->avg300}) FUZZ_CHECK(std::isfinite(v) && v >= 0 && v <= 100);
  }
  return 0;
}
