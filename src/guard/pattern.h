#pragma once
/// The guard's `--prefer`/`--only`/`--avoid` matcher: POSIX extended regular expressions through
/// glibc's regcomp/regexec, searched in at most the first kMatchBytes of a text. glibc runs an ERE
/// without back-references as a set of states stepped once per input byte (no recursion per byte,
/// unlike libstdc++'s std::regex, which overflowed the stack on a ~30 KB command line); patterns
/// with back-references (`\1`) are refused, since they would need backtracking.
#include <memory>
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops::guard {

/// The bytes of a command line (or any text) a pattern is searched in.
inline constexpr size_t kMatchBytes = 4096;

class Pattern {
 public:
  /// Input error naming `flag` for an empty, invalid or back-referencing pattern.
  static Result<Pattern> Compile(std::string_view flag, std::string_view text);
  /// True when the pattern matches somewhere in the first kMatchBytes of `text` (a NUL in the text
  /// ends it, as for any C string). Never recurses per byte; bounded time per call.
  bool Search(std::string_view text) const;
  const std::string& text() const { return text_; }

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> re_;
  std::string text_;
};

}  // namespace sparkops::guard
