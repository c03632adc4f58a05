#pragma once
/// Whole-file output that never leaves a half-written file or a stray temporary behind.
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops {

/// Writes `content` to `path` through `path.tmp.<pid>`: write, fdatasync, rename. On any failure
/// (a full disk: ENOSPC) the temporary is removed and `path` is left as it was; the Io error names
/// the file and the reason.
Result<void> WriteFileAtomically(const std::string& path, std::string_view content);

/// True when both paths exist and are the same file (same device and inode: a hard link, a
/// symlink or another spelling of one path).
bool SameFile(const std::string& a, const std::string& b);

/// Input error when `output` is the same file as one of `inputs` (an output must never overwrite
/// what the command reads); `flag` names the output's flag in the message.
Result<void> RefuseOutputOverInput(std::string_view flag, const std::string& output,
                                   const std::vector<std::string>& inputs);

}  // namespace sparkops
