// ParseTimestamp: no crash or overflow on any text; what sparkops writes parses back exactly.
#include <fuzzer/FuzzedDataProvider.h>

#include "base/timefmt.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  // Years 1700..2200 (what ParseTimestamp accepts; system_clock's range is about 1678..2262).
  const int64_t ms = in.ConsumeIntegralInRange<int64_t>(-8520336000000LL, 7289654399999LL);
  const auto offset = in.ConsumeIntegralInRange<int64_t>(-14 * 3600, 14 * 3600);
  std::string text = in.ConsumeRemainingBytesAsString();
  (void)sparkops::ParseTimestamp(text);
  (void)sparkops::ParseTimestamp(text, offset);
  const auto t = sparkops::FromUnixMillis(ms);
  const std::string written = sparkops::FormatUtcMillis(t);
  auto back = sparkops::ParseTimestamp(written);
  FUZZ_CHECK(back.has_value() && sparkops::ToUnixMillis(*back) == ms);
  return 0;
}
