#include "guard/fastread.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace sparkops::guard {

namespace {

/// Leading decimal digits of `s` (after spaces); nullopt when none or on overflow.
std::optional<uint64_t> LeadingUint(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (i == s.size() || s[i] < '0' || s[i] > '9') return std::nullopt;
  uint64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  return v;
}

/// "<digits>[.<digits>]" as a double, no locale, no allocation; nullopt when malformed.
std::optional<double> LeadingDecimal(std::string_view s) {
  size_t i = 0;
  double v = 0;
  bool any = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 12; ++i) v = v * 10 + (s[i] - '0'), any = true;
  if (i < s.size() && s[i] == '.') {
    double scale = 0.1;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) v += scale * (s[i] - '0'), scale /= 10, any = true;
  }
  if (!any) return std::nullopt;
  return v;
}

}  // namespace

std::optional<uint64_t> MemFast::PageCache() const {
  if (!cached || !buffers || !shmem) return std::nullopt;
  uint64_t c = *cached + *buffers;
  return c > *shmem ? c - *shmem : 0;
}

MemFast ScanMemInfo(std::string_view text) {
  MemFast m;
  struct Field {
    std::string_view name;
    std::optional<uint64_t> MemFast::*dst;
  };
  static constexpr Field kFields[] = {{"MemTotal:", &MemFast::total},
                                      {"MemAvailable:", &MemFast::available},
                                      {"Cached:", &MemFast::cached},
                                      {"Buffers:", &MemFast::buffers},
                                      {"Shmem:", &MemFast::shmem}};
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    for (const Field& f : kFields) {
      if (!line.starts_with(f.name)) continue;
      auto kb = LeadingUint(line.substr(f.name.size()));
      if (kb && *kb <= UINT64_MAX / 1024) m.*f.dst = *kb * 1024;
      break;
    }
  }
  return m;
}

std::optional<double> ScanPsiFullAvg10(std::string_view text) {
  size_t at = text.starts_with("full ") ? 0 : text.find("\nfull ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view line = text.substr(at == 0 ? 0 : at + 1);
  line = line.substr(0, line.find('\n'));
  size_t k = line.find(" avg10=");
  if (k == std::string_view::npos) return std::nullopt;
  auto v = LeadingDecimal(line.substr(k + 7));
  if (!v || *v > 100) return std::nullopt;
  return v;
}

FastReader::FastReader(const HostFs& fs)
    : meminfo_path_(fs.Path("/proc/meminfo")), pressure_path_(fs.Path("/proc/pressure/memory")) {}

std::string_view FastReader::Slurp(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  size_t got = 0;
  while (got < buf_.size()) {
    ssize_t n = ::read(fd, buf_.data() + got, buf_.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return std::string_view(buf_.data(), got);
}

std::optional<Reading> FastReader::Read(double t_s) {
  MemFast m = ScanMemInfo(Slurp(meminfo_path_.c_str()));
  if (!m.available) return std::nullopt;
  if (m.total) total_ = m.total;
  Reading r;
  r.t_s = t_s;
  r.available = *m.available;
  r.page_cache = m.PageCache();
  r.psi_full_avg10 = ScanPsiFullAvg10(Slurp(pressure_path_.c_str()));
  return r;
}

}  // namespace sparkops::guard
