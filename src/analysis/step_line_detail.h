#pragma once
/// Internals of ParseStepLine: one parser per framework family (step_formats.cc). Each takes the
/// line with logging prefixes stripped and fills the partly filled result (timestamp, rank) in
/// place (StepLine is ~150 bytes: passing it by value showed up in profiles).
#include <string.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "analysis/step_line.h"
#include "base/strings.h"

namespace sparkops::detail {

std::optional<double> NumberAfter(std::string_view s, std::string_view key, size_t* end = nullptr);
std::optional<double> GroupedNumberAfter(std::string_view s, std::string_view key);
/// Slow path of IntAt for 19+ digits (from_chars detects overflow); nullopt when it overflows.
std::optional<int64_t> LongIntAt(std::string_view s, size_t i, size_t* pos);

/// Number of leading decimal digits of the 8 bytes at `p` (8 when all are), and their value in
/// `*v` when fewer than 8: no loop, so no branch mispredicted at the number's end (that miss was
/// most of a tqdm counter's parse). Little-endian loads; others use the loop in IntAt.
[[gnu::always_inline]] inline unsigned SwarDigits8(const char* p, uint64_t* v) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  const uint64_t x = w - 0x3030303030303030ull;  // a borrow only runs past the first non-digit
  const uint64_t nondigit = (x | (x + 0x7676767676767676ull)) & 0x8080808080808080ull;
  if (nondigit == 0) return 8;
  const unsigned n = static_cast<unsigned>(__builtin_ctzll(nondigit)) / 8;
  if (n == 0) return 0;
  // The n digits to the top bytes (zeros before them are leading zeros), then pairs, quads, all.
  uint64_t t = x << (64 - 8 * n);
  t = (t * 10) + (t >> 8);
  t = (((t & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((t >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  *v = static_cast<uint32_t>(t);
  return n;
}

/// Integer at s[*pos] after spaces, optional '-'; advances *pos past it. Always inline: a
/// returned optional built out of line is stored and reloaded in pieces (a store-forwarding
/// stall that was half of its cost in profiles).
[[gnu::always_inline]] inline std::optional<int64_t> IntAt(std::string_view s, size_t* pos) {
  size_t i = *pos;
  while (i < s.size() && s[i] == ' ') ++i;
  const bool neg = i < s.size() && s[i] == '-';
  size_t d = i + neg, j = d;
  uint64_t v = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (s.size() - d >= 8) {
    const unsigned n = SwarDigits8(s.data() + d, &v);
    if (n == 0) return std::nullopt;
    if (n < 8) {
      *pos = d + n;
      return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    }
  }
#endif
  // 18 digits cannot overflow; longer numbers go through from_chars.
  while (j < s.size() && j - d < 18 && IsDigit(s[j])) v = v * 10 + static_cast<uint64_t>(s[j++] - '0');
  if (j == d) return std::nullopt;
  if (j < s.size() && IsDigit(s[j])) [[unlikely]]
    return LongIntAt(s, i, pos);
  *pos = j;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}
/// s.rfind(c, pos) through memrchr (vectorised: a tqdm bar's '[' and '|' are 15-20 bytes back,
/// where rfind's byte loop missed its exit branch each time).
inline size_t RFind(std::string_view s, char c, size_t pos = std::string_view::npos) {
  if (s.empty()) return std::string_view::npos;
  const void* p = memrchr(s.data(), c, std::min(pos, s.size() - 1) + 1);
  return p ? static_cast<size_t>(static_cast<const char*>(p) - s.data()) : std::string_view::npos;
}
/// Substring search via memmem (fast on text full of the needle's first letter); npos if absent.
size_t Find(std::string_view s, std::string_view needle, size_t from = 0);
/// Position of the first "step" (npos if none).
size_t FindStep(std::string_view s);
/// Position of the tqdm rate unit ("it/s" or "s/it", whichever comes first); sets *per_it for s/it.
size_t FindRateUnit(std::string_view s, bool* per_it);
/// Length of a "YYYY-MM-DD hh:mm:ss[,mmm]" timestamp at s[pos], 0 when there is none.
size_t TimestampLength(std::string_view s, size_t pos);
std::string_view StripPrefixes(std::string_view s, StepLine* out);

void ParseHfDict(std::string_view s, StepLine& r);            ///< {'loss': 2.1, ...}
void ParseJsonMetrics(std::string_view s, StepLine& r);       ///< {"step": 3, "loss": ...}
void ParseNanoGpt(std::string_view s, StepLine& r);           ///< iter N: loss X, time Yms
void ParseTorchtuneStep(std::string_view s, StepLine& r);     ///< Step N | loss:X ...
/// tqdm bars (HF, Lightning, torchtune); `unit`/`per_it`: FindRateUnit(s) (npos when none).
void ParseTqdm(std::string_view s, size_t unit, bool per_it, StepLine& r);
void ParseTorchtitan(std::string_view s, StepLine& r);        ///< step: N loss: X ... tps: N
void ParseMegatron(std::string_view s, StepLine& r);          ///< iteration N/ M | elapsed ...
void ParseDeepSpeed(std::string_view s, StepLine& r);         ///< global_step=N, ...SamplesPerSec
void ParseMarker(std::string_view s, StepLine& r);            ///< eval / checkpoint banners

}  // namespace sparkops::detail
