#pragma once
/// Durable CSV appending: an O_APPEND descriptor, ONE write() per row, then fdatasync, so a reboot
/// or kill -9 loses at most the row being sampled (a kill can cut that write short: the torn row
/// is dropped when the file is next opened, so it never ends up in the middle).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "host/write_file.h"

namespace sparkops {

/// Pure: the PID holding a flock on the file with this device and inode, from /proc/locks text.
std::optional<long> FindFlockHolder(std::string_view proc_locks, uint64_t dev_major, uint64_t dev_minor, uint64_t ino);

class CsvAppender {
 public:
  /// Opens (creating 0644) `path` for appending and takes an exclusive flock on a regular file: a
  /// second writer is an Input error naming the holder's PID (from /proc/locks). That is the real
  /// /proc, never HostFs's root: the file and its lock live on this machine, in this kernel.
  /// A FIFO without a reader is an Input error, never a hang. Writes `header` when the file is new or empty.
  /// An existing file must start with `header` (Input error otherwise: mixing columns would corrupt
  /// it). A CSV (non-empty `header`) whose last row lacks its newline (a kill or power loss
  /// mid-write) is truncated after its last complete row (dropped_bytes() says how much); a
  /// headerless text file gets the missing newline instead (its bytes are kept).
  /// The file is opened through host/write_file.h's OutDir: never through a link (an Input error),
  /// and as root only in a directory root owns (see OutDir::Open) and only a file root owns.
  static Result<CsvAppender> Open(const std::string& path, const std::string& header);
  /// `name` in `dir`. `create_new`: the file must not exist yet (OutDir::CreateNew, opened
  /// read-write so a forked sentinel can inspect its tail through fd()).
  static Result<CsvAppender> Open(const OutDir& dir, std::string_view name, const std::string& header,
                                  bool create_new = false);
  /// The descriptor (O_APPEND), for a process that inherits it (run's sentinel): never reopen by name.
  int fd() const { return fd_; }
  /// Bytes of a torn last row removed by Open (0: none).
  size_t dropped_bytes() const { return dropped_; }
  CsvAppender(CsvAppender&& o) noexcept : fd_(o.fd_), dropped_(o.dropped_), path_(std::move(o.path_)) { o.fd_ = -1; }
  CsvAppender& operator=(CsvAppender&&) = delete;
  ~CsvAppender();

  /// One write() of `row` (retried only on EINTR or a short write), then fdatasync (skipped where
  /// the descriptor cannot sync, e.g. a pipe). Io error naming the file on failure (ENOSPC ...).
  Result<void> Append(std::string_view row, bool sync = true);
  /// fdatasync now (for files appended with sync=false, e.g. train.log).
  Result<void> Sync();

 private:
  CsvAppender(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  static constexpr long kTailBytes = 64 << 10;  ///< a torn row is looked for this far back (rows are < 1 KiB)
  int fd_ = -1;
  size_t dropped_ = 0;
  std::string path_;
};

}  // namespace sparkops
