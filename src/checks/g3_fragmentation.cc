#include <fmt/format.h>

#include "checks/g3_fragmentation.h"

namespace sparkops {

namespace {
std::string Gib(std::optional<uint64_t> v) { return v ? fmt::format("{:.1f} GiB", ToGiB(*v)) : "not reported"; }
}  // namespace

std::string UmaPressureSummary(const UmaPressure& p) {
  std::string frag = "free 2 MiB/4 MiB blocks not reported";
  if (p.free_2m && p.free_4m)
    frag = fmt::format("free blocks: {} at 2 MiB (order {}), {} at 4 MiB (order {})", *p.free_2m, p.order_2m,
                       *p.free_4m, p.order_4m);
  return fmt::format("{}; Mlocked {}, Unevictable {}, Shmem {}, /dev/shm {}", frag, Gib(p.mlocked), Gib(p.unevictable),
                     Gib(p.shmem),
                     p.shm_size      ? Gib(p.shm_size)
                     : p.shm_default ? "default size (half of RAM)"
                                     : "not reported");
}

std::vector<std::string> UmaPressureWarnings(const UmaPressure& p, std::optional<uint64_t> mem_total) {
  std::vector<std::string> out;
  if (p.free_2m && *p.free_2m == 0)
    out.push_back(fmt::format(
        "no free 2 MiB block (order {} on {} KiB pages) in /proc/buddyinfo: the NVIDIA driver's large allocations "
        "fail with NV_ERR_NO_MEMORY while MemAvailable still counts reclaimable cache (MiaAI-Lab/DeepSeek-v4.1#23); "
        "`sparkops flush` then `echo 1 > /proc/sys/vm/compact_memory` frees contiguous blocks",
        p.order_2m, *p.page_size / 1024));
  else if (p.free_4m && *p.free_4m == 0)
    out.push_back(fmt::format(
        "no free 4 MiB block (order {}) in /proc/buddyinfo: memory is fragmented; the driver's largest allocations "
        "may fail (MiaAI-Lab/DeepSeek-v4.1#23: \"order 10+ ... 0\")",
        p.order_4m));
  auto share = [&](std::optional<uint64_t> v) {
    return v && mem_total && *mem_total ? static_cast<double>(*v) / static_cast<double>(*mem_total) : 0.0;
  };
  if (share(p.mlocked) >= 0.25 || share(p.unevictable) >= 0.25)
    out.push_back(fmt::format(
        "{} Mlocked / {} Unevictable: pinned memory the kernel can neither reclaim nor swap, taken from the pool "
        "the GPU shares (MiaAI-Lab/GLM-5.3#193: 61.5 GiB mlocked shmem)",
        Gib(p.mlocked), Gib(p.unevictable)));
  if (share(p.shmem) >= 0.25)
    out.push_back(fmt::format(
        "Shmem {} (shared memory, /dev/shm and tmpfs): a Docker shm_size of 64gb is half a Spark handed to the "
        "CPU side (AEON-7/vllm-ultimate-dgx-spark#9)",
        Gib(p.shmem)));
  return out;
}

}  // namespace sparkops
