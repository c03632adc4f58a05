#include "host/buddyinfo.h"

#include "base/strings.h"

namespace sparkops {

namespace {
constexpr size_t kMaxOrders = 16;
constexpr size_t kMaxZones = 64;
}  // namespace

Result<std::vector<BuddyZone>> ParseBuddyInfo(std::string_view text) {
  std::vector<BuddyZone> zones;
  for (std::string_view line : SplitLines(text)) {
    if (Trim(line).empty()) continue;
    auto words = SplitWhitespace(line);
    // Node 0, zone   Normal   n0 n1 ...
    if (words.size() < 5 || words[0] != "Node" || words[2] != "zone" || !EndsWith(words[1], ","))
      return InputError("/proc/buddyinfo: not a zone line: '" + std::string(line.substr(0, 60)) + "'");
    auto node = ParseUint(words[1].substr(0, words[1].size() - 1));
    if (!node || *node > 4096) return InputError("/proc/buddyinfo: bad node '" + std::string(words[1]) + "'");
    if (zones.size() >= kMaxZones) return InputError("/proc/buddyinfo: more than 64 zones");
    BuddyZone z;
    z.node = static_cast<int>(*node);
    z.zone = std::string(words[3].substr(0, 32));
    for (size_t i = 4; i < words.size() && z.free.size() < kMaxOrders; ++i) {
      auto v = ParseUint(words[i]);
      if (!v) return InputError("/proc/buddyinfo: zone " + z.zone + ": not a count '" + std::string(words[i]) + "'");
      z.free.push_back(*v);
    }
    zones.push_back(std::move(z));
  }
  if (zones.empty()) return InputError("/proc/buddyinfo: no zone lines");
  return zones;
}

Result<std::vector<BuddyZone>> ReadBuddyInfo(const HostFs& fs) {
  auto text = fs.Read("/proc/buddyinfo", 1u << 20);
  if (!text) return std::unexpected(text.error());
  return ParseBuddyInfo(*text);
}

MemInfoExtras ParseMemInfoExtras(std::string_view text) {
  MemInfoExtras m;
  for (std::string_view line : SplitLines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, colon)), rest = Trim(line.substr(colon + 1));
    std::optional<uint64_t>* field = key == "Mlocked"       ? &m.mlocked
                                     : key == "Unevictable" ? &m.unevictable
                                     : key == "CmaTotal"    ? &m.cma_total
                                                            : nullptr;
    if (!field || !EndsWith(rest, " kB")) continue;
    auto v = ParseUint(Trim(rest.substr(0, rest.size() - 3)));
    if (v && *v <= UINT64_MAX / 1024) *field = *v * 1024;
  }
  return m;
}

MemInfoExtras ReadMemInfoExtras(const HostFs& fs) {
  auto text = fs.Read("/proc/meminfo", 1u << 20);
  return text ? ParseMemInfoExtras(*text) : MemInfoExtras{};
}

std::optional<uint64_t> PageSizeFromHugepage(uint64_t hugepage_bytes) {
  for (uint64_t page : {4096ull, 16384ull, 65536ull}) {
    if (page * (page / 8) == hugepage_bytes) return page;
  }
  return std::nullopt;
}

int OrderFor(uint64_t bytes, uint64_t page_size) {
  if (page_size == 0) return 0;
  int order = 0;
  while (order < 63 && (page_size << order) < bytes) ++order;
  return order;
}

uint64_t FreeBlocksAtOrder(const std::vector<BuddyZone>& zones, int order) {
  uint64_t total = 0;
  if (order < 0) return 0;
  for (const auto& z : zones) {
    for (size_t k = static_cast<size_t>(order); k < z.free.size(); ++k) {
      uint64_t each = uint64_t{1} << (k - static_cast<size_t>(order));
      uint64_t add = z.free[k] > UINT64_MAX / each ? UINT64_MAX : z.free[k] * each;
      total = add > UINT64_MAX - total ? UINT64_MAX : total + add;
    }
  }
  return total;
}

std::optional<uint64_t> ShmSizeFromMounts(std::string_view mounts, bool* mounted) {
  if (mounted) *mounted = false;
  std::optional<uint64_t> size;
  for (std::string_view line : SplitLines(mounts)) {
    auto w = SplitWhitespace(line);
    if (w.size() < 4 || w[1] != "/dev/shm") continue;
    if (mounted) *mounted = true;
    size.reset();  // the last mount on /dev/shm wins
    for (std::string_view opt : Split(w[3], ',')) {
      if (!StartsWith(opt, "size=")) continue;
      std::string_view v = opt.substr(5);
      uint64_t mult = 1;
      if (!v.empty()) {
        switch (v.back()) {
          case 'k':
          case 'K': mult = 1ull << 10; break;
          case 'm':
          case 'M': mult = 1ull << 20; break;
          case 'g':
          case 'G': mult = 1ull << 30; break;
          default: break;
        }
        if (mult != 1) v.remove_suffix(1);
      }
      auto n = ParseUint(v);
      if (n && *n <= UINT64_MAX / mult) size = *n * mult;
    }
  }
  return size;
}

UmaPressure ReadUmaPressure(const HostFs& fs, const MemInfo& mi) {
  UmaPressure p;
  p.page_size = mi.hugepage_size ? PageSizeFromHugepage(*mi.hugepage_size) : std::nullopt;
  if (auto zones = ReadBuddyInfo(fs); zones && p.page_size) {
    p.order_2m = OrderFor(2u << 20, *p.page_size);
    p.order_4m = OrderFor(4u << 20, *p.page_size);
    p.free_2m = FreeBlocksAtOrder(*zones, p.order_2m);
    p.free_4m = FreeBlocksAtOrder(*zones, p.order_4m);
  }
  if (auto mounts = fs.Read("/proc/mounts", 4u << 20)) {
    bool mounted = false;
    p.shm_size = ShmSizeFromMounts(*mounts, &mounted);
    p.shm_default = mounted && !p.shm_size;
  }
  MemInfoExtras extra = ReadMemInfoExtras(fs);
  p.mlocked = extra.mlocked;
  p.unevictable = extra.unevictable;
  p.shmem = mi.shmem;
  return p;
}

}  // namespace sparkops
