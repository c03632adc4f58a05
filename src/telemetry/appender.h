#pragma once
/// Durable CSV appending: an O_APPEND descriptor, ONE write() per row, then fdatasync, so a reboot
/// or kill -9 loses at most the row being sampled and never leaves a torn row in the middle.
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops {

class CsvAppender {
 public:
  /// Opens (creating 0644) `path` for appending. Writes `header` when the file is new or empty.
  /// An existing file must start with `header` (Input error otherwise: mixing columns would corrupt
  /// it). A file whose last row lacks its newline (power lost mid-write) gets one first.
  static Result<CsvAppender> Open(const std::string& path, const std::string& header);
  CsvAppender(CsvAppender&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  CsvAppender& operator=(CsvAppender&&) = delete;
  ~CsvAppender();

  /// One write() of `row` (retried only on EINTR or a short write), then fdatasync (skipped where
  /// the descriptor cannot sync, e.g. a pipe). Io error naming the file on failure (ENOSPC ...).
  Result<void> Append(std::string_view row, bool sync = true);
  /// fdatasync now (for files appended with sync=false, e.g. train.log).
  Result<void> Sync();

 private:
  CsvAppender(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace sparkops
