#pragma once
/// Splits a child's output stream into records for train.log: a record ends at '\n', at "\r\n",
/// or at a lone '\r' (a progress-bar update becomes its own record). Pure and incremental.
#include <functional>
#include <string>
#include <string_view>

namespace sparkops {

class LineSplitter {
 public:
  /// `max_line` bounds memory: a longer line is emitted in pieces of at most this many bytes.
  explicit LineSplitter(size_t max_line = 1u << 20) : max_line_(max_line) {}

  /// Feeds bytes; calls `emit` for every complete record (without its terminator).
  void Feed(std::string_view bytes, const std::function<void(std::string_view)>& emit);
  /// Emits what is left (a last line without terminator).
  void Finish(const std::function<void(std::string_view)>& emit);

 private:
  size_t max_line_;
  std::string partial_;
  bool pending_cr_ = false;  ///< last byte seen was '\r': a following '\n' belongs to it
};

}  // namespace sparkops
