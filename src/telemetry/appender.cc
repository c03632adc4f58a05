#include "telemetry/appender.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sparkops {

Result<CsvAppender> CsvAppender::Open(const std::string& path, const std::string& header) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(fmt::format("cannot open {} for appending: {}", path, std::strerror(errno)));
  CsvAppender a(fd, path);
  struct stat st {};
  if (fstat(fd, &st) != 0) return IoError(fmt::format("cannot stat {}: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode) || st.st_size == 0) {
    // A new file (or a device/pipe such as /dev/full): header first.
    if (auto w = a.Append(header); !w) return std::unexpected(w.error());
    return a;
  }
  int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd < 0) return IoError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  std::string head(header.size(), '\0');
  ssize_t n = pread(rfd, head.data(), head.size(), 0);
  // The last kTailBytes: where the last complete line ends.
  const off_t tail_len = std::min<off_t>(st.st_size, kTailBytes);
  std::string tail(static_cast<size_t>(tail_len), '\0');
  bool tail_ok = pread(rfd, tail.data(), tail.size(), st.st_size - tail_len) == tail_len;
  ::close(rfd);
  if (n != static_cast<ssize_t>(header.size()) || head != header)
    return InputError(fmt::format("{}: existing file does not start with sparkops's CSV header (columns differ); "
                                  "use a new file",
                                  path));
  if (!tail_ok || tail.back() == '\n') return a;
  size_t nl = tail.rfind('\n');
  if (!header.empty() && nl != std::string::npos) {  // a torn CSV row: drop it
    const off_t keep = st.st_size - tail_len + static_cast<off_t>(nl) + 1;
    if (::ftruncate(fd, keep) != 0) return IoError(fmt::format("cannot truncate {}: {}", path, std::strerror(errno)));
    a.dropped_ = static_cast<size_t>(st.st_size - keep);
    return a;
  }
  if (auto w = a.Append("\n"); !w) return std::unexpected(w.error());  // text, not rows: keep it, end the line
  return a;
}

CsvAppender::~CsvAppender() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> CsvAppender::Append(std::string_view row, bool sync) {
  size_t done = 0;
  while (done < row.size()) {
    ssize_t n = ::write(fd_, row.data() + done, row.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError(fmt::format("cannot write {}: {}", path_, n < 0 ? std::strerror(errno) : "no progress"));
    done += static_cast<size_t>(n);
  }
  return sync ? Sync() : Result<void>{};
}

Result<void> CsvAppender::Sync() {
  if (fdatasync(fd_) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP)
    return IoError(fmt::format("cannot sync {}: {}", path_, std::strerror(errno)));
  return {};
}

}  // namespace sparkops
