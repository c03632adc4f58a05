#pragma once
/// Streaming line reader for files named on the command line (logs of any size): reads in
/// fixed blocks, so memory does not grow with the file. Lines are split on '\n' only; the
/// callers split carriage-return redraws themselves.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops {

/// Longest line handed to the callback; the rest of a longer line is dropped (bounded memory).
inline constexpr size_t kMaxLineBytes = 1u << 20;

struct LineReadStats {
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t truncated_lines = 0;
  bool last_unterminated = false;  ///< the file's last line has no '\n' (a torn or unfinished write)
};

/// Calls `fn(line, line_number)` (1-based, without the '\n') for every line of `path`. `fn`
/// returns false to stop early (with its own error kept by the caller). IoError names the file.
/// A regular file is memory-mapped `window` bytes at a time (each window unmapped after use);
/// anything else (a pipe) is read in blocks. A line longer than kMaxLineBytes is cut there.
Result<LineReadStats> ForEachLine(const std::string& path, const std::function<bool(std::string_view, uint64_t)>& fn,
                                  size_t window = 16u << 20);

}  // namespace sparkops
