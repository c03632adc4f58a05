#include "telemetry/terminal_text.h"

#include <cstdlib>
#include <cstring>

namespace sparkops {

std::string_view StripTerminalControls(std::string_view text, std::string* storage) {
  if (!std::memchr(text.data(), '\x1b', text.size())) return text;
  std::string& out = *storage;
  out.clear();
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c != '\x1b') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) break;  // a lone ESC at the end
    const char k = text[i + 1];
    if (k == '[') {  // CSI: parameters and intermediates 0x20-0x3F, then a final byte 0x40-0x7E
      size_t j = i + 2;
      while (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x20 &&
             static_cast<unsigned char>(text[j]) <= 0x3F)
        ++j;
      i = j < text.size() ? j + 1 : j;
    } else if (k == ']') {  // OSC: to BEL or ST (ESC '\')
      size_t j = i + 2;
      while (j < text.size() && text[j] != '\a' && !(text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\'))
        ++j;
      i = j >= text.size() ? j : text[j] == '\a' ? j + 1 : j + 2;
    } else {
      i += 2;
    }
  }
  return out;
}

void SetLiveBarEnvironment() {
  ::setenv("TTY_COMPATIBLE", "1", 0);
  ::setenv("TTY_INTERACTIVE", "1", 0);
  ::setenv("NO_COLOR", "1", 0);
  ::setenv("COLUMNS", "120", 0);
}

}  // namespace sparkops
