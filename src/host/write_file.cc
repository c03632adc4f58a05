#include "host/write_file.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>

#include <fmt/format.h>

namespace sparkops {

namespace {

std::string OwnerName(uid_t uid) {
  struct passwd pw {
  }, *found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) return fmt::format("{} (uid {})", pw.pw_name, uid);
  return fmt::format("uid {}", uid);
}

/// `dir/name`; "" and "/" both mean the root directory (the walk's "" is "/").
std::string Join(const std::string& dir, std::string_view name) {
  if (dir.empty() || dir == "/") return "/" + std::string(name);
  return dir + "/" + std::string(name);
}

/// The sshd/cron rule for a directory root writes in: owned by root, not writable by group or
/// others unless sticky (then only a file's owner may remove or rename it).
Result<void> TrustedByRoot(std::string_view flag, const std::string& path, const std::string& dir,
                           const struct stat& st) {
  const std::string where = dir.empty() ? "/" : dir;
  if (st.st_uid != 0)
    return InputError(
        fmt::format("{} {}: {} is owned by {}, not root; as root sparkops writes only in "
                    "directories root owns (docs/reliability.md, Running as root)",
                    flag, path, where, OwnerName(st.st_uid)));
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
    return InputError(
        fmt::format("{} {}: {} (owner {}) is writable by group or others without the sticky "
                    "bit (mode {:04o}); as root sparkops refuses it (docs/reliability.md)",
                    flag, path, where, OwnerName(st.st_uid), st.st_mode & 07777));
  return {};
}

/// Root's walk: from "/", one component at a time, each directory checked before the next is
/// looked up in it; a link is followed only when root owns it (then its target is walked the same way).
/// `path` is walked; `shown` names it in messages (the output file, for ForFile).
Result<int> OpenAsRoot(std::string_view flag, const std::string& path, const std::string& shown, bool create) {
  std::string abs = path;
  if (abs.empty() || abs[0] != '/') {
    char cwd[4096];
    if (!::getcwd(cwd, sizeof cwd)) return IoError(fmt::format("{} {}: getcwd: {}", flag, shown, std::strerror(errno)));
    abs = Join(cwd, path);
  }
  std::deque<std::string> todo;
  auto push_front = [&todo](std::string_view p) {
    std::vector<std::string> parts;
    size_t i = 0;
    while (i <= p.size()) {
      size_t j = p.find('/', i);
      if (j == std::string_view::npos) j = p.size();
      if (j > i) parts.emplace_back(p.substr(i, j - i));
      i = j + 1;
    }
    todo.insert(todo.begin(), parts.begin(), parts.end());
  };
  push_front(abs);
  int fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError(fmt::format("{} {}: cannot open /: {}", flag, shown, std::strerror(errno)));
  std::string at;  // the directory fd refers to, as walked ("" = "/")
  auto fail = [&fd](std::unexpected<Error> e) -> Result<int> {
    ::close(fd);
    return e;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(IoError(std::strerror(errno)));
  if (auto ok = TrustedByRoot(flag, shown, at, st); !ok) return fail(std::unexpected(ok.error()));
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == ".") continue;
    const std::string next =
        c == ".." ? std::filesystem::path(at.empty() ? "/" : at).parent_path().string() : Join(at, c);
    if (::fstatat(fd, c.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT || !create)
        return fail(IoError(fmt::format("{} {}: {}: {}", flag, shown, next, std::strerror(errno))));
      if (::mkdirat(fd, c.c_str(), 0755) != 0 && errno != EEXIST)
        return fail(InputError(fmt::format("{} {}: cannot create {}: {}", flag, shown, next, std::strerror(errno))));
      if (::fstatat(fd, c.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return fail(IoError(fmt::format("{} {}: {}: {}", flag, shown, next, std::strerror(errno))));
    }
    if (S_ISLNK(st.st_mode)) {
      if (st.st_uid != 0)
        return fail(
            InputError(fmt::format("{} {}: {} is a link owned by {}; as root sparkops never follows a "
                                   "link another user made (docs/reliability.md)",
                                   flag, shown, next, OwnerName(st.st_uid))));
      if (++links > 40) return fail(InputError(fmt::format("{} {}: too many links", flag, shown)));
      char target[4096];
      ssize_t n = ::readlinkat(fd, c.c_str(), target, sizeof target - 1);
      if (n <= 0) return fail(IoError(fmt::format("{} {}: readlink {}: {}", flag, shown, next, std::strerror(errno))));
      std::string_view t(target, static_cast<size_t>(n));
      push_front(t);
      if (t[0] == '/') {
        int root = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) return fail(IoError(std::strerror(errno)));
        ::close(fd);
        fd = root;
        at.clear();
      }
      continue;
    }
    if (!S_ISDIR(st.st_mode)) return fail(InputError(fmt::format("{} {}: {} is not a directory", flag, shown, next)));
    int nfd = ::openat(fd, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (nfd < 0) return fail(IoError(fmt::format("{} {}: {}: {}", flag, shown, next, std::strerror(errno))));
    ::close(fd);
    fd = nfd;
    at = next == "/" ? "" : next;
    if (::fstat(fd, &st) != 0) return fail(IoError(std::strerror(errno)));
    if (auto ok = TrustedByRoot(flag, shown, at, st); !ok) return fail(std::unexpected(ok.error()));
  }
  return fd;
}

/// One write() loop; false with errno set (ENOSPC for no progress).
bool WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

Result<OutDir> OutDir::Open(std::string_view flag, const std::string& path, bool create) {
  return Open(flag, path, path, create);
}

Result<OutDir> OutDir::Open(std::string_view flag, const std::string& path, const std::string& shown, bool create) {
  if (::geteuid() == 0) {
    auto fd = OpenAsRoot(flag, path, shown, create);
    if (!fd) return std::unexpected(fd.error());
    return OutDir(*fd, path);
  }
  if (create) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return InputError(fmt::format("{} {}: cannot create: {}", flag, path, ec.message()));
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOTDIR) return InputError(fmt::format("{} {}: not a directory", flag, shown));
  if (fd < 0) return IoError(fmt::format("{} {}: {}", flag, shown, std::strerror(errno)));
  return OutDir(fd, path);
}

Result<OutDir> OutDir::ForFile(std::string_view flag, const std::string& file) {
  std::string parent = std::filesystem::path(file).parent_path().string();
  return Open(flag, parent.empty() ? "." : parent, file, false);
}

OutDir& OutDir::operator=(OutDir&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_, path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

OutDir::~OutDir() {
  if (fd_ >= 0) ::close(fd_);
}

std::string OutDir::PathOf(std::string_view name) const { return path_ == "." ? std::string(name) : Join(path_, name); }

bool OutDir::Has(std::string_view name) const {
  struct stat st {};
  return ::fstatat(fd_, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

Result<int> OutDir::CreateNew(std::string_view name) const {
  int fd =
      ::openat(fd_, std::string(name).c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST)
    return InputError(fmt::format("{}: already exists (sparkops creates it new, never through a link)", PathOf(name)));
  if (fd < 0) return IoError(fmt::format("cannot create {}: {}", PathOf(name), std::strerror(errno)));
  return fd;
}

Result<int> OutDir::OpenForAppend(std::string_view name) const {
  // O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of blocking in open().
  int fd = ::openat(fd_, std::string(name).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                    0644);
  if (fd < 0 && errno == ENXIO) return InputError(fmt::format("{}: a FIFO with no reader", PathOf(name)));
  struct stat st {};
  // ELOOP: O_NOFOLLOW met a link; EACCES: fs.protected_symlinks refused another user's link first.
  if (fd < 0 && (errno == ELOOP || errno == EACCES) &&
      ::fstatat(fd_, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    return InputError(fmt::format("{}: is a link; sparkops never writes through a link", PathOf(name)));
  if (fd < 0) return IoError(fmt::format("cannot open {} for appending: {}", PathOf(name), std::strerror(errno)));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (::geteuid() == 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid != 0 || st.st_nlink > 1)) {
    ::close(fd);
    return InputError(
        fmt::format("{}: {}; as root sparkops appends only to its own files (docs/reliability.md)", PathOf(name),
                    st.st_uid != 0 ? "owned by " + OwnerName(st.st_uid) : std::string("has other hard links")));
  }
  return fd;
}

Result<int> OutDir::OpenForRead(std::string_view name) const {
  int fd = ::openat(fd_, std::string(name).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return IoError(fmt::format("cannot read {}: {}", PathOf(name), std::strerror(errno)));
  return fd;
}

Result<void> OutDir::WriteAtomically(std::string_view name, std::string_view content) const {
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    unsigned char r[8];
    if (::getrandom(r, sizeof r, 0) != static_cast<ssize_t>(sizeof r))
      return IoError(fmt::format("cannot write {}: getrandom: {}", PathOf(name), std::strerror(errno)));
    tmp = fmt::format(".{}.tmp-{:02x}", name, fmt::join(r, ""));
    fd = ::openat(fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return IoError(fmt::format("cannot write {}: {}", PathOf(name), std::strerror(errno)));
  auto fail = [&](const char* what, int e) {
    if (fd >= 0) ::close(fd);
    ::unlinkat(fd_, tmp.c_str(), 0);
    return IoError(fmt::format("cannot {} {}: {}", what, PathOf(name), std::strerror(e)));
  };
  if (!WriteAll(fd, content)) return fail("write", errno);
  if (::fdatasync(fd) != 0 && errno != EINVAL) return fail("sync", errno);
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0) return fail("write", errno);
  if (::renameat(fd_, tmp.c_str(), fd_, std::string(name).c_str()) != 0) return fail("write", errno);
  return {};
}

Result<void> WriteFileAtomically(const std::string& path, std::string_view content) {
  auto dir = OutDir::ForFile("output", path);
  if (!dir) return std::unexpected(dir.error());
  return dir->WriteAtomically(std::filesystem::path(path).filename().string(), content);
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
