#pragma once
/// The kernel's boot id (/proc/sys/kernel/random/boot_id): a new UUID every boot. `run` records
/// it at start; `analyze` compares it to tell a run cut short by a reboot or power-off (G4).
#include <string>
#include <string_view>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

/// Pure: validates and normalises the file's text (a 36-character UUID, lower case).
Result<std::string> ParseBootId(std::string_view text);
/// Reads the boot id under the HostFs root.
Result<std::string> ReadBootId(const HostFs& fs);

}  // namespace sparkops
