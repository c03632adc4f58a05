#include "host/meminfo.h"

#include <string>

#include "base/strings.h"

namespace sparkops {

std::optional<uint64_t> MemInfo::PageCache() const {
  if (!cached || !buffers) return std::nullopt;
  uint64_t c = *cached + *buffers;
  uint64_t s = shmem.value_or(0);
  return c > s ? c - s : 0;
}

std::optional<uint64_t> MemInfo::SwapUsed() const {
  if (!swap_total || !swap_free) return std::nullopt;
  return *swap_total > *swap_free ? *swap_total - *swap_free : 0;
}

Result<MemInfo> ParseMemInfo(std::string_view text) {
  MemInfo m;
  struct Field {
    std::string_view name;
    std::optional<uint64_t> MemInfo::*member;
  };
  static constexpr Field kFields[] = {
      {"MemTotal", &MemInfo::total},
      {"MemFree", &MemInfo::free},
      {"MemAvailable", &MemInfo::available},
      {"Buffers", &MemInfo::buffers},
      {"Cached", &MemInfo::cached},
      {"SwapCached", &MemInfo::swap_cached},
      {"Shmem", &MemInfo::shmem},
      {"SReclaimable", &MemInfo::sreclaimable},
      {"SwapTotal", &MemInfo::swap_total},
      {"SwapFree", &MemInfo::swap_free},
      {"HugePages_Total", &MemInfo::hugepages_total},
      {"HugePages_Free", &MemInfo::hugepages_free},
      {"Hugepagesize", &MemInfo::hugepage_size},
      {"Mlocked", &MemInfo::mlocked},
  };
  for (std::string_view line : SplitLines(text)) {
    if (Trim(line).empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return InputError("/proc/meminfo: line without ':': '" + std::string(line.substr(0, 60)) + "'");
    std::string_view key = Trim(line.substr(0, colon));
    std::string_view rest = Trim(line.substr(colon + 1));
    for (const Field& f : kFields) {
      if (key != f.name) continue;
      bool kb = EndsWith(rest, " kB");
      if (kb) rest = Trim(rest.substr(0, rest.size() - 3));
      auto v = ParseUint(rest);
      if (!v) return InputError("/proc/meminfo: field " + std::string(key) + ": not a number");
      uint64_t mult = kb ? 1024 : 1;
      if (*v > UINT64_MAX / mult) return InputError("/proc/meminfo: field " + std::string(key) + ": out of range");
      m.*(f.member) = *v * mult;
    }
  }
  if (!m.total) return InputError("/proc/meminfo: field MemTotal: missing");
  return m;
}

Result<MemInfo> ReadMemInfo(const HostFs& fs) {
  auto text = fs.Read("/proc/meminfo");
  if (!text) return std::unexpected(text.error());
  return ParseMemInfo(*text);
}

}  // namespace sparkops
