#pragma once
/// HostFs: every host path (/proc, /sys, /etc, /.dockerenv, /run, /usr/local/cuda ...) is
/// resolved under one root (`--root DIR`, default "/"). Nothing else in sparkops opens a host
/// path directly: fixture trees under tests/fixtures/ stand in for a machine.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace sparkops {

class HostFs {
 public:
  /// `root` "" or "/" means the real machine.
  explicit HostFs(std::string root = "/");

  /// The real path of a host path: `Path("/proc/meminfo")` -> "<root>/proc/meminfo".
  std::string Path(std::string_view host_path) const;
  const std::string& root() const { return root_; }
  bool is_real_root() const { return root_.empty(); }

  /// Reads a whole file, at most `max_bytes` (default 16 MiB; more is an Input error naming the
  /// file). /proc files report size 0, so this reads until EOF.
  Result<std::string> Read(std::string_view host_path, size_t max_bytes = 16u << 20) const;
  bool Exists(std::string_view host_path) const;
  bool IsDir(std::string_view host_path) const;
  /// Entry names (not "." or ".."), unsorted. NotFound when the directory is missing.
  Result<std::vector<std::string>> List(std::string_view host_path) const;
  /// Target of a symbolic link (as stored, not resolved under root).
  std::optional<std::string> ReadLink(std::string_view host_path) const;

 private:
  std::string root_;  // "" for "/", else without trailing '/'
};

/// Reads a file given by a real path (a command-line argument, not a host path), bounded.
Result<std::string> ReadLocalFile(const std::string& path, size_t max_bytes = 64u << 20);

}  // namespace sparkops
