#pragma once
/// Byte scans 16 or 64 bytes at a time (SSE2 on x86-64, NEON on arm64, a plain loop elsewhere).
/// The log parsers look for a rare-ish byte and check its neighbours ('/' of "it/s", 'p' of
/// "step"): lines with many hits (paths full of '/') cost one memchr call per hit otherwise. The
/// line readers take the '\n' and '\r' of 64 bytes at once as bit masks.
#include <cstddef>
#include <cstdint>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace sparkops {

/// Calls `hit(i)` for each i with s[i] == c, in increasing order, until it returns true; returns
/// that i, or npos when no call did.
template <class Hit>
size_t FindByteWhere(std::string_view s, char c, Hit&& hit) {
  const char* d = s.data();
  const size_t n = s.size();
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i nc = _mm_set1_epi8(c);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
    for (auto m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nc))); m; m &= m - 1)
      if (size_t j = i + static_cast<size_t>(__builtin_ctz(m)); hit(j)) return j;
  }
#elif defined(__ARM_NEON)
  const uint8x16_t nc = vdupq_n_u8(static_cast<uint8_t>(c));
  for (; i + 16 <= n; i += 16) {
    const uint8x16_t eq = vceqq_u8(vld1q_u8(reinterpret_cast<const uint8_t*>(d + i)), nc);
    // One nibble per byte (shift-right-narrow), then one bit per nibble.
    uint64_t m =
        vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(eq), 4)), 0) & 0x8888888888888888ull;
    for (; m; m &= m - 1)
      if (size_t j = i + static_cast<size_t>(__builtin_ctzll(m) >> 2); hit(j)) return j;
  }
#endif
  for (; i < n; ++i)
    if (d[i] == c && hit(i)) return i;
  return std::string_view::npos;
}

/// Which of the 64 bytes at `p` are '\n' (bit i of `*nl` for p[i]) and which are '\r' (`*cr`);
/// only the first `avail` bytes are read when fewer than 64 are there (the others get no bit).
/// For walking a buffer line by line 64 bytes at a time: finding the next line end is then a
/// bit scan, not a loop whose exit the branch predictor misses once per line.
inline void LineBreakMasks(const char* p, size_t avail, uint64_t* nl, uint64_t* cr) {
  uint64_t n = 0, r = 0;
  if (avail < 64) {
    for (size_t i = 0; i < avail; ++i) {
      n |= static_cast<uint64_t>(p[i] == '\n') << i;
      r |= static_cast<uint64_t>(p[i] == '\r') << i;
    }
  } else {
#if defined(__SSE2__)
    const __m128i cn = _mm_set1_epi8('\n'), cc = _mm_set1_epi8('\r');
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
    const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 48));
    auto bits = [](__m128i v, __m128i c) {
      return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, c))));
    };
    n = bits(v0, cn) | bits(v1, cn) << 16 | bits(v2, cn) << 32 | bits(v3, cn) << 48;
    r = bits(v0, cc) | bits(v1, cc) << 16 | bits(v2, cc) << 32 | bits(v3, cc) << 48;
#elif defined(__ARM_NEON)
    const uint8_t* u = reinterpret_cast<const uint8_t*>(p);
    const uint8x16_t v0 = vld1q_u8(u), v1 = vld1q_u8(u + 16), v2 = vld1q_u8(u + 32), v3 = vld1q_u8(u + 48);
    // Each byte keeps its bit within its group of eight; three pairwise adds fold the groups.
    const uint8x16_t bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    auto bits = [&](uint8x16_t c) {
      const uint8x16_t a = vpaddq_u8(vandq_u8(vceqq_u8(v0, c), bit), vandq_u8(vceqq_u8(v1, c), bit));
      const uint8x16_t b = vpaddq_u8(vandq_u8(vceqq_u8(v2, c), bit), vandq_u8(vceqq_u8(v3, c), bit));
      const uint8x16_t s = vpaddq_u8(a, b);
      return vgetq_lane_u64(vreinterpretq_u64_u8(vpaddq_u8(s, s)), 0);
    };
    n = bits(vdupq_n_u8('\n'));
    r = bits(vdupq_n_u8('\r'));
#else
    for (size_t i = 0; i < 64; ++i) {
      n |= static_cast<uint64_t>(p[i] == '\n') << i;
      r |= static_cast<uint64_t>(p[i] == '\r') << i;
    }
#endif
  }
  *nl = n;
  *cr = r;
}

}  // namespace sparkops
