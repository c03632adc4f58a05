#include "memory/bandwidth.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "memory/accounting.h"

namespace sparkops::memory {

Result<double> DecodeBytesPerParam(std::string_view d) {
  if (d == "bf16" || d == "fp16") return 2.0;
  if (d == "fp8" || d == "int8") return 1.0;
  if (d == "nf4") return kNf4BytesPerParam;
  if (d == "mxfp4") return 4.25 / 8;
  if (d == "fp32") return 4.0;
  return InputError(fmt::format("--dtype '{}': expected bf16|fp16|fp8|int8|nf4|mxfp4|fp32", d));
}

double BytesPerToken(const ModelSpec& s, double bpp) {
  ParamCounts c = CountParams(s);
  double read = double(c.active_block_linear) + double(c.other) + double(s.vocab) * double(s.hidden);
  return read * bpp;
}

std::vector<BandwidthFigure> ReferenceBandwidths() {
  return {{"quoted figure, low (called measured; no source found)", 180},
          {"quoted figure, high (called measured; no source found)", 192},
          {"published measurement, low (antirez/ds4#773, saturating-read kernel)", 231},
          {"published measurement, high (antirez/ds4#773)", 234},
          {"LPDDR5X spec (NVIDIA; not sustained)", 273}};
}

double MeasureReadBandwidth(double seconds) {
  const size_t kBytes = 256u << 20;
  const size_t n = kBytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buf(new uint64_t[n]);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  // First touch from the reading threads (also pages the buffer in).
  auto run = [&](auto body) {
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) ts.emplace_back(body, t);
    for (auto& t : ts) t.join();
  };
  run([&](unsigned t) {
    size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    for (size_t i = lo; i < hi; ++i) buf[i] = i;
  });
  std::atomic<uint64_t> sink{0};
  std::atomic<uint64_t> bytes{0};
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  run([&](unsigned t) {
    size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, done = 0;
    do {
      size_t i = lo;
      for (; i + 4 <= hi; i += 4) s0 += buf[i], s1 += buf[i + 1], s2 += buf[i + 2], s3 += buf[i + 3];
      for (; i < hi; ++i) s0 += buf[i];
      done += (hi - lo) * sizeof(uint64_t);
    } while (std::chrono::steady_clock::now() < deadline);
    sink += s0 + s1 + s2 + s3;
    bytes += done;
  });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (sink.load() == 42) secs += 0;  // keep the sums alive
  return secs > 0 ? double(bytes.load()) / secs / 1e9 : 0;
}

}  // namespace sparkops::memory
