#pragma once
/// What a frozen boot left behind (issue 33): when a run ended in a reboot, the last kernel lines
/// that foretell a GB10 host wedge (NVRM NV_ERR_NO_MEMORY, Xid, OOM kill, hung task, lockup) from
/// the pstore records of the crashed boot (/sys/fs/pstore/*, /var/lib/systemd/pstore/*/dmesg-*,
/// under --root) and from the run's own kernel_* events (events.jsonl).
#include <string>
#include <vector>

#include "analysis/run_dir.h"
#include "host/hostfs.h"

namespace sparkops {

/// The last `max_lines` such lines, oldest first, each prefixed with where it was read
/// ("events.jsonl 2026-...Z: NVRM: ...", "/sys/fs/pstore/dmesg-efi-1: NVRM: ..."). Each pstore
/// file is read up to 4 MiB; unreadable files are skipped.
std::vector<std::string> CrashKernelLines(const HostFs& fs, const std::vector<RunEvent>& events, size_t max_lines = 8);

}  // namespace sparkops
