#include "host/kern_log.h"

#include "base/strings.h"

namespace sparkops {

std::string_view KernLogText(std::string_view line, double* t, bool* has_t) {
  if (has_t) *has_t = false;
  size_t k = line.find(" kernel: ");
  if (k == std::string_view::npos || k > 64) return {};  // the time and the host come first
  std::string_view text = line.substr(k + 9);
  if (StartsWith(text, "[")) {
    size_t close = text.find(']');
    if (close != std::string_view::npos && close < 24) {
      auto v = ParseDouble(Trim(text.substr(1, close - 1)));
      if (v && *v >= 0) {
        if (t) *t = *v;
        if (has_t) *has_t = true;
        text = text.substr(close + 1);
        if (StartsWith(text, " ")) text.remove_prefix(1);
      }
    }
  }
  return text;
}

std::vector<std::string> PreviousBootKernLines(std::string_view text) {
  const std::string_view one[] = {text};
  return PreviousBootKernLines(one);
}

std::vector<std::string> PreviousBootKernLines(std::span<const std::string_view> texts) {
  std::vector<std::string> previous, current;
  bool seen_start = false;
  double last_t = -1;
  for (std::string_view text : texts)
    for (std::string_view line : SplitLines(text)) {
      double t = 0;
      bool has_t = false;
      std::string_view k = KernLogText(line, &t, &has_t);
      if (k.empty()) continue;
      const bool start = has_t ? last_t >= 0 && t < last_t : StartsWith(k, "Linux version ") && !current.empty();
      if (has_t) last_t = t;
      if (start) {
        seen_start = true;
        previous = std::move(current);
        current.clear();
      }
      current.emplace_back(k.substr(0, 2048));
      if (current.size() > 2 * kKernLogMaxLines)
        current.erase(current.begin(), current.end() - static_cast<long>(kKernLogMaxLines));
    }
  if (!seen_start) return {};
  if (previous.size() > kKernLogMaxLines)
    previous.erase(previous.begin(), previous.end() - static_cast<long>(kKernLogMaxLines));
  return previous;
}

}  // namespace sparkops
