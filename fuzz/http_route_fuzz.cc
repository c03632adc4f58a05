// The exporter's HTTP side: Route (method, path) and ParseListenAddress. Route answers only
// 200/404/405, calls the metrics renderer only for GET/HEAD /metrics, and never serves a write.
#include <fuzzer/FuzzedDataProvider.h>

#include "exporter/server.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string method = in.ConsumeRandomLengthString(16);
  const std::string path = in.ConsumeRandomLengthString(256);
  const std::string listen = in.ConsumeRemainingBytesAsString();
  bool called = false;
  auto r = sparkops::Route(method, path, [&] {
    called = true;
    return std::string("m 1\n");
  });
  FUZZ_CHECK(r.status == 200 || r.status == 404 || r.status == 405);
  const bool read = method == "GET" || method == "HEAD";
  if (called) FUZZ_CHECK(read && path == "/metrics");
  if (!read) FUZZ_CHECK(r.status != 200);
  if (r.status == 405) FUZZ_CHECK(!r.allow.empty());
  if (auto a = sparkops::ParseListenAddress(listen)) {
    FUZZ_CHECK(a->port >= 0 && a->port <= 65535);
    FUZZ_CHECK(!a->host.empty());
  }
  return 0;
}
