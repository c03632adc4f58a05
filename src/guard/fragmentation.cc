#include "guard/fragmentation.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "host/meminfo.h"

namespace sparkops::guard {

void GrowthWindow::Add(const Reading& r) {
  if (n > 0 && r.t_s - t[static_cast<size_t>(n - 1)] < 0.9 * kSlowPollS) return;
  if (n == kGrowthPolls) {
    for (size_t i = 1; i < static_cast<size_t>(kGrowthPolls); ++i) t[i - 1] = t[i], available[i - 1] = available[i];
    --n;
  }
  t[static_cast<size_t>(n)] = r.t_s, available[static_cast<size_t>(n)] = r.available;
  ++n;
}

bool GrowthWindow::Growing() const {
  if (n < kGrowthPolls) return false;
  for (size_t i = 1; i < static_cast<size_t>(n); ++i)
    if (available[i] > available[i - 1]) return false;  // the pool gave back: not growing
  return available[0] - available[static_cast<size_t>(n - 1)] >= kGrowthMinBytes;
}

uint64_t FragmentationLevel(const Config& c) { return c.floor > UINT64_MAX / 2 ? UINT64_MAX : 2 * c.floor; }

uint64_t DriverFreeBlocks(const std::vector<BuddyZone>& zones, int order) {
  std::vector<BuddyZone> serving;
  for (const BuddyZone& z : zones)
    if (z.zone != "Movable") serving.push_back(z);
  return FreeBlocksAtOrder(serving, order);
}

bool FragmentationStops(const Config& c, const Reading& r, const GrowthWindow& w, std::optional<uint64_t> free_blocks) {
  return c.kernel_signals && free_blocks && *free_blocks == 0 && r.available < FragmentationLevel(c) && w.Growing();
}

std::string FragmentationEvidence(const std::vector<BuddyZone>& zones, int order, uint64_t page_size,
                                  const GrowthWindow& w) {
  std::string names, counts;
  for (const BuddyZone& z : zones) {
    if (z.zone == "Movable") continue;
    names += (names.empty() ? "" : ", ") + z.zone;
    std::string free;
    for (size_t k = static_cast<size_t>(std::max(order, 0)); k < z.free.size(); ++k)
      free += (free.empty() ? "" : " ") + std::to_string(z.free[k]);
    counts += fmt::format("{}node {} {}: orders {}+ free {}", counts.empty() ? "" : "; ", z.node, z.zone, order,
                          free.empty() ? "-" : free);
  }
  std::string s = fmt::format("buddyinfo: no free 2 MiB block (order {} on {} KiB pages) in {} ({})", order,
                              page_size / 1024, names.empty() ? "any zone" : names, counts);
  if (w.n >= 2)
    s +=
        fmt::format("; MemAvailable fell {:.1f} -> {:.1f} GiB over the last {} polls ({:.0f} s)", ToGiB(w.available[0]),
                    ToGiB(w.available[static_cast<size_t>(w.n - 1)]), w.n, w.t[static_cast<size_t>(w.n - 1)] - w.t[0]);
  return s;
}

FragmentationWatch::FragmentationWatch(const HostFs& fs) : fs_(fs) {
  auto mi = ReadMemInfo(fs_);
  if (mi && mi->hugepage_size) page_size_ = PageSizeFromHugepage(*mi->hugepage_size);
  if (!page_size_)  // this process's page size: the kernel's (a fixture root without Hugepagesize)
    if (long p = ::sysconf(_SC_PAGESIZE); p > 0) page_size_ = static_cast<uint64_t>(p);
  if (page_size_) order_ = OrderFor(2u << 20, *page_size_);
  else note_ = "the page size is not known: the fragmentation trigger is off";
}

bool FragmentationWatch::Check(const Config& c, const Reading& r, std::string* evidence) {
  window_.Add(r);  // plain values: no allocation
  if (!page_size_ || !c.kernel_signals || r.available >= FragmentationLevel(c) || !window_.Growing()) return false;
  if (r.t_s - last_read_ < kSlowPollS) return false;
  last_read_ = r.t_s;
  auto zones = ReadBuddyInfo(fs_);  // allocates: only here, armed, at the slow cadence
  if (!zones) return false;
  if (!FragmentationStops(c, r, window_, DriverFreeBlocks(*zones, order_))) return false;
  if (evidence) *evidence = FragmentationEvidence(*zones, order_, *page_size_, window_);
  return true;
}

}  // namespace sparkops::guard
