#pragma once
/// One parsing path for every numeric command-line value: a finite number inside a documented
/// range, or an error naming the flag, the value and the range. NaN, ±inf, hex floats, trailing
/// garbage and values outside the range are refused; integer flags refuse fractions.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops {

struct NumberRange {
  double min = 0;               ///< smallest accepted value (inclusive unless min_exclusive)
  double max = 0;               ///< largest accepted value (inclusive)
  bool min_exclusive = false;   ///< "> min" instead of ">= min"
  bool integer = false;         ///< whole numbers only
  std::string_view unit = "";   ///< for the message: "seconds", "GiB", ""
};

/// Parses `text` for `flag` (e.g. "--interval"). Pure.
Result<double> ParseNumberFlag(std::string_view flag, std::string_view text, const NumberRange& range);

/// "between 0.1 and 86400 seconds", "at least 1", "more than 0 GiB": the range as a person reads it.
std::string DescribeRange(const NumberRange& range);

/// Seconds (already range-checked, so finite and far below 2^63 ns) as a steady-clock duration,
/// rounded to the nearest nanosecond and never below 1 ns for a positive value.
std::chrono::nanoseconds SecondsToDuration(double seconds);

}  // namespace sparkops
