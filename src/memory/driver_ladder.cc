#include <fmt/format.h>

#include "host/dropcaches.h"
#include "memory/ladder.h"

namespace sparkops::memory {
namespace {

constexpr double kWorthFlushingGiB = 1.0;  ///< the OOM ladder's own threshold (ladder.cc)

std::string FlushDetail(const PageCacheReading& cache, const DriverStopFacts& f) {
  const bool frag = f.kind == LadderKind::kFragmentation;
  if (!cache.gib)
    return "page cache not reported: flush (`sudo sparkops flush`) only if `free -g` shows buff/cache that would "
           "lift MemAvailable; it does not clear the driver's error";
  const auto counted = cache.AvailableLift();  // MemAvailable already counts most of the cache
  const double gain = counted ? *counted : *cache.gib;
  if (gain < kWorthFlushingGiB)
    return fmt::format(
        "{} {:.1f} GiB of page cache {} reclaimable {}{}: a flush would not lift MemAvailable, skip it{}",
        counted ? "" : "only", *cache.gib, cache.when == "now" ? "is" : "was", cache.when,
        counted ? fmt::format(" and MemAvailable already counted all but {:.1f} GiB of it", *counted) : "",
        frag ? "; `echo 1 | sudo tee /proc/sys/vm/compact_memory` asks the kernel to rebuild large free blocks" : "");
  std::string lift = f.lowest_available_gib
                         ? fmt::format(" (MemAvailable at its lowest {:.1f} GiB -> about {:.1f} GiB)",
                                       *f.lowest_available_gib, *f.lowest_available_gib + gain)
                         : std::string();
  return fmt::format(
      "{:.1f} GiB of page cache {} reclaimable {}: a flush would lift MemAvailable{}; `sudo sparkops flush` "
      "(sync; echo 3 > {}) between runs, after the reboot check - it does not clear the driver's error{}",
      *cache.gib, cache.when == "now" ? "is" : "was", cache.when, lift, kDropCachesPath,
      frag ? "; freed pages also let the kernel rebuild large free blocks (and `echo 1 | sudo tee "
             "/proc/sys/vm/compact_memory` compacts)"
           : "");
}

}  // namespace

const char* ToString(LadderKind k) {
  switch (k) {
    case LadderKind::kDriverNoMemory: return "driver_error";
    case LadderKind::kFragmentation: return "fragmentation";
    case LadderKind::kOom: break;
  }
  return "oom";
}

Ladder BuildDriverErrorLadder(const PageCacheReading& cache, const DriverStopFacts& f,
                              const std::optional<Plan>& plan) {
  const bool frag = f.kind == LadderKind::kFragmentation;
  Ladder l;
  l.kind = frag ? LadderKind::kFragmentation : LadderKind::kDriverNoMemory;
  l.page_cache_gib = cache.gib;
  l.steps.push_back(
      {1, "save and stop: the host may wedge",
       frag ? "the driver's large allocations need free 2 MiB blocks and there were none while the job grew: its "
              "next allocation can fail with NVRM NV_ERR_NO_MEMORY, and on GB10 a silent whole-host wedge has "
              "followed that within minutes (NVIDIA/open-gpu-kernel-modules #1358); save what is unsaved and stop "
              "other GPU work on this host now"
            : "the driver could not get memory for the GPU (NVRM NV_ERR_NO_MEMORY); on GB10 a silent whole-host "
              "wedge has followed within minutes, with no OOM kill and no panic (NVIDIA/open-gpu-kernel-modules "
              "#1358): save what is unsaved and stop other GPU work on this host now"});
  l.steps.push_back({2, "reboot before the next run if the kernel log repeats the record",
                     "`sudo dmesg | grep -E 'NV_ERR_NO_MEMORY|Xid'` (or `sparkops preflight`, G11): a new record "
                     "after the job is gone means the driver has not recovered - reboot before starting again"});
  std::string reduce =
      "the OOM ladder's steps 2-4: gradient checkpointing, shorter packing, a smaller batch, a "
      "lighter method, a smaller model or two Sparks";
  if (plan) {
    const Ladder oom = BuildLadder(cache, plan, std::nullopt);
    for (const auto& s : oom.steps)
      if (s.number == std::max(2, oom.next)) reduce += fmt::format("; from the plan: {} - {}", s.title, s.detail);
  } else reduce += " (give `run --plan-args` for the figures)";
  l.steps.push_back({3, "reduce the job's memory", reduce});
  l.steps.push_back({4, "flush the page cache only if it would lift MemAvailable", FlushDetail(cache, f)});
  l.next = 1;
  l.why_next = frag ? "no free 2 MiB blocks while the job grew is the driver's no-memory failure coming: the host "
                      "may wedge, so save and stop first; the OOM ladder's flush is not the first step"
                    : "a driver no-memory record (NVRM NV_ERR_NO_MEMORY) means the host itself may wedge: save and "
                      "stop first; the OOM ladder's flush is not the first step";
  return l;
}

}  // namespace sparkops::memory
