#include "host/cgroup.h"

#include <vector>

#include "base/strings.h"

namespace sparkops {

std::optional<std::pair<std::string, std::string>> ParseCgroup2Mount(std::string_view mountinfo) {
  for (std::string_view line : SplitLines(mountinfo)) {
    size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::string_view after = line.substr(dash + 3);
    if (!after.starts_with("cgroup2 ")) continue;
    std::vector<std::string_view> f;
    for (std::string_view rest = line.substr(0, dash); f.size() < 5;) {
      size_t sp = rest.find(' ');
      f.push_back(rest.substr(0, sp));
      if (sp == std::string_view::npos) break;
      rest = rest.substr(sp + 1);
    }
    if (f.size() == 5) return std::pair{std::string(f[4]), std::string(f[3])};
  }
  return std::nullopt;
}

std::optional<std::string> ParseCgroup2Path(std::string_view proc_cgroup) {
  for (std::string_view line : SplitLines(proc_cgroup))
    if (line.starts_with("0::")) return std::string(line.substr(3));
  return std::nullopt;
}

}  // namespace sparkops
