// ReadForProcess, ListOwned, OwnerUid: paths other users chose, opened without following a link,
// opening a non-regular file or reading a pseudo filesystem (host/owned_read.h).
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "base/strings.h"
#include "host/dir_names.h"
#include "host/owned_read.h"
#include "host/read_budget.h"

namespace sparkops {

namespace {

/// A descriptor closed at scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

/// Filesystems whose files are the kernel's, not a user's: reading one can drain or trigger
/// something (/proc/kmsg, tracing pipes) or reveal root-only state.
bool PseudoFs(int fd) {
  struct statfs s {};
  if (::fstatfs(fd, &s) != 0) return true;
  switch (static_cast<int64_t>(s.f_type)) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case BPF_FS_MAGIC:
    case DEVPTS_SUPER_MAGIC:
    case EFIVARFS_MAGIC:
    case PSTOREFS_MAGIC: return true;
    default: return false;
  }
}

/// The owners a file another user names may have: that user, root, or whoever runs sparkops
/// (a file of one's own reveals nothing).
bool OwnerOk(const struct stat& st, uint32_t uid) {
  return st.st_uid == uid || st.st_uid == 0 || st.st_uid == ::geteuid();
}

/// Opens the directory holding `host_path` under `root` one component at a time, refusing any
/// component that is a link (O_PATH|O_NOFOLLOW opens the link itself, which fstat shows) and any
/// "..". `*last` receives the final component.
Result<Fd> OpenParent(const std::string& root, std::string_view host_path, std::string* last) {
  const std::string name(host_path);
  if (host_path.empty() || host_path[0] != '/') return InputError(name + ": not an absolute path");
  std::vector<std::string> parts;
  for (auto p : Split(host_path.substr(1), '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") return InputError(name + ": holds '..'");
    parts.emplace_back(p);
  }
  if (parts.empty()) return InputError(name + ": names no file");
  Fd dir(::open(root.empty() ? "/" : root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return IoError(name + ": cannot open the root: " + std::strerror(errno));
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    Fd next(::openat(dir.get(), parts[i].c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) return NotFound(name + ": no such file");
    struct stat st {};
    if (::fstat(next.get(), &st) != 0 || !S_ISDIR(st.st_mode))
      return InputError(name + ": its path goes through a link, not followed");
    dir = std::move(next);
  }
  *last = parts.back();
  return dir;
}

/// Opens `last` in `dir` as O_PATH without following it and checks it: of `type` (S_IFREG or
/// S_IFDIR), on no pseudo filesystem, owned as OwnerOk allows. `*st` receives its status.
Result<Fd> OpenChecked(int dir, const std::string& last, const std::string& name, mode_t type, uint32_t uid,
                       struct stat* st) {
  Fd path(::openat(dir, last.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (path.get() < 0) return NotFound(name + ": no such file");
  if (::fstat(path.get(), st) != 0) return IoError(name + ": cannot stat: " + std::strerror(errno));
  if (S_ISLNK(st->st_mode)) return InputError(name + ": a symbolic link, not followed");
  if ((st->st_mode & S_IFMT) != type)
    return InputError(name + (type == S_IFDIR ? ": not a directory" : ": not a regular file, not opened"));
  if (PseudoFs(path.get())) return InputError(name + ": a kernel file, not read");
  if (!OwnerOk(*st, uid)) return InputError(fmt::format("{}: owned by uid {}, not uid {}", name, st->st_uid, uid));
  return path;
}

/// Reopens what OpenChecked checked for reading; the same inode or an error (it was swapped).
Result<Fd> Reopen(int dir, const std::string& last, const std::string& name, int flags, const struct stat& st) {
  Fd fd(::openat(dir, last.c_str(), flags | O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat now {};
  if (fd.get() < 0 || ::fstat(fd.get(), &now) != 0) return IoError(name + ": cannot open: " + std::strerror(errno));
  if (now.st_dev != st.st_dev || now.st_ino != st.st_ino) return InputError(name + ": replaced meanwhile, not read");
  return fd;
}

}  // namespace

Result<std::string> ReadForProcess(const HostFs& fs, std::string_view host_path, uint32_t owner_uid, size_t max_bytes) {
  const std::string name(host_path);
  if (ReadBudgetSpent()) return InputError(name + ": not read, the collection's read budget is spent");
  std::string last;
  auto dir = OpenParent(fs.root(), host_path, &last);
  if (!dir) return std::unexpected(dir.error());
  struct stat st {};
  auto checked = OpenChecked(dir->get(), last, name, S_IFREG, owner_uid, &st);
  if (!checked) return std::unexpected(checked.error());
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return InputError(fmt::format("{}: larger than the {}-byte limit", name, max_bytes));
  if (!ReserveRead(static_cast<uint64_t>(st.st_size)))  // charged before reading: the size is known
    return InputError(name + ": not read, larger than what is left of the collection's read budget");
  auto fd = Reopen(dir->get(), last, name, 0, st);
  if (!fd) return std::unexpected(fd.error());
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd->get(), data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(name + ": read failed: " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  data.resize(got);  // at most the size fstat gave, itself within max_bytes
  return data;
}

namespace {

/// `max_bytes` of a regular file of `owner_uid`'s (ReadForProcess' checks): its last ones when
/// `tail`, else its first ones. `*size` receives the file's size.
Result<std::string> ReadEnd(const HostFs& fs, std::string_view host_path, uint32_t owner_uid, size_t max_bytes,
                            bool tail, uint64_t* size) {
  const std::string name(host_path);
  if (ReadBudgetSpent()) return InputError(name + ": not read, the collection's read budget is spent");
  std::string last;
  auto dir = OpenParent(fs.root(), host_path, &last);
  if (!dir) return std::unexpected(dir.error());
  struct stat st {};
  auto checked = OpenChecked(dir->get(), last, name, S_IFREG, owner_uid, &st);
  if (!checked) return std::unexpected(checked.error());
  *size = static_cast<uint64_t>(st.st_size);
  const uint64_t from = tail && *size > max_bytes ? *size - max_bytes : 0;
  const uint64_t want = std::min<uint64_t>(*size - from, max_bytes);
  if (!ReserveRead(want))
    return InputError(name + ": not read, larger than what is left of the collection's read budget");
  auto fd = Reopen(dir->get(), last, name, 0, st);
  if (!fd) return std::unexpected(fd.error());
  std::string data(static_cast<size_t>(want), '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::pread(fd->get(), data.data() + got, data.size() - got, static_cast<off_t>(from + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(name + ": read failed: " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  return data;
}

}  // namespace

Result<std::string> ReadTailForProcess(const HostFs& fs, std::string_view host_path, uint32_t owner_uid,
                                       size_t max_bytes, bool* cut) {
  if (cut) *cut = false;
  uint64_t size = 0;
  auto data = ReadEnd(fs, host_path, owner_uid, max_bytes, true, &size);
  if (!data) return data;
  if (size > max_bytes) {  // the first line is likely a piece: start after it
    const size_t nl = data->find('\n');
    data->erase(0, nl == std::string::npos ? data->size() : nl + 1);
    if (cut) *cut = true;
  }
  return data;
}

Result<std::string> ReadFirstLineForProcess(const HostFs& fs, std::string_view host_path, uint32_t owner_uid,
                                            size_t max_bytes) {
  uint64_t size = 0;
  auto data = ReadEnd(fs, host_path, owner_uid, max_bytes, false, &size);
  if (!data) return data;
  const size_t nl = data->find('\n');
  if (nl == std::string::npos)
    return InputError(fmt::format("{}: no whole first line in its first {} bytes", host_path, max_bytes));
  data->resize(nl > 0 && (*data)[nl - 1] == '\r' ? nl - 1 : nl);
  return data;
}

Result<std::vector<std::string>> ListOwned(const HostFs& fs, std::string_view host_path, uint32_t owner_uid) {
  const std::string name(host_path);
  std::string last;
  auto dir = OpenParent(fs.root(), host_path, &last);
  if (!dir) return std::unexpected(dir.error());
  struct stat st {};
  auto checked = OpenChecked(dir->get(), last, name, S_IFDIR, owner_uid, &st);
  if (!checked) return std::unexpected(checked.error());
  auto fd = Reopen(dir->get(), last, name, O_DIRECTORY, st);
  if (!fd) return std::unexpected(fd.error());
  DIR* d = ::fdopendir(fd->get());
  if (!d) return IoError(name + ": cannot list: " + std::strerror(errno));
  fd->release();
  return ReadDirNames(d);
}

std::optional<uint32_t> OwnerUid(const HostFs& fs, std::string_view host_path) {
  struct stat st {};
  if (::lstat(fs.Path(host_path).c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint32_t>(st.st_uid);
}

}  // namespace sparkops
