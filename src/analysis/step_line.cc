#include "analysis/step_line.h"

#include <string.h>
#include <charconv>
#include <cmath>
#include <cstring>

#include "analysis/plain_steps.h"
#include "analysis/step_line_detail.h"
#include "base/bytescan.h"

namespace sparkops {

bool ParseNumberPrefixTo(std::string_view s, double* out, size_t* used) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\'' || s[i] == '"')) ++i;
  std::string_view rest = s.substr(i);
  auto word = [&](std::string_view w, double v) {
    if (rest.size() < w.size() || rest.substr(0, w.size()) != w) return false;
    if (used) *used = i + w.size();
    *out = v;
    return true;
  };
  // The words start with 'n', 'i' or "-i": numbers (the common case) skip the three compares.
  if (!rest.empty() && (rest[0] == 'n' || rest[0] == 'i' || (rest[0] == '-' && rest.size() > 1 && rest[1] == 'i'))) {
    if (word("nan", NAN) || word("-inf", -INFINITY) || word("inf", INFINITY)) return true;
  }
  double v = 0;
  const char* b = rest.data();
  const char* e = rest.data() + rest.size();
  if (b != e && *b == '+') ++b;
  // Fast path for plain decimals ("2.00", "-0.125"): with ≤ 15 digits the mantissa and the power
  // of ten are exact doubles, so one division gives the correctly rounded value, as from_chars.
  {
    const char* q = b;
    const bool neg = q != e && *q == '-';
    q += neg;
    uint64_t mant = 0;
    int digits = 0, frac = 0;
    for (; q != e && *q >= '0' && *q <= '9' && digits < 16; ++q, ++digits)
      mant = mant * 10 + static_cast<uint64_t>(*q - '0');
    if (q != e && *q == '.' && digits > 0) {
      for (++q; q != e && *q >= '0' && *q <= '9' && digits < 16; ++q, ++digits, ++frac)
        mant = mant * 10 + static_cast<uint64_t>(*q - '0');
    }
    const bool plain =
        digits > 0 && digits <= 15 && (q == e || ((*q < '0' || *q > '9') && *q != 'e' && *q != 'E' && *q != '.'));
    if (plain) {
      static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                          1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
      v = static_cast<double>(mant) / kPow10[frac];
      if (neg) v = -v;
      if (used) *used = i + static_cast<size_t>(q - rest.data());
      *out = v;
      return true;
    }
  }
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc()) return false;
  if (used) *used = i + static_cast<size_t>(p - rest.data());
  *out = v;
  return true;
}

namespace detail {

std::optional<double> NumberAfter(std::string_view s, std::string_view key, size_t* end) {
  size_t pos = Find(s, key);
  if (pos == std::string_view::npos) return std::nullopt;
  size_t start = pos + key.size();
  size_t used = 0;
  auto v = ParseNumberPrefix(s.substr(start), &used);
  if (v && end) *end = start + used;
  return v;
}

std::optional<int64_t> LongIntAt(std::string_view s, size_t i, size_t* pos) {
  int64_t big = 0;
  auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), big);
  if (ec != std::errc()) return std::nullopt;
  *pos = static_cast<size_t>(p - s.data());
  return big;
}

// Integer that may carry thousands separators ("4,536").
std::optional<double> GroupedNumberAfter(std::string_view s, std::string_view key) {
  size_t pos = Find(s, key);
  if (pos == std::string_view::npos) return std::nullopt;
  size_t i = pos + key.size();
  while (i < s.size() && s[i] == ' ') ++i;
  char buf[48];
  size_t n = 0;
  for (; i < s.size() && n + 1 < sizeof buf; ++i) {
    char c = s[i];
    if (c == ',' && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9') continue;
    if ((c >= '0' && c <= '9') || c == '.') buf[n++] = c;
    else break;
  }
  if (n == 0) return std::nullopt;
  return ParseNumberPrefix(std::string_view(buf, n));
}

size_t Find(std::string_view s, std::string_view needle, size_t from) {
  if (from >= s.size()) return std::string_view::npos;
  const void* p = memmem(s.data() + from, s.size() - from, needle.data(), needle.size());
  return p ? static_cast<size_t>(static_cast<const char*>(p) - s.data()) : std::string_view::npos;
}

size_t FindStep(std::string_view s) {
  // Walk the 'p's (rarer than 's' in log text) and look back for "ste".
  size_t p =
      FindByteWhere(s, 'p', [&](size_t i) { return i >= 3 && s[i - 3] == 's' && s[i - 2] == 't' && s[i - 1] == 'e'; });
  return p == std::string_view::npos ? p : p - 3;
}

size_t FindRateUnit(std::string_view s, bool* per_it) {
  // Walk the '/'s only: a line has few of them, while 'i' and 's' are everywhere in text.
  size_t unit = std::string_view::npos;
  FindByteWhere(s, '/', [&](size_t i) {
    if (i >= 2 && i + 1 < s.size() && s[i - 2] == 'i' && s[i - 1] == 't' && s[i + 1] == 's') {
      *per_it = false;
      unit = i - 2;
      return true;
    }
    if (i >= 1 && i + 2 < s.size() && s[i - 1] == 's' && s[i + 1] == 'i' && s[i + 2] == 't') {
      *per_it = true;
      unit = i - 1;
      return true;
    }
    return false;
  });
  return unit;
}

// "YYYY-MM-DD hh:mm:ss" (with '-' or '/' and optional ",mmm"/".mmm") at s[pos].
size_t TimestampLength(std::string_view s, size_t pos) {
  if (s.size() < pos + 19) return 0;
  const char* p = s.data() + pos;
  for (int i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18})
    if (!IsDigit(p[i])) return 0;
  if ((p[4] != '-' && p[4] != '/') || p[7] != p[4] || (p[10] != ' ' && p[10] != 'T') || p[13] != ':' || p[16] != ':')
    return 0;
  size_t n = 19;
  if (s.size() > pos + n + 1 && (p[n] == ',' || p[n] == '.') && IsDigit(p[n + 1])) {
    ++n;
    while (pos + n < s.size() && IsDigit(p[n])) ++n;
  }
  if (pos + n < s.size() && p[n] == 'Z') ++n;
  return n;
}

