#include "base/number_flag.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace sparkops {

namespace {
std::string Num(double v) { return fmt::format("{:g}", v); }

std::string WithUnit(std::string text, std::string_view unit) {
  if (!unit.empty()) text += fmt::format(" {}", unit);
  return text;
}
}  // namespace

std::string DescribeRange(const NumberRange& r) {
  std::string lo = r.min_exclusive ? "more than " + Num(r.min) : "at least " + Num(r.min);
  if (std::isinf(r.max)) return WithUnit(lo, r.unit);
  if (r.min_exclusive) return WithUnit(lo + " and at most " + Num(r.max), r.unit);
  return WithUnit("between " + Num(r.min) + " and " + Num(r.max), r.unit);
}

Result<double> ParseNumberFlag(std::string_view flag, std::string_view text, const NumberRange& r) {
  auto fail = [&](std::string_view why) {
    return InputError(fmt::format("{} {}: {} (must be {}{})", flag, text.empty() ? "''" : text, why,
                                  r.integer ? "a whole number, " : "", DescribeRange(r)));
  };
  std::string_view s = text;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (s.empty()) return fail("not a number");
  std::string_view digits = s.front() == '+' ? s.substr(1) : s;  // from_chars refuses a leading '+'
  if (digits.empty() ||
      !(std::isdigit(static_cast<unsigned char>(digits.front())) || digits.front() == '.' || digits.front() == '-'))
    return fail("not a number");  // "nan", "inf", "0x10" and words end here
  double v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return fail("out of range");
  if (ec != std::errc() || end != digits.data() + digits.size()) return fail("not a number");
  if (!std::isfinite(v)) return fail("not a finite number");
  if (r.integer && v != std::floor(v)) return fail("not a whole number");
  bool low = r.min_exclusive ? !(v > r.min) : !(v >= r.min);
  if (low || v > r.max) return fail("out of range");
  return v == 0 ? 0.0 : v;  // -0 reads as 0
}

std::chrono::nanoseconds SecondsToDuration(double seconds) {
  if (!(seconds > 0)) return std::chrono::nanoseconds(0);
  double ns = std::round(seconds * 1e9);
  constexpr double kMax = 9.0e18;  // below INT64_MAX: callers range-check far below this
  if (ns > kMax) ns = kMax;
  if (ns < 1) ns = 1;
  return std::chrono::nanoseconds(static_cast<int64_t>(ns));
}

}  // namespace sparkops
