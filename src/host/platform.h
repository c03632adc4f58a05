#pragma once
/// The platform's versions and what a crashed boot left behind (issue 33): the NVIDIA kernel
/// module's version (/proc/driver/nvidia/version), the kernel release (/proc/sys/kernel/osrelease)
/// and pstore records (/sys/fs/pstore/*, /var/lib/systemd/pstore/*/dmesg-*).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/hostfs.h"

namespace sparkops {

/// Pure: the version in the driver's version line ("NVRM version: NVIDIA UNIX Open Kernel Module
/// for aarch64  580.95.05  Release Build ..." -> "580.95.05"): the first word of digits and dots
/// with at least one dot. Absent when there is none.
std::optional<std::string> ParseNvidiaModuleVersion(std::string_view line);

/// The NVIDIA kernel module's version under the HostFs root; absent without a loaded driver.
std::optional<std::string> ReadNvidiaModuleVersion(const HostFs& fs);

/// /proc/sys/kernel/osrelease ("6.17.0-1008-nvidia"); absent when not readable.
std::optional<std::string> ReadKernelRelease(const HostFs& fs);

/// One file a crashed boot left: its host path and its size.
struct PstoreFile {
  std::string path;  ///< "/sys/fs/pstore/dmesg-efi-178902345601001"
  uint64_t bytes = 0;
};

/// The records waiting in /sys/fs/pstore and those systemd-pstore archived under
/// /var/lib/systemd/pstore/<id>/dmesg-*, sorted by path; at most 256.
std::vector<PstoreFile> ListPstore(const HostFs& fs);

/// Pure: the kernel lines in a pstore dmesg record (`<4>[ 1832.115022] NVRM: ...` -> "NVRM: ...";
/// header lines such as "Panic#1 Part1" are dropped). At most 4096 lines.
std::vector<std::string> ParsePstoreDmesg(std::string_view text);

}  // namespace sparkops
