#pragma once
/// Reading what other users name, as root may do safely (docs/reliability.md, "Reading other
/// users' files"): the script in a process's argv, the guards' ledgers in users' directories. A
/// path is walked one component at a time under the HostFs root and refused, never followed, when
/// any component is a symbolic link or ".."; the file must be regular (a FIFO, device or socket is
/// not even opened), on no pseudo filesystem (/proc, /sys, debugfs, tracefs, cgroup ...), and owned
/// by the expected uid, root, or whoever runs sparkops (a file of one's own reveals nothing).
/// Every refusal is an error value saying why; nothing here blocks. Inside a ReadBudgetScope
/// (host/read_budget.h) ReadForProcess charges the file's size first and reads nothing once the
/// budget is spent.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

/// A regular file of `owner_uid`'s, at most `max_bytes` (more: an Input error, nothing read).
Result<std::string> ReadForProcess(const HostFs& fs, std::string_view host_path, uint32_t owner_uid, size_t max_bytes);
/// The last `max_bytes` of a regular file of `owner_uid`'s (the same checks), from its first whole
/// line when earlier bytes were left out (`*cut` says so; may be null). For logs that grow.
Result<std::string> ReadTailForProcess(const HostFs& fs, std::string_view host_path, uint32_t owner_uid,
                                       size_t max_bytes, bool* cut = nullptr);
/// The first line of a regular file of `owner_uid`'s (the same checks), without its line end,
/// reading at most `max_bytes`: an Input error when no line ends within them (a CSV's header).
Result<std::string> ReadFirstLineForProcess(const HostFs& fs, std::string_view host_path, uint32_t owner_uid,
                                            size_t max_bytes);
/// The entry names of a directory of `owner_uid`'s (not "." or ".."), under the same rules.
Result<std::vector<std::string>> ListOwned(const HostFs& fs, std::string_view host_path, uint32_t owner_uid);
/// The owner of `host_path` itself (lstat: a link's own owner); nullopt when it is not there.
std::optional<uint32_t> OwnerUid(const HostFs& fs, std::string_view host_path);

}  // namespace sparkops
