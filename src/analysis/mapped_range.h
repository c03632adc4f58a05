#pragma once
/// A read-only mapping of part of a file that survives the file shrinking under it. Touching a
/// mapped page past a file's end raises SIGBUS, which would kill sparkops when another program
/// truncates a log it is reading (logrotate's copytruncate, a job restarted into the same file).
/// While a MappedRange exists, a process-wide SIGBUS handler puts a page of zeros where such a
/// page was and marks the range damaged; the reader checks Damaged() and reports an error
/// instead of what it parsed. A SIGBUS anywhere else gets the disposition it had before.
#include <cstddef>
#include <cstdint>

#include "base/error.h"

namespace sparkops {

class MappedRange {
 public:
  /// Maps bytes [off, off + len) of `fd` (len > 0; `off` need not be page-aligned). IoError
  /// carries strerror of a failed mmap (or "too many mappings" past kMaxLive at once).
  static Result<MappedRange> Map(int fd, uint64_t off, size_t len);
  MappedRange(MappedRange&& o) noexcept;
  MappedRange& operator=(MappedRange&& o) noexcept;
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;
  ~MappedRange();

  /// The byte at file offset `off` is data()[off - the `off` given to Map].
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  /// True once a page of this range was found past the file's end (it now reads as zeros).
  bool Damaged() const;
  /// What a reader says, after the file's name, when Damaged().
  static constexpr const char* kShrankMessage = "the file shrank while it was read (truncated by another program?)";

  /// Ranges that can be mapped at the same time (one per scanning thread is what is used).
  static constexpr size_t kMaxLive = 64;

 private:
  MappedRange() = default;
  void Release();
  void* base_ = nullptr;   ///< page-aligned start of the mapping
  size_t base_len_ = 0;
  const char* data_ = nullptr;
  size_t size_ = 0;
  int slot_ = -1;          ///< index in the handler's table
};

}  // namespace sparkops
