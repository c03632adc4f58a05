#pragma once
/// What a frozen boot left behind (issue 33): when a run ended in a reboot, the last kernel lines
/// that foretell a GB10 host wedge (NVRM NV_ERR_NO_MEMORY, Xid, OOM kill, hung task, lockup) from
/// the pstore records of the crashed boot (/sys/fs/pstore/*, /var/lib/systemd/pstore/*/dmesg-*,
/// under --root), from the run's own kernel_* events (events.jsonl), and from the persistent logs of
/// that boot read as files: the systemd journal (/var/log/journal/*/system*.journal[~], the entries
/// of the run's boot id, host/journal_file.h) and rsyslog's /var/log/kern.log (the boot before
/// the current one, host/kern_log.h; from logrotate's kern.log.1 when kern.log starts in the
/// current boot).
#include <string>
#include <vector>

#include "analysis/run_dir.h"
#include "host/hostfs.h"

namespace sparkops {

/// The last `max_lines` such lines of the events and pstore, oldest first, each prefixed with where it was
/// read ("events.jsonl 2026-...Z: NVRM: ...", "/sys/fs/pstore/dmesg-efi-1: NVRM: ..."), then the
/// last `max_lines` of the journal ("/var/log/journal/<id>/system.journal 2026-...Z: NVRM: ...",
/// only entries of `boot_id`, the run's boot; none when it is empty) and of kern.log
/// ("/var/log/kern.log: NVRM: ...", or "/var/log/kern.log.1: NVRM: ..."). Journal DATA objects that are compressed are
/// not read: a line says how many kernel records that left out ("...: 3 compressed records not read"). Each pstore file
/// is read up to 4 MiB, a journal file up to 128 MiB (a larger one is skipped), the last 64 MiB of kern.log and of
/// kern.log.1; unreadable files are skipped.
std::vector<std::string> CrashKernelLines(const HostFs& fs, const std::vector<RunEvent>& events,
                                          const std::string& boot_id = "", size_t max_lines = 8);

}  // namespace sparkops
