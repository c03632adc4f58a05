#include "checks/check.h"

namespace sparkops {

// G5: the bandwidth budget, as labelled figures (nothing is measured here; `sparkops bandwidth
// --measure` measures, `sparkops bandwidth --model M` turns it into tokens/s).
CheckResult CheckG5(const HostFacts&) {
  CheckResult r{"G5", CheckStatus::kInfo, "", {}, ""};
  r.summary =
      "bandwidth budget 180-192 GB/s (seed; called measured, no source found); published "
      "measurement 231-234 GB/s (antirez ds4#773); 273 GB/s is the LPDDR5x spec, not sustained";
  r.evidence = {
      "seed: budget throughput from 180-192 GB/s, not the 273 GB/s spec",
      "one published GB10 measurement: a saturating-read kernel reached 231-234 GB/s; decode ran at "
      "85-90% of that",
      "per-model decode ceiling: sparkops bandwidth --model MODEL; this machine: sparkops bandwidth --measure",
  };
  r.fix = "plan memory-bound throughput from the measured band, not 273 GB/s";
  return r;
}

}  // namespace sparkops
