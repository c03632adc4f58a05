#pragma once
/// The one way sparkops creates output files (docs/reliability.md, "Running as root"): a directory
/// opened once, every file in it created relative to that descriptor, never through a link; whole
/// files replaced atomically through an unguessable temporary; never a half-written file or a stray
/// temporary left behind.
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops {

/// A directory sparkops writes into, opened once (O_DIRECTORY): its files are created with
/// openat(O_CREAT|O_EXCL|O_NOFOLLOW), replaced with renameat, tested with fstatat(AT_SYMLINK_NOFOLLOW).
class OutDir {
 public:
  /// Opens directory `path` (`flag` names it in messages, e.g. "--out"); `create`: mkdir -p first.
  /// As root (euid 0) the path is walked from "/" one component at a time, never following a link
  /// root does not own: every directory on it must be owned by root and not writable by group or
  /// others unless sticky (the rule sshd applies to authorized_keys); otherwise an Input error
  /// naming the directory and its owner. Missing components are created 0755 by root itself. Any
  /// other user: the path resolves as the kernel resolves it (their own permissions protect them).
  static Result<OutDir> Open(std::string_view flag, const std::string& path, bool create);
  /// The directory that holds output file `file` (its parent, "." for a bare name), not created.
  static Result<OutDir> ForFile(std::string_view flag, const std::string& file);

  OutDir(OutDir&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  OutDir& operator=(OutDir&& o) noexcept;
  ~OutDir();

  const std::string& path() const { return path_; }
  /// `path()/name` for messages.
  std::string PathOf(std::string_view name) const;
  /// True when `name` is present in any form, a dangling link included (never followed).
  bool Has(std::string_view name) const;
  /// A new regular file `name`, 0644, opened O_RDWR|O_APPEND: Input error when anything (a link
  /// included) already has that name.
  Result<int> CreateNew(std::string_view name) const;
  /// `name` opened for appending (created 0644 when absent), O_WRONLY|O_APPEND|O_NOFOLLOW|O_NONBLOCK:
  /// a link is an Input error, a FIFO with no reader an Input error (never a hang). As root an
  /// existing regular file owned by another user is refused (as fs.protected_regular does).
  Result<int> OpenForAppend(std::string_view name) const;
  /// Opens `name` for reading without following a link (O_NOFOLLOW|O_NONBLOCK).
  Result<int> OpenForRead(std::string_view name) const;
  /// Replaces `name` with `content`: a temporary with a random name created O_EXCL|O_NOFOLLOW in
  /// this directory, written, fdatasync'd, renameat over `name` (a link there is replaced, never
  /// followed). On any failure (ENOSPC) the temporary is removed and `name` is left as it was.
  Result<void> WriteAtomically(std::string_view name, std::string_view content) const;

 private:
  /// Open, naming `shown` (the output file) in messages.
  static Result<OutDir> Open(std::string_view flag, const std::string& path, const std::string& shown, bool create);
  OutDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

/// OutDir::ForFile(path) then WriteAtomically of its last component.
Result<void> WriteFileAtomically(const std::string& path, std::string_view content);

/// True when both paths exist and are the same file (same device and inode: a hard link, a
/// symlink or another spelling of one path).
bool SameFile(const std::string& a, const std::string& b);

/// Input error when `output` is the same file as one of `inputs` (an output must never overwrite
/// what the command reads); `flag` names the output's flag in the message.
Result<void> RefuseOutputOverInput(std::string_view flag, const std::string& output,
                                   const std::vector<std::string>& inputs);

}  // namespace sparkops
