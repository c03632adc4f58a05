#include "guard/pattern.h"

#include <regex.h>

#include <algorithm>
#include <cstring>

namespace sparkops::guard {

struct Pattern::Compiled {
  regex_t re{};
  ~Compiled() { ::regfree(&re); }
};

Result<Pattern> Pattern::Compile(std::string_view flag, std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InputError(std::string(flag) + ": " + why + ": '" + std::string(text) + "'");
  };
  if (text.empty()) return bad("empty pattern");
  if (text.size() > 1024) return bad("longer than 1024 bytes");
  if (text.find('\0') != std::string_view::npos) return bad("contains a NUL byte");
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '\\') continue;
    if (text[i + 1] >= '1' && text[i + 1] <= '9') return bad("back-references (\\1 ...) are not supported");
    ++i;  // skip the escaped character ("\\\\1" is a backslash then 1)
  }
  auto c = std::make_shared<Compiled>();
  const std::string z(text);
  if (int rc = ::regcomp(&c->re, z.c_str(), REG_EXTENDED | REG_NOSUB); rc != 0) {
    char msg[256];
    ::regerror(rc, &c->re, msg, sizeof msg);
    return bad(std::string("not a POSIX extended regular expression (") + msg + ")");
  }
  Pattern p;
  p.re_ = std::move(c);
  p.text_ = z;
  return p;
}

bool Pattern::Search(std::string_view text) const {
  if (!re_) return false;
  char buf[kMatchBytes + 1];  // the bounded copy, NUL-terminated for regexec (no allocation here)
  const size_t n = std::min(text.size(), kMatchBytes);
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
  return ::regexec(&re_->re, buf, 0, nullptr, 0) == 0;
}

}  // namespace sparkops::guard
