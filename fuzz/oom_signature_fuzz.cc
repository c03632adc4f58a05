// ParseOomSignature (OOM text in a log): any text, no crash; figures it states are finite.
#include <cmath>

#include "analysis/oom_signature.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto s = sparkops::ParseOomSignature(AsText(data, size));
  for (auto v : {s.tried_gib, s.total_gib, s.free_gib, s.process_in_use_gib, s.allocated_by_torch_gib,
                 s.reserved_unallocated_gib, s.killed_anon_rss_gib})
    if (v) FUZZ_CHECK(!std::isnan(*v));
  (void)sparkops::ToString(s.kind);
  (void)sparkops::ToString(s.phase);
  return 0;
}
