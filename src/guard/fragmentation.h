#pragma once
/// The guard's fragmentation trigger (issue 33). The NVIDIA driver's large allocations need physically
/// contiguous 2 MiB blocks; on GB10 they fail with NVRM NV_ERR_NO_MEMORY (and the host may wedge) when
/// no such block is free, even while MemAvailable still counts gigabytes of reclaimable cache. The
/// guard stops the job, as crossing the floor does, when all of these hold:
/// - no free block at the 2 MiB order (order 9 on 4 KiB pages, 5 on 64 KiB pages) in the zones that
///   serve the driver's allocations: every zone but Movable (ZONE_MOVABLE serves movable user pages
///   only; Normal falls back to DMA32 and DMA);
/// - the job grows: over the last kGrowthPolls readings, kept at least a slow poll apart, MemAvailable
///   never rose and fell by kGrowthMinBytes in all (on the one pool, what the job takes is what
///   MemAvailable loses; this needs no /proc walk on the guard's path);
/// - MemAvailable is under FragmentationLevel (twice the floor: where the guard already polls fast).
///   An idle host (flat MemAvailable) or a healthy one (far above twice the floor) never stops.
/// The decision is pure (FragmentationStops); buddyinfo is read only once MemAvailable is under that
/// level and the job grows, at most once per kSlowPollS, and never on the floor's allocation-free path.
/// Off with --kernel-signals off (Config::kernel_signals).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "guard/policy.h"
#include "host/buddyinfo.h"
#include "host/hostfs.h"

namespace sparkops::guard {

inline constexpr int kGrowthPolls = 3;                      ///< readings that must each show the pool shrinking
inline constexpr uint64_t kGrowthMinBytes = 256ull << 20;  ///< their total fall, so that noise is not growth

/// The last kGrowthPolls MemAvailable readings at least ~kSlowPollS apart (plain values: no allocation).
struct GrowthWindow {
  std::array<double, kGrowthPolls> t{};
  std::array<uint64_t, kGrowthPolls> available{};
  int n = 0;
  /// Keeps `r` when it comes at least 0.9 kSlowPollS after the last kept reading (the oldest drops out).
  void Add(const Reading& r);
  /// A full window in which MemAvailable never rose from one reading to the next and fell by
  /// kGrowthMinBytes in all.
  bool Growing() const;
};

/// Twice the floor (saturating): the trigger is armed only under it.
uint64_t FragmentationLevel(const Config& c);

/// Pure: free blocks of order `order` (and above, counted in blocks of that order) in the zones that
/// serve the driver's allocations (every zone but Movable).
uint64_t DriverFreeBlocks(const std::vector<BuddyZone>& zones, int order);

/// Pure: stop the job? `free_blocks`: DriverFreeBlocks at the 2 MiB order (absent: not read).
bool FragmentationStops(const Config& c, const Reading& r, const GrowthWindow& w, std::optional<uint64_t> free_blocks);

/// The evidence line: "buddyinfo: no free 2 MiB block (order 9 on 4 KiB pages) in DMA, DMA32, Normal
/// (node 0 Normal: orders 9-10 free 0 0); MemAvailable fell 20.0 -> 10.0 GiB over the last 3 polls".
std::string FragmentationEvidence(const std::vector<BuddyZone>& zones, int order, uint64_t page_size,
                                  const GrowthWindow& w);

/// The reader around the pure parts: the page size from meminfo's Hugepagesize (else this process's,
/// sysconf; none: the trigger is off, said in note()), buddyinfo under the HostFs root.
class FragmentationWatch {
 public:
  explicit FragmentationWatch(const HostFs& fs);
  /// Adds `r` to the window and, when the trigger is armed, reads buddyinfo (at most once per
  /// kSlowPollS). True: stop the job; `*evidence` says why.
  bool Check(const Config& c, const Reading& r, std::string* evidence);
  /// Forgets the growth window (`guard` after a stop: the next stop needs a full window of growth
  /// again, not the readings that led to this one).
  void Reset() { window_ = {}; }
  const std::string& note() const { return note_; }

 private:
  HostFs fs_;
  std::optional<uint64_t> page_size_;
  int order_ = 0;
  GrowthWindow window_;
  double last_read_ = -1e18;
  std::string note_;
};

}  // namespace sparkops::guard
