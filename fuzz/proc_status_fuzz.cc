// ParseStatus (/proc/PID/status): no crash; a parsed status has a name.
#include "fuzz_util.h"
#include "host/proctable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto s = sparkops::ParseStatus(AsText(data, size));
  if (!s) FUZZ_CHECK(!s.error().message.empty());
  return 0;
}
