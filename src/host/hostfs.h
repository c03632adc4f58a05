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
  /// The first `max_bytes` of a file, the rest left unread (`*cut`, when given, says whether there was
  /// more). For bounded copies of files whose end does not matter (a budgeted argv, read_budget.h).
  Result<std::string> ReadHead(std::string_view host_path, size_t max_bytes, bool* cut = nullptr) const;
  bool Exists(std::string_view host_path) const;
  bool IsDir(std::string_view host_path) const;
  /// Entry names (not "." or ".."), unsorted, at most `max_entries` (the first in readdir order).
  /// NotFound when the directory is missing.
  Result<std::vector<std::string>> List(std::string_view host_path, size_t max_entries = SIZE_MAX) const;
  /// Target of a symbolic link (as stored, not resolved under root).
  std::optional<std::string> ReadLink(std::string_view host_path) const;

 private:
  std::string root_;  // "" for "/", else without trailing '/'
};

/// Reads a file given by a real path (a command-line argument, not a host path), bounded. Only a
/// regular file is read (a FIFO, socket, device or directory is an Input error naming it).
Result<std::string> ReadLocalFile(const std::string& path, size_t max_bytes = 64u << 20);

/// The last `max_bytes` of a regular file, from its first whole line (the start of the file when it
/// is not larger). `*cut` says whether earlier bytes were left out. For logs where the end matters.
Result<std::string> ReadLocalFileTail(const std::string& path, size_t max_bytes, bool* cut);

/// What an input path may be besides a regular file.
enum class InputKind {
  kRegular,        ///< a regular file only
  kRegularOrPipe,  ///< also a FIFO/pipe (streamed input, e.g. `--log <(zcat train.log.gz)`)
};

/// Opens `path` for reading without ever blocking in open(): O_NONBLOCK, then fstat. A directory,
/// device (/dev/zero), socket, or a FIFO where `kind` refuses one is an Input error naming the
/// path and what it is. A FIFO that `kind` accepts is waited on for its first byte or its writer's
/// close for at most `fifo_wait_ms` (an Input error past that: nobody is writing). The returned
/// descriptor is blocking, O_CLOEXEC; the caller closes it.
Result<int> OpenInput(const std::string& path, InputKind kind, int fifo_wait_ms = 10000);

/// OpenInput for a regular file only, left non-blocking (which has no effect on a regular file, so
/// the two fcntl calls are skipped), with its size in `*size`. The caller closes the descriptor.
Result<int> OpenRegularFile(const std::string& path, uint64_t* size);

}  // namespace sparkops
