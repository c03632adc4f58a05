// LineSplitter (train.log records): records never exceed max_line nor hold a terminator, no byte
// is lost or invented, and how the stream is chunked does not change the records.
#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <vector>

#include "fuzz_util.h"
#include "telemetry/line_splitter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const size_t max_line = in.ConsumeIntegralInRange<size_t>(1, 64);
  const std::string stream = in.ConsumeRemainingBytesAsString();

  auto split = [&](size_t chunk) {
    std::vector<std::string> recs;
    auto emit = [&](std::string_view r) { recs.emplace_back(r); };
    sparkops::LineSplitter sp(max_line);
    for (size_t i = 0; i < stream.size(); i += chunk) sp.Feed(std::string_view(stream).substr(i, chunk), emit);
    sp.Finish(emit);
    return recs;
  };
  const auto whole = split(stream.size() + 1);
  size_t kept = 0;
  for (const auto& r : whole) {
    FUZZ_CHECK(r.size() <= max_line);
    FUZZ_CHECK(r.find('\n') == std::string::npos && r.find('\r') == std::string::npos);
    kept += r.size();
  }
  size_t terminators = 0;
  for (char c : stream) terminators += c == '\n' || c == '\r';
  FUZZ_CHECK(kept + terminators == stream.size());
  FUZZ_CHECK(split(1) == whole);
  FUZZ_CHECK(split(7) == whole);
  return 0;
}
