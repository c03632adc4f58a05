#include <fmt/format.h>

#include "checks/check.h"
#include "checks/g3_fragmentation.h"

namespace sparkops {

// G3: the pool as the kernel sees it. INFO line; advice about a large page cache goes into the
// evidence (and `sparkops explain G3`), since a reading is not a failure.
CheckResult CheckG3(const HostFacts& f) {
  CheckResult r{"G3", CheckStatus::kInfo, "", {}, ""};
  const auto& mi = f.meminfo();
  if (!mi) {
    r.status = CheckStatus::kSkip;
    r.summary = "cannot read memory: " + mi.error().message;
    return r;
  }
  auto gib = [](std::optional<uint64_t> v) {
    return v ? fmt::format("{:.1f} GiB", ToGiB(*v)) : std::string("not reported");
  };
  r.summary =
      fmt::format("MemTotal {}, MemAvailable {}, MemFree {}, page cache {}, swap {} used of {}", gib(mi->total),
                  gib(mi->available), gib(mi->free), gib(mi->PageCache()), gib(mi->SwapUsed()), gib(mi->swap_total));
  r.summary += "; GPU memory: " + f.GpuMemorySummary();
  r.evidence.push_back("budget against MemAvailable (what the kernel can hand out), not nvidia-smi");
  r.evidence.push_back(fmt::format("MemFree is the `free -g` \"free\" column: {}", gib(mi->free)));
  if (auto pc = mi->PageCache(); pc && mi->total) {
    double share = static_cast<double>(*pc) / static_cast<double>(*mi->total);
    r.evidence.push_back(fmt::format("page cache {} is {:.0f}% of MemTotal", gib(pc), share * 100));
    if (share >= 0.10 && ToGiB(*pc) >= 8.0) {
      r.evidence.push_back(
          "large page cache before a big model load: a safetensors load can OOM while it is held "
          "(G3); drop it between runs with `sparkops flush`");
      r.fix = "sparkops flush   # sync; echo 3 > /proc/sys/vm/drop_caches (root, between runs)";
    }
  }
  // issue 33: fragmentation and pinned/shared memory, each known precursor a WARN.
  UmaPressure pressure = ReadUmaPressure(f.ctx().fs, *mi);
  r.summary += "; " + UmaPressureSummary(pressure);
  for (auto& w : UmaPressureWarnings(pressure, mi->total)) {
    r.status = CheckStatus::kWarn;
    r.evidence.push_back(std::move(w));
  }
  if (mi->hugepages_total && *mi->hugepages_total > 0)
    r.evidence.push_back(
        fmt::format("HugePages_Total {}: hugepage memory is not in MemAvailable", *mi->hugepages_total));
  return r;
}

}  // namespace sparkops
