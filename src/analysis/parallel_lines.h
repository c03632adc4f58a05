#pragma once
/// Parallel line scanning for big logs. A regular file is cut into fixed-size segments of whole
/// lines (a line belongs to the segment it starts in); each segment's lines go to a
/// caller-defined LineSegment on one of several worker threads, and the segments are handed back
/// to the calling thread in file order. Each worker maps one segment at a time (MappedRange:
/// no copy, and a file truncated meanwhile is an error, not a SIGBUS); memory stays bounded:
/// one mapping per worker and at most 2 segments per worker in flight.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "analysis/line_reader.h"
#include "base/error.h"

namespace sparkops {

/// What a worker thread fills from the lines of one segment.
class LineSegment {
 public:
  virtual ~LineSegment() = default;
  /// One line, without its '\n', cut at kMaxLineBytes (like ForEachLine), in file order.
  /// `may_have_cr` false guarantees the line has no '\r' (the newline scan looks for both, so
  /// the line need not be searched again); true says nothing.
  virtual void Line(std::string_view line, bool may_have_cr) = 0;
  /// Empties the segment after it was merged, so it can be filled again; keeping the buffers'
  /// capacity avoids fresh pages (zeroed by the kernel) for every segment.
  virtual void Clear() = 0;
};

struct ParallelLineOptions {
  unsigned threads = 0;             ///< worker threads; 0 = the CPUs this process may run on (≤ 16)
  size_t segment_bytes = 16u << 20; ///< bytes per segment (a file smaller than two runs sequentially)
};

/// Reads every line of `path` into segments and calls `merge` for each segment, in file order.
/// `make` is called a few times (once per segment in flight) and segments are reused after
/// Clear(); `make` and `merge` run on the calling thread, only Line runs on the workers. Pipes and small files are read
/// sequentially through ForEachLine, still in segments (a new one every 65,536 lines) so the caller's memory is bounded
/// the same way. The lines and bytes counted are the same as ForEachLine's; IoError/Input error name the file.
Result<LineReadStats> ForEachLineParallel(const std::string& path,
                                          const std::function<std::unique_ptr<LineSegment>()>& make,
                                          const std::function<void(LineSegment&)>& merge, ParallelLineOptions opt = {});

/// The worker threads ForEachLineParallel uses by default: CPUs in this process's affinity
/// mask, at least 1, at most 16.
unsigned DefaultScanThreads();

}  // namespace sparkops
