#pragma once
/// The one writer under /proc/sys: `sync`, then "3" into /proc/sys/vm/drop_caches (page cache,
/// dentries and inodes). The path is resolved under the HostFs root so tests use a fixture file.
#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

/// The host path written (shown in messages; opened only through HostFs::Path in DropCaches).
inline constexpr const char* kDropCachesPath = "/proc/sys/vm/drop_caches";

/// True when this process can write drop_caches on the real machine (effective uid 0).
bool IsRoot();
/// sync(2), then writes "3\n" to <root>/proc/sys/vm/drop_caches. Io error naming the file when
/// the write fails (not root, read-only /proc in a container).
Result<bool> DropCaches(const HostFs& fs);

}  // namespace sparkops
