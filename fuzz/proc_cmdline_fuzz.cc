// ParseCmdline / ParseEnviron (/proc/PID/{cmdline,environ}): no crash; words and keys carry no
// NUL; every environment key came with '='.
#include "fuzz_util.h"
#include "host/proctable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  size_t total = 0;
  for (const auto& w : sparkops::ParseCmdline(text)) {
    FUZZ_CHECK(w.find('\0') == std::string::npos);
    total += w.size();
  }
  FUZZ_CHECK(total <= text.size());
  for (const auto& [k, v] : sparkops::ParseEnviron(text)) {
    FUZZ_CHECK(k.find('\0') == std::string::npos && v.find('\0') == std::string::npos);
    FUZZ_CHECK(text.find(k + "=" + v) != std::string_view::npos);
  }
  return 0;
}
