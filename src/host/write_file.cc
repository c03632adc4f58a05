#include "host/write_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sparkops {

Result<void> WriteFileAtomically(const std::string& path, std::string_view content) {
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  auto fail = [&](const char* what) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return IoError(fmt::format("cannot {} {}: {}", what, path, std::strerror(e)));
  };
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return fail("write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(fd) != 0 && errno != EINVAL) return fail("sync");
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return IoError(fmt::format("cannot write {}: {}", path, std::strerror(e)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return IoError(fmt::format("cannot write {}: {}", path, std::strerror(e)));
  }
  return {};
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Result<void> RefuseOutputOverInput(std::string_view flag, const std::string& output,
                                   const std::vector<std::string>& inputs) {
  for (const auto& in : inputs)
    if (!in.empty() && SameFile(output, in))
      return InputError(fmt::format("{} {}: is the input {}; choose another output file", flag, output, in));
  return {};
}

}  // namespace sparkops
