#include "notify/notify_config.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/strings.h"

namespace sparkops {

Result<NotifyTargets> ParseNotifyConfig(std::string_view text, std::string_view path) {
  NotifyTargets t;
  size_t line_no = 0;
  for (std::string_view rest = text; !rest.empty();) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    auto bad = [&](std::string_view why) { return InputError(fmt::format("{}: line {}: {}", path, line_no, why)); };
    if (line.find('\0') != std::string_view::npos) return bad("a NUL byte");
    const std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    const size_t eq = trimmed.find('=');
    if (eq == std::string_view::npos) return bad("expected `notify = URL` or `notify-cmd = COMMAND`");
    const std::string_view key = Trim(trimmed.substr(0, eq)), value = Trim(trimmed.substr(eq + 1));
    if (value.empty()) return bad(fmt::format("`{}` has no value", key));
    if (key == "notify") t.urls.emplace_back(value);
    else if (key == "notify-cmd") t.cmds.emplace_back(value);
    else return bad(fmt::format("unknown key `{}` (notify, notify-cmd)", key));
    if (t.urls.size() + t.cmds.size() > kNotifyConfigMaxTargets)
      return bad(fmt::format("more than {} targets", kNotifyConfigMaxTargets));
  }
  return t;
}

std::vector<std::string> NotifyConfigPaths(std::string_view explicit_path,
                                           const std::map<std::string, std::string>& env) {
  if (explicit_path == "none") return {};
  if (!explicit_path.empty()) return {std::string(explicit_path)};
  std::vector<std::string> paths;
  auto get = [&env](const char* k) {
    auto it = env.find(k);
    return it == env.end() ? std::string() : it->second;
  };
  // Relative XDG/HOME values are ignored, as the XDG base directory rules say.
  if (std::string xdg = get("XDG_CONFIG_HOME"); StartsWith(xdg, "/")) paths.push_back(xdg + "/sparkops/notify.conf");
  else if (std::string home = get("HOME"); StartsWith(home, "/"))
    paths.push_back(home + "/.config/sparkops/notify.conf");
  paths.emplace_back("/etc/sparkops/notify.conf");
  return paths;
}

Result<std::optional<std::string>> ReadNotifyConfigFile(const std::string& path, bool must_exist) {
  // O_NONBLOCK: a FIFO planted at the path cannot hold the open; O_NOFOLLOW: the file itself is no link.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    // A default place the user cannot reach (another user's HOME, as under sudo -u) holds no file of theirs.
    if (!must_exist && (errno == ENOENT || errno == ENOTDIR || errno == EACCES)) return std::optional<std::string>();
    if (errno == ELOOP) return InputError(fmt::format("{}: a symbolic link; the notify config must be a file", path));
    return InputError(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return InputError(fmt::format("{}: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return InputError(fmt::format("{}: not a regular file", path));
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return InputError(
        fmt::format("{}: owned by uid {}, not by this user or root: not read (its commands would run as you)", path,
                    st.st_uid));
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return InputError(
        fmt::format("{}: writable by group or others (mode {:o}): not read (chmod go-w)", path, st.st_mode & 07777));
  if (st.st_size > static_cast<off_t>(kNotifyConfigMaxBytes))
    return InputError(
        fmt::format("{}: {} bytes, more than a notify config's {}", path, st.st_size, kNotifyConfigMaxBytes));
  std::string text(kNotifyConfigMaxBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InputError(fmt::format("{}: {}", path, std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kNotifyConfigMaxBytes)  // grew since fstat
    return InputError(fmt::format("{}: more than a notify config's {} bytes", path, kNotifyConfigMaxBytes));
  text.resize(got);
  return std::optional<std::string>(std::move(text));
}

}  // namespace sparkops
