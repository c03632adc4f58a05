#pragma once
/// Text encodings a log may arrive in: sparkops reads UTF-8 (and ASCII); a UTF-8 byte-order mark
/// is skipped, UTF-16/UTF-32 are recognised and named instead of giving "0 steps".
#include <optional>
#include <string>
#include <string_view>

namespace sparkops {

inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

/// Pure: what the first bytes of a file say when it is not UTF-8/ASCII text — a UTF-16 or UTF-32
/// byte-order mark, or UTF-16 without one (a NUL in every other byte of ASCII-range text).
/// nullopt for UTF-8 (with or without BOM), ASCII, or too little to tell.
std::optional<std::string> DescribeNonUtf8(std::string_view head);

/// The Input-error text for such a file: what was found and how to convert it.
std::string NonUtf8Message(const std::string& path, const std::string& found);

}  // namespace sparkops
