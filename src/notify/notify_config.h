#pragma once
/// The notify configuration file (docs/notify.md), so that `--notify` targets need not be repeated
/// on every `run`, `guard` and `sample`: lines `notify = URL` and `notify-cmd = CMD` (each
/// repeatable), `#` comments and blank lines. The value is the rest of the line, trimmed; nothing in
/// it is unquoted or expanded (a command is given to /bin/sh as written).
///
/// Where it is looked for, first found wins: `--notify-config FILE`, then
/// `$XDG_CONFIG_HOME/sparkops/notify.conf` (or `$HOME/.config/sparkops/notify.conf`), then
/// `/etc/sparkops/notify.conf`. Targets given on the command line replace the file's;
/// `--notify-config none` reads no file.
///
/// A notify command runs with the reader's privileges, so the file is read only when it is a
/// regular file (no link, FIFO or device), owned by the reader or root, writable by nobody else, and
/// at most kNotifyConfigMaxBytes; anything else is an input error naming the file.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops {

inline constexpr size_t kNotifyConfigMaxBytes = size_t{64} * 1024;
inline constexpr size_t kNotifyConfigMaxTargets = 32;

struct NotifyTargets {
  std::vector<std::string> urls;  ///< `notify = URL`
  std::vector<std::string> cmds;  ///< `notify-cmd = CMD`
};

/// Parses the file's text (pure). An unknown key, a line without `=`, an empty value, a NUL byte or
/// more than kNotifyConfigMaxTargets targets is an input error naming `path` and the line number.
Result<NotifyTargets> ParseNotifyConfig(std::string_view text, std::string_view path);

/// The files to try, in order, for `explicit_path` ("" when not given; "none": no file) and the
/// user's environment (XDG_CONFIG_HOME, HOME).
std::vector<std::string> NotifyConfigPaths(std::string_view explicit_path,
                                           const std::map<std::string, std::string>& env);

/// Reads `path` under the rules above. nullopt inside the value: the file is not there, or (not
/// `must_exist`: a default place) a directory on its path cannot be searched by this user.
Result<std::optional<std::string>> ReadNotifyConfigFile(const std::string& path, bool must_exist);

}  // namespace sparkops
