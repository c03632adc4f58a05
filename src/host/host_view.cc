#include "host/host_view.h"

#include <unistd.h>

#include "base/strings.h"

namespace sparkops {

std::string ReadHostname(const HostView& host) {
  if (host.fs.is_real_root()) {
    char name[256] = "";
    ::gethostname(name, sizeof name - 1);
    return name;
  }
  auto text = host.fs.Read("/proc/sys/kernel/hostname", 4096);
  return text ? std::string(Trim(*text)) : std::string();
}

}  // namespace sparkops
