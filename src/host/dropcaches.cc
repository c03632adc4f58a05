#include "host/dropcaches.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>

namespace sparkops {

bool IsRoot() { return geteuid() == 0; }

Result<bool> DropCaches(const HostFs& fs) {
  const std::string path = fs.Path(kDropCachesPath);
  ::sync();  // dirty pages are not dropped; write them back first
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC | O_NOFOLLOW);  // never through a link (--root trees)
  if (fd < 0) return IoError(fmt::format("{}: cannot open for writing ({})", path, std::strerror(errno)));
  const char kThree[] = "3\n";
  ssize_t n = ::write(fd, kThree, 2);
  int err = errno;
  ::close(fd);
  if (n != 2) return IoError(fmt::format("{}: write failed ({})", path, std::strerror(err)));
  return true;
}

}  // namespace sparkops
