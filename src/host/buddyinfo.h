#pragma once
/// /proc/buddyinfo: free blocks per allocation order per memory zone. The NVIDIA driver's large
/// allocations need physically contiguous blocks; on GB10 they fail (`NV_ERR_NO_MEMORY`) when no
/// block is free at the order they need, even while MemAvailable counts gigabytes of reclaimable
/// cache. Also the size of /dev/shm from /proc/mounts.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/hostfs.h"
#include "host/meminfo.h"

namespace sparkops {

struct BuddyZone {
  int node = 0;
  std::string zone;             ///< "DMA", "DMA32", "Normal", "Movable"
  std::vector<uint64_t> free;   ///< free[k]: free blocks of 2^k pages (at most 16 orders kept)
};

/// Pure: parses /proc/buddyinfo (`Node 0, zone   Normal  12  8  3 ...`). Input error naming the line.
Result<std::vector<BuddyZone>> ParseBuddyInfo(std::string_view text);
/// Reads /proc/buddyinfo under the HostFs root.
Result<std::vector<BuddyZone>> ReadBuddyInfo(const HostFs& fs);

/// The base page size implied by the kernel's huge page size (a PMD maps page/8 entries of a page
/// each: 2 MiB -> 4 KiB, 32 MiB -> 16 KiB, 512 MiB -> 64 KiB). Absent for any other value.
std::optional<uint64_t> PageSizeFromHugepage(uint64_t hugepage_bytes);
/// The buddy order whose block holds `bytes` on pages of `page_size` (2 MiB on 4 KiB pages: 9).
int OrderFor(uint64_t bytes, uint64_t page_size);
/// Blocks of order `order` that the free lists could hand out now without compaction: every free
/// block at that order or above, counted in blocks of that order, over all zones (saturating).
uint64_t FreeBlocksAtOrder(const std::vector<BuddyZone>& zones, int order);

/// Pure: the size of the tmpfs mounted on /dev/shm in /proc/mounts text, in bytes. Absent when not
/// mounted or mounted without `size=` (the kernel default: half of RAM).
std::optional<uint64_t> ShmSizeFromMounts(std::string_view mounts, bool* mounted = nullptr);

/// /proc/meminfo fields that MemInfo does not keep (bytes; absent when the kernel does not print them).
struct MemInfoExtras {
  std::optional<uint64_t> mlocked, unevictable, cma_total;
};
/// Pure: Mlocked, Unevictable and CmaTotal from /proc/meminfo text (malformed values stay absent).
MemInfoExtras ParseMemInfoExtras(std::string_view text);
MemInfoExtras ReadMemInfoExtras(const HostFs& fs);

/// Fragmentation and pinned memory, read by G3, sample/run and the exporter.
struct UmaPressure {
  std::optional<uint64_t> page_size;          ///< bytes, from Hugepagesize
  int order_2m = 0, order_4m = 0;             ///< buddy orders of 2 MiB and 4 MiB on that page size
  std::optional<uint64_t> free_2m, free_4m;   ///< free blocks of that size, all zones
  std::optional<uint64_t> mlocked, unevictable, shmem, shm_size;  ///< bytes
  bool shm_default = false;  ///< /dev/shm is mounted without size= (the kernel default: half of RAM)
};

/// Reads buddyinfo and /proc/mounts under the root; the rest comes from `mi`.
UmaPressure ReadUmaPressure(const HostFs& fs, const MemInfo& mi);
}  // namespace sparkops
