#pragma once
/// Allocation-free readers for the guard's poll: /proc/meminfo and /proc/pressure/memory read with
/// open/read/close into a caller's fixed buffer and scanned in place. (The ordinary readers in
/// src/host/ build strings and maps; the guard must keep working when malloc would fail.)
/// Paths are resolved once, at construction; a fixture rewritten between polls is read afresh.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "guard/policy.h"
#include "host/hostfs.h"

namespace sparkops::guard {

/// The meminfo fields the guard uses, bytes.
struct MemFast {
  std::optional<uint64_t> total, available, cached, buffers, shmem;
  /// Cached + Buffers - Shmem when all are known (the same rule as MemInfo::PageCache).
  std::optional<uint64_t> PageCache() const;
};

/// Pure, no allocation: scans meminfo text for the fields above ("Name:  123 kB" lines).
MemFast ScanMemInfo(std::string_view text);
/// Pure, no allocation: `full avg10=` of /proc/pressure/memory text; nullopt when absent or malformed.
std::optional<double> ScanPsiFullAvg10(std::string_view text);

class FastReader {
 public:
  explicit FastReader(const HostFs& fs);
  /// One poll: MemAvailable (required: nullopt when meminfo cannot be read or lacks it), page cache
  /// and PSI. `t_s` is stamped by the caller. Never allocates.
  std::optional<Reading> Read(double t_s);
  /// MemTotal from the last successful read.
  std::optional<uint64_t> mem_total() const { return total_; }

 private:
  /// Reads a whole small file into buf_; the text, or empty on failure.
  std::string_view Slurp(const char* path);
  std::string meminfo_path_, pressure_path_;
  std::array<char, 16384> buf_{};
  std::optional<uint64_t> total_;
};

}  // namespace sparkops::guard
