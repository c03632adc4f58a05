// ParseNumberFlag: any text either fails or gives a finite value inside the range it was given.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>

#include "base/number_flag.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  sparkops::NumberRange r;
  r.min = in.ConsumeFloatingPointInRange<double>(-1e9, 1e9);
  r.max = r.min + in.ConsumeFloatingPointInRange<double>(0, 1e12);
  r.min_exclusive = in.ConsumeBool();
  r.integer = in.ConsumeBool();
  std::string text = in.ConsumeRemainingBytesAsString();
  if (auto v = sparkops::ParseNumberFlag("--x", text, r)) {
    FUZZ_CHECK(std::isfinite(*v));
    FUZZ_CHECK(r.min_exclusive ? *v > r.min : *v >= r.min);
    FUZZ_CHECK(*v <= r.max);
    if (r.integer) FUZZ_CHECK(*v == std::floor(*v));
  }
  return 0;
}
