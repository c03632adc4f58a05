#include <fmt/format.h>

#include "checks/check.h"
#include "checks/python_common.h"

namespace sparkops {

// G5: the bandwidth budget, as labelled figures (nothing is measured here; `sparkops bandwidth
// --measure` measures, `sparkops bandwidth --model M` turns it into tokens/s). The figures are
// GB10's LPDDR5x pool: on a GPU with memory of its own they do not apply and G5 says so.
CheckResult CheckG5(const HostFacts& f) {
  CheckResult r{"G5", CheckStatus::kInfo, "", {}, ""};
  const GpuSnapshot& snap = f.gpu();
  auto cc = ComputeCapability(f);
  if (snap.any() && cc && *cc != std::pair{12, 1} && !snap.gpus[0].unified_memory) {
    const GpuReading& g = snap.gpus[0];
    r.status = CheckStatus::kSkip;
    r.summary = fmt::format(
        "{} (compute capability {}.{}) has memory of its own{}: GB10's LPDDR5x budget "
        "(180-192 GB/s) does not apply",
        g.name.empty() ? "this GPU" : g.name, cc->first, cc->second,
        g.mem_total_bytes ? fmt::format(" ({:.1f} GiB)", static_cast<double>(*g.mem_total_bytes) / (1u << 30))
                          : std::string());
    r.evidence = {fmt::format("read through {}", snap.source),
                  "the budget is for the Spark's one 128 GB pool shared by CPU and GPU; a discrete card's "
                  "bandwidth is its own memory's (datasheet)"};
    return r;
  }
  r.summary =
      "bandwidth budget 180-192 GB/s (widely quoted as measured; no source found); published "
      "measurement 231-234 GB/s (antirez ds4#773); 273 GB/s is the LPDDR5x spec, not sustained";
  r.evidence = {
      "budget throughput from 180-192 GB/s, not the 273 GB/s spec",
      "one published GB10 measurement: a saturating-read kernel reached 231-234 GB/s; decode ran at "
      "85-90% of that",
      "per-model decode ceiling: sparkops bandwidth --model MODEL; this machine: sparkops bandwidth --measure",
  };
  r.fix = "plan memory-bound throughput from the measured band, not 273 GB/s";
  return r;
}

}  // namespace sparkops
