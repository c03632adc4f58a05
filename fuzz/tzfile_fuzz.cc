// ParseTzif / ParsePosixTz: no crash, no read past the data, on any bytes; a parsed zone answers
// every instant with an offset within POSIX's bounds (±24 h, DST an hour more).
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
      FUZZ_CHECK(off >= -25 * 3600 && off <= 25 * 3600);  // POSIX: hh up to 24, DST one hour more
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