// Strips "[rank0]:", "[titan]", "[2025-..]" and "YYYY-MM-DD ..." logging prefixes, recording the
// first timestamp and rank seen. Returns the rest of the line.
std::string_view StripPrefixes(std::string_view s, StepLine* out) {
  for (int guard = 0; guard < 8; ++guard) {
    size_t i = 0;
    while (i < s.size() && s[i] == ' ') ++i;
    s.remove_prefix(i);
    if (s.empty()) return s;
    if (s[0] == '[') {
      size_t close = s.find(']');
      if (close == std::string_view::npos) return s;
      std::string_view inner = s.substr(1, close - 1);
      size_t ts = TimestampLength(inner, 0);
      if (ts > 0 && ts == inner.size()) {
        if (out->timestamp.empty()) out->timestamp = inner;
      } else if (inner.size() > 4 && inner.substr(0, 4) == "rank" && IsDigit(inner[4])) {
        size_t p = 4;
        if (auto r = IntAt(inner, &p)) out->rank = static_cast<int>(*r);
      } else if (inner == "titan" || inner == "INFO" || inner == "WARNING") {
      } else {
        return s;  // some other bracket: part of the message
      }
      s.remove_prefix(close + 1);
      if (!s.empty() && s[0] == ':') s.remove_prefix(1);
      continue;
    }
    size_t ts = TimestampLength(s, 0);
    if (ts > 0) {
      if (out->timestamp.empty()) out->timestamp = s.substr(0, ts);
      s.remove_prefix(ts);
      // python logging: "2025-.. - root - INFO - message"
      size_t dash = s.find(" - INFO - ");
      if (dash != std::string_view::npos && dash < 64) s.remove_prefix(dash + 10);
      continue;
    }
    return s;
  }
  return s;
}

}  // namespace detail

namespace {
/// A hand-written loop's line ("step 12 loss 1.9", "Epoch 2 Step 12/300 | ...") when no framework
/// parser took it: tried only for lines starting with a letter such a line starts with.
inline void PlainFallback(std::string_view s, StepLine& r) {
  if (r.kind != StepLine::Kind::kNone) return;
  const char c = static_cast<char>(s[0] | 0x20);  // ASCII lower case
  if (c == 's' || c == 'i' || c == 'e' || c == 'g') ParsePlainStep(s, r);
}
}  // namespace

StepLine ParseStepLine(std::string_view line) {
  using namespace detail;
  StepLine r;
  // Fast path for torch's "[rankN]:" copies from other ranks (most lines of a multi-rank log).
  if (int rank = OtherRankPrefix(line)) {
    r.rank = rank;
    return r;
  }
  std::string_view s = StripPrefixes(line, &r);
  if (s.empty()) return r;
  // Another rank's copy of a line: the analysis follows rank 0 (training-logs.md: de-duplicate
  // multi-rank output), so there is nothing more to read here.
  if (r.rank && *r.rank != 0) return r;
  // Cheap dispatch on the first character / markers, most specific first.
  if (s[0] == '{') {
    if (s.size() > 1 && s[1] == '\'') {
      ParseHfDict(s, r);
      return r;
    }
    if (s.size() > 1 && s[1] == '"') {
      ParseJsonMetrics(s, r);
      return r;
    }
  }
  if (s[0] == 'i' && s.substr(0, 5) == "iter ") {
    ParseNanoGpt(s, r);
    PlainFallback(s, r);
    return r;
  }
  if (s[0] == 's' && s.substr(0, 5) == "step ") {
    ParseNanoGpt(s, r);
    PlainFallback(s, r);
    return r;
  }
  if (s[0] == 'S' && s.substr(0, 5) == "Step ") {
    ParseTorchtuneStep(s, r);
    PlainFallback(s, r);
    return r;
  }
  // One scan per marker family: progress rates and "N/M" need a '/', every "step" form shares it.
  constexpr auto npos = std::string_view::npos;
  bool per_it = false;
  if (size_t unit = FindRateUnit(s, &per_it); unit != npos) {
    ParseTqdm(s, unit, per_it, r);
    if (r.kind == StepLine::Kind::kNone && !ParseRichBar(s, r)) PlainFallback(s, r);
    return r;
  }
  if (size_t st = FindStep(s); st != npos) {
    if (Find(s, "step:", st) != npos) {
      ParseTorchtitan(s, r);
      PlainFallback(s, r);
      return r;
    }
    if (Find(s, "global_step=", st > 7 ? st - 7 : 0) != npos || Find(s, "] step=") != npos) {
      ParseDeepSpeed(s, r);
      PlainFallback(s, r);
      return r;
    }
  }
  // Megatron's line is "iteration N/ M | ... |": needs both a '/' and a '|'.
  if (std::memchr(s.data(), '|', s.size()) && std::memchr(s.data(), '/', s.size()) && Find(s, "iteration ") != npos)
    ParseMegatron(s, r);
  else ParseMarker(s, r);
  PlainFallback(s, r);
  return r;
}

}  // namespace sparkops
