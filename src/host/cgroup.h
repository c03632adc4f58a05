#pragma once
/// Pure parsers of the cgroup v2 facts a process's /proc files give: where cgroup2 is mounted
/// (/proc/self/mountinfo) and which cgroup a process is in (/proc/PID/cgroup). Used by `run`'s job
/// cgroup and by the guard's whole-unit stop.
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sparkops {

/// The cgroup2 mount point in a mountinfo text and the path of that mount's root (field 4);
/// nullopt when none is mounted. Pure.
std::optional<std::pair<std::string, std::string>> ParseCgroup2Mount(std::string_view mountinfo);
/// The "0::" path of a /proc/PID/cgroup text; nullopt without one. Pure.
std::optional<std::string> ParseCgroup2Path(std::string_view proc_cgroup);

}  // namespace sparkops
