// ParseProcIo (/proc/PID/io): no crash; an accepted text holds both counters, each once; an
// error names what was wrong.
#include "fuzz_util.h"
#include "host/proc_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  auto io = sparkops::ParseProcIo(text);
  if (!io) {
    FUZZ_CHECK(io.error().message.rfind("io: ", 0) == 0);
    return 0;
  }
  FUZZ_CHECK(text.find("read_bytes:") != std::string_view::npos && text.find("write_bytes:") != std::string_view::npos);
  return 0;
}
