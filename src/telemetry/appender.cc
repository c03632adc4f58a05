#include "telemetry/appender.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/strings.h"
#include "host/hostfs.h"

namespace sparkops {

std::optional<long> FindFlockHolder(std::string_view proc_locks, uint64_t dev_major, uint64_t dev_minor, uint64_t ino) {
  // "1: FLOCK  ADVISORY  WRITE 2417 fd:01:1234567 0 EOF" (device numbers in hex, inode decimal)
  for (std::string_view line : SplitLines(proc_locks)) {
    std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() < 6 || f[1] != "FLOCK") continue;  // "N: -> FLOCK ..." lines are waiters, not holders
    constexpr size_t k = 3;                        // N: FLOCK ADVISORY WRITE <pid> <maj:min:inode> ...
    std::string_view id = f[k + 2];
    size_t c1 = id.find(':'), c2 = id.rfind(':');
    if (c1 == std::string_view::npos || c2 == c1) continue;
    uint64_t maj = 0, min = 0, in = 0;
    auto hex = [](std::string_view t, uint64_t& v) {
      return std::from_chars(t.data(), t.data() + t.size(), v, 16).ec == std::errc();
    };
    if (!hex(id.substr(0, c1), maj) || !hex(id.substr(c1 + 1, c2 - c1 - 1), min) ||
        std::from_chars(id.data() + c2 + 1, id.data() + id.size(), in).ec != std::errc())
      continue;
    long pid = 0;
    if (maj == dev_major && min == dev_minor && in == ino &&
        std::from_chars(f[k + 1].data(), f[k + 1].data() + f[k + 1].size(), pid).ec == std::errc())
      return pid;
  }
  return std::nullopt;
}

Result<CsvAppender> CsvAppender::Open(const std::string& path, const std::string& header) {
  auto dir = OutDir::ForFile("--out", path);
  if (!dir) return std::unexpected(dir.error());
  auto a = Open(*dir, std::filesystem::path(path).filename().string(), header);
  if (a) a->path_ = path;
  return a;
}

Result<CsvAppender> CsvAppender::Open(const OutDir& dir, std::string_view name, const std::string& header,
                                      bool create_new) {
  const std::string path = dir.PathOf(name);
  auto opened = create_new ? dir.CreateNew(name) : dir.OpenForAppend(name);
  if (!opened) return std::unexpected(opened.error());
  const int fd = *opened;
  CsvAppender a(fd, path);
  struct stat st {};
  if (fstat(fd, &st) != 0) return IoError(fmt::format("cannot stat {}: {}", path, std::strerror(errno)));
  // One writer per file: a second sampler appending to it would interleave rows.
  if (S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    std::string who = "another process";
    if (auto locks = ReadLocalFile("/proc/locks", 4u << 20))
      if (auto pid = FindFlockHolder(*locks, major(st.st_dev), minor(st.st_dev), st.st_ino))
        who = fmt::format("process {}", *pid);
    return InputError(fmt::format("{}: already being written by {} (one writer per file)", path, who));
  }
  if (!S_ISREG(st.st_mode) || st.st_size == 0) {
    // A new file (or a device/pipe such as /dev/full): header first.
    if (auto w = a.Append(header); !w) return std::unexpected(w.error());
    return a;
  }
  // Read back through a second descriptor of the same file (never a name a link could redirect).
  auto reader = dir.OpenForRead(name);
  if (!reader) return std::unexpected(reader.error());
  const int rfd = *reader;
  struct stat rst {};
  if (::fstat(rfd, &rst) != 0 || rst.st_dev != st.st_dev || rst.st_ino != st.st_ino) {
    ::close(rfd);
    return InputError(fmt::format("{}: replaced while being opened; try again", path));
  }
  std::string head(header.size(), '\0');
  ssize_t n = pread(rfd, head.data(), head.size(), 0);
  // The last kTailBytes: where the last complete line ends.
  const off_t tail_len = std::min<off_t>(st.st_size, kTailBytes);
  std::string tail(static_cast<size_t>(tail_len), '\0');
  bool tail_ok = pread(rfd, tail.data(), tail.size(), st.st_size - tail_len) == tail_len;
  ::close(rfd);
  if (n != static_cast<ssize_t>(header.size()) || head != header)
    return InputError(
        fmt::format("{}: existing file does not start with sparkops's CSV header (columns differ); "
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
