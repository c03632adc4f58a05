#pragma once
/// /proc/meminfo: the pool a Spark's CPU and GPU share. Budget against MemAvailable, not
/// nvidia-smi (GB10 reports no GPU memory total). Values in bytes; a field the kernel does not
/// print stays absent.
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

struct MemInfo {
  std::optional<uint64_t> total, free, available, buffers, cached, swap_cached, shmem, sreclaimable, swap_total,
      swap_free, hugepages_total, hugepages_free, hugepage_size,
      mlocked;  ///< Mlocked: pinned pages (cudaHostAlloc, mlock), not reclaimable

  /// Page cache that drop_caches can reclaim: Cached + Buffers - Shmem (bytes), if all known.
  std::optional<uint64_t> PageCache() const;
  /// SwapTotal - SwapFree (bytes).
  std::optional<uint64_t> SwapUsed() const;
};

/// Pure: parses the text of /proc/meminfo. Error when MemTotal is missing or a line is malformed.
Result<MemInfo> ParseMemInfo(std::string_view text);
/// Reads `/proc/meminfo` under the HostFs root.
Result<MemInfo> ReadMemInfo(const HostFs& fs);

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline double ToGiB(uint64_t bytes) { return static_cast<double>(bytes) / kGiB; }

}  // namespace sparkops
