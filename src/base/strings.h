#pragma once
/// Small pure string helpers shared by every parser.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkops {

/// ASCII character classes, as regex \d and \s have them in the "C" locale.
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }  ///< space, \t \n \v \f \r

std::string_view Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
/// Splits on `sep`; keeps empty fields ("a,,b" -> {"a","","b"}).
std::vector<std::string_view> Split(std::string_view s, char sep);
/// Splits on runs of blanks (IsSpace); no empty fields ("  a  b " -> {"a","b"}).
std::vector<std::string_view> SplitWhitespace(std::string_view s);
/// Splits into lines; a final line without '\n' is kept, a trailing '\n' adds no empty line.
std::vector<std::string_view> SplitLines(std::string_view s);
/// Whole-string numeric parses: surrounding blanks allowed, anything else -> nullopt.
std::optional<int64_t> ParseInt(std::string_view s);
std::optional<uint64_t> ParseUint(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);
std::string ToLower(std::string_view s);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
/// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);
/// EditDistance(a, b) when it is at most `limit`, else limit + 1: O(1) when the lengths differ by
/// more than `limit`, and stops at the first row whose every entry exceeds it (a "did you mean"
/// lookup over a name of any length costs no more than one over a short one).
size_t EditDistanceAtMost(std::string_view a, std::string_view b, size_t limit);

/// The part after the last '/': "/usr/bin/python3.12" -> "python3.12" (the whole text without one).
std::string_view BaseName(std::string_view path);

/// `v` with `decimals` digits after the point and `unit` appended ("71.3 W" from 71.28, 1, " W"),
/// or "not reported" when the machine gave no value (never 0).
std::string FixedOrNotReported(const std::optional<double>& v, int decimals, std::string_view unit);

}  // namespace sparkops
