#include "base/encoding.h"

namespace sparkops {

namespace {
bool Starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

std::optional<std::string> DescribeNonUtf8(std::string_view h) {
  using namespace std::string_view_literals;
  if (Starts(h, "\xFF\xFE\x00\x00"sv)) return "UTF-32 little-endian text (byte-order mark FF FE 00 00)";
  if (Starts(h, "\x00\x00\xFE\xFF"sv)) return "UTF-32 big-endian text (byte-order mark 00 00 FE FF)";
  if (Starts(h, "\xFF\xFE"sv)) return "UTF-16 little-endian text (byte-order mark FF FE)";
  if (Starts(h, "\xFE\xFF"sv)) return "UTF-16 big-endian text (byte-order mark FE FF)";
  // No mark: ASCII-range text in UTF-16 has a NUL in every other byte (odd bytes for LE, even for BE).
  size_t n = std::min<size_t>(h.size(), 64) & ~size_t{1};
  if (n < 8) return std::nullopt;
  size_t even_nul = 0, odd_nul = 0;
  for (size_t i = 0; i < n; i += 2) {
    even_nul += h[i] == '\0';
    odd_nul += h[i + 1] == '\0';
  }
  const size_t pairs = n / 2;
  if (odd_nul == pairs && even_nul == 0)
    return "UTF-16 little-endian text (no byte-order mark; every other byte is NUL)";
  if (even_nul == pairs && odd_nul == 0) return "UTF-16 big-endian text (no byte-order mark; every other byte is NUL)";
  return std::nullopt;
}

std::string NonUtf8Message(const std::string& path, const std::string& found) {
  return path + ": " + found + "; sparkops reads UTF-8 logs: convert it first, e.g. `iconv -f " +
         (found.rfind("UTF-32", 0) == 0 ? "UTF-32" : "UTF-16") + " -t UTF-8 " + path + " > " + path + ".utf8`";
}

}  // namespace sparkops
