#include "host/bootid.h"

#include "base/strings.h"

namespace sparkops {

namespace {
constexpr std::string_view kBootIdPath = "/proc/sys/kernel/random/boot_id";
}

Result<std::string> ParseBootId(std::string_view text) {
  std::string id = ToLower(Trim(text));
  bool ok = id.size() == 36;
  for (size_t i = 0; ok && i < id.size(); ++i) {
    char c = id[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    ok = dash ? c == '-' : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  }
  if (!ok) return InputError(std::string(kBootIdPath) + ": not a boot id: '" + std::string(Trim(text)) + "'");
  return id;
}

Result<std::string> ReadBootId(const HostFs& fs) {
  auto text = fs.Read(kBootIdPath, 4096);
  if (!text) return std::unexpected(text.error());
  return ParseBootId(*text);
}

}  // namespace sparkops
