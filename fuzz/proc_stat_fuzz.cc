// ParseStat (/proc/PID/stat): no crash; comm is a slice of the input between '(' and the last ')'.
#include "fuzz_util.h"
#include "host/proctable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  auto s = sparkops::ParseStat(text);
  if (s) FUZZ_CHECK(s->comm.size() <= text.size() && text.find(s->comm) != std::string_view::npos);
  return 0;
}
