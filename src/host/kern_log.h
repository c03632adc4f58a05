#pragma once
/// The previous boot's kernel lines from rsyslog's text log, /var/log/kern.log (issue 33: what a
/// frozen boot left). Lines are "Mon DD HH:MM:SS host kernel: [ t] text" (or with an RFC 3339 time);
/// a boot starts where the kernel's timestamp goes back (to 0.000000), or, without timestamps, at
/// "Linux version". Pure.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sparkops {

inline constexpr size_t kKernLogMaxBytes = 64u << 20;  ///< the end of a larger file is read
inline constexpr size_t kKernLogMaxLines = 4096;       ///< lines kept (the last ones)

/// The text of a kern.log line's kernel record ("NVRM: ..."), "" when it is not a kernel line.
std::string_view KernLogText(std::string_view line, double* t = nullptr, bool* has_t = nullptr);

/// The kernel lines of the boot before the last one that the text holds (its last boot is the
/// current one: rsyslog logs the ring from the start of each boot). Empty when the text holds one
/// boot or none.
std::vector<std::string> PreviousBootKernLines(std::string_view text);

/// The same over texts read one after the other, oldest first: logrotate's kern.log.1, then
/// kern.log (a boot may begin in one and go on in the next).
std::vector<std::string> PreviousBootKernLines(std::span<const std::string_view> texts);

}  // namespace sparkops
