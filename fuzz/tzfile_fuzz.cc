// ParseTzif / ParsePosixTz: no crash, no read past the data, on any bytes; a parsed zone answers
// every instant with an offset under a day.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_util.h"
#include "host/tzfile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int64_t t = in.ConsumeIntegralInRange<int64_t>(-8520336000LL, 7289654399LL);  // years 1700..2200
  const bool posix = in.ConsumeBool();
  std::string text = in.ConsumeRemainingBytesAsString();
  if (posix) {
    if (auto z = sparkops::ParsePosixTz(text)) {
      int64_t off = z->OffsetAtUtc(t);
      FUZZ_CHECK(off > -86400 && off < 86400);
    }
    return 0;
  }
  if (auto z = sparkops::ParseTzif(text, "fuzz")) {
    int64_t a = z->OffsetAtUtc(t), b = z->OffsetForLocal(t);
    FUZZ_CHECK(a > -(int64_t{1} << 32) && a < (int64_t{1} << 32));  // int32 offsets from the file
    (void)b;
  }
  return 0;
}
