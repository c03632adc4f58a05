#include "host/pressure.h"

#include "base/strings.h"

namespace sparkops {

Result<double> ParseMemoryPressureSomeAvg10(std::string_view text) {
  for (std::string_view line : SplitLines(text)) {
    line = Trim(line);
    if (!StartsWith(line, "some ")) continue;
    for (std::string_view field : Split(line.substr(5), ' ')) {
      if (!StartsWith(field, "avg10=")) continue;
      auto v = ParseDouble(field.substr(6));
      if (!v || *v < 0 || *v > 100)
        return InputError("/proc/pressure/memory: some avg10: not a percentage: '" + std::string(field.substr(6)) + "'");
      return *v;
    }
    return InputError("/proc/pressure/memory: 'some' line has no avg10 field");
  }
  return InputError("/proc/pressure/memory: no 'some' line");
}

Result<double> ReadMemoryPressureSomeAvg10(const HostFs& fs) {
  auto text = fs.Read("/proc/pressure/memory", 4096);
  if (!text) return std::unexpected(text.error());
  return ParseMemoryPressureSomeAvg10(*text);
}

}  // namespace sparkops
