#include "host/hostfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
Result<std::string> ReadFd(int fd, const std::string& name, size_t max_bytes) {
  std::string data;
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

Result<std::string> ReadPath(const std::string& path, const std::string& name, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return NotFound(name + ": no such file");
    return IoError(name + ": cannot open: " + std::strerror(e));
  }
  return ReadFd(fd, name, max_bytes);
}
}  // namespace

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

Result<std::vector<std::string>> HostFs::List(std::string_view host_path) const {
  DIR* d = ::opendir(Path(host_path).c_str());
  if (!d) return NotFound(std::string(host_path) + ": cannot list: " + std::strerror(errno));
  std::vector<std::string> out;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    out.emplace_back(e->d_name);
  }
  ::closedir(d);
  return out;
}

std::optional<std::string> HostFs::ReadLink(std::string_view host_path) const {
  char buf[4096];
  ssize_t n = ::readlink(Path(host_path).c_str(), buf, sizeof buf);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::string> ReadLocalFile(const std::string& path, size_t max_bytes) {
  return ReadPath(path, path, max_bytes);
}

}  // namespace sparkops
