#include "host/hostfs.h"
#include "host/dir_names.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sparkops {

HostFs::HostFs(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string HostFs::Path(std::string_view host_path) const {
  std::string out = root_;
  if (host_path.empty() || host_path[0] != '/') out += '/';
  out += host_path;
  return out;
}

namespace {
/// Reads `fd` to its end and closes it. `size_hint`: the size fstat gave (0 for /proc files and
/// pipes, which report none): the bytes are then read straight into a string of that size, and a
/// read that returns exactly that many bytes ends the file (one read per file, no copy); a file
/// that grew meanwhile is read on to its end as below.
Result<std::string> ReadFd(int fd, const std::string& name, size_t max_bytes, size_t size_hint = 0) {
  std::string data;
  if (size_hint > 0 && size_hint <= max_bytes) {
    size_t got = 0;
    int err = 0;
    // +1: a file longer than it was is seen at once. resize_and_overwrite: the bytes are not
    // zeroed first (a memset of every RECORD was 6 % of preflight).
    data.resize_and_overwrite(size_hint + 1, [&](char* p, size_t cap) {
      for (;;) {
        ssize_t n = ::read(fd, p + got, cap - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) err = errno;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
        if (got == size_hint || got == cap) break;
      }
      return got;
    });
    if (err) {
      ::close(fd);
      return IoError(name + ": read failed: " + std::strerror(err));
    }
    if (got <= size_hint) {
      ::close(fd);
      return data;
    }
    // grew since fstat: read on (bounded below)
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return IoError(name + ": read failed: " + std::strerror(e));
    }
    if (n == 0) break;
    if (data.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return InputError(name + ": larger than the " + std::to_string(max_bytes) + "-byte limit");
    }
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

const char* KindName(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  return "not a regular file";
}

/// Opens `path` for reading: a regular file (or a pipe where `kind` allows one) else an Input error
/// naming `name`. `size`, when given, receives the regular file's size (0 for a pipe).
/// `blocking`: clear O_NONBLOCK again (OpenInput's contract); ReadPath, which reads regular files
/// only, skips those two fcntl calls: O_NONBLOCK has no effect on a regular file (open(2)).
Result<int> OpenNamed(const std::string& path, const std::string& name, InputKind kind, int fifo_wait_ms,
                      uint64_t* size = nullptr, bool blocking = true) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return NotFound(name + ": no such file");
    if (e == ENXIO) return InputError(name + ": a socket, not a regular file");
    return IoError(name + ": cannot open: " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return IoError(name + ": cannot stat: " + std::strerror(e));
  }
  bool pipe_ok = kind == InputKind::kRegularOrPipe && S_ISFIFO(st.st_mode);
  if (!S_ISREG(st.st_mode) && !pipe_ok) {
    ::close(fd);
    return InputError(name + ": " + KindName(st.st_mode) + ", not a regular file" +
                      (S_ISFIFO(st.st_mode) ? " (this input is read whole: save it to a file first)" : ""));
  }
  if (pipe_ok) {  // wait for the writer's first byte (or its close) so a FIFO nobody writes to cannot hang
    pollfd p{fd, POLLIN, 0};
    int r;
    do r = ::poll(&p, 1, fifo_wait_ms);
    while (r < 0 && errno == EINTR);
    if (r == 0) {
      ::close(fd);
      return InputError(fmt::format("{}: a FIFO with no writer (waited {:g} s)", name, fifo_wait_ms / 1000.0));
    }
  }
  if (blocking || pipe_ok) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (size) *size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  return fd;
}

Result<std::string> ReadPath(const std::string& path, const std::string& name, size_t max_bytes) {
  uint64_t size = 0;
  auto fd = OpenNamed(path, name, InputKind::kRegular, 0, &size, /*blocking=*/false);
  if (!fd) return std::unexpected(fd.error());
  return ReadFd(*fd, name, max_bytes, size <= max_bytes ? static_cast<size_t>(size) : 0);
}
}  // namespace

Result<std::string> ReadLocalFileTail(const std::string& path, size_t max_bytes, bool* cut) {
  *cut = false;
  auto fd = OpenNamed(path, path, InputKind::kRegular, 0);
  if (!fd) return std::unexpected(fd.error());
  struct stat st {};
  if (::fstat(*fd, &st) != 0 || static_cast<uint64_t>(st.st_size) <= max_bytes) return ReadFd(*fd, path, max_bytes);
  off_t from = st.st_size - static_cast<off_t>(max_bytes);
  if (::lseek(*fd, from, SEEK_SET) < 0) {
    int e = errno;
    ::close(*fd);
    return IoError(path + ": cannot seek: " + std::strerror(e));
  }
  auto text = ReadFd(*fd, path, max_bytes);  // a file growing meanwhile: its new bytes past the cap are an error
  if (!text) return text;
  *cut = true;
  if (auto nl = text->find('\n'); nl != std::string::npos) text->erase(0, nl + 1);
  return text;
}

Result<int> OpenInput(const std::string& path, InputKind kind, int fifo_wait_ms) {
  return OpenNamed(path, path, kind, fifo_wait_ms);
}

Result<int> OpenRegularFile(const std::string& path, uint64_t* size) {
  return OpenNamed(path, path, InputKind::kRegular, 0, size, /*blocking=*/false);
}

Result<std::string> HostFs::Read(std::string_view host_path, size_t max_bytes) const {
  return ReadPath(Path(host_path), std::string(host_path), max_bytes);
}

bool HostFs::Exists(std::string_view host_path) const {
  struct stat st;
  return ::lstat(Path(host_path).c_str(), &st) == 0;
}

bool HostFs::IsDir(std::string_view host_path) const {
  struct stat st;
  return ::stat(Path(host_path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::string> HostFs::ReadHead(std::string_view host_path, size_t max_bytes, bool* cut) const {
  const std::string name(host_path);
  auto fd = OpenNamed(Path(host_path), name, InputKind::kRegular, 0, nullptr, /*blocking=*/false);
  if (!fd) return std::unexpected(fd.error());
  std::string data(max_bytes + 1, '\0');  // +1: one byte more tells a longer file
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(*fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(*fd);
      return IoError(name + ": read failed: " + std::strerror(e));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(*fd);
  if (cut) *cut = got > max_bytes;
  data.resize(std::min(got, max_bytes));
  data.shrink_to_fit();
  return data;
}

Result<std::vector<std::string>> HostFs::List(std::string_view host_path, size_t max_entries) const {
  DIR* d = ::opendir(Path(host_path).c_str());
  if (!d) return NotFound(std::string(host_path) + ": cannot list: " + std::strerror(errno));
  return ReadDirNames(d, max_entries);
}

std::optional<std::string> HostFs::ReadLink(std::string_view host_path) const {
  char buf[4096];
  ssize_t n = ::readlink(Path(host_path).c_str(), buf, sizeof buf);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::string> ReadLocalFile(const std::string& path, size_t max_bytes) { return ReadPath(path, path, max_bytes); }

}  // namespace sparkops
