#pragma once
/// The process table: /proc/PID/{cmdline,environ,status,stat} read through HostFs (so `--root`
/// fixtures stand in for a machine). Parsers are pure; the reader skips, silently, processes that
/// vanish mid-scan or whose status/cmdline cannot be read. An environ that cannot be read (another
/// user's process) is "no environment", not an error.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/strings.h"  // BaseName
#include "host/hostfs.h"

namespace sparkops {

/// The fields of /proc/PID/status sparkops uses.
struct ProcStatus {
  std::string name;                   ///< "Name:" (the kernel's comm, at most 15 chars)
  std::optional<uint32_t> ppid;       ///< "PPid:"
  std::optional<uint32_t> uid;        ///< real uid, first field of "Uid:"
  std::optional<uint64_t> rss_bytes;  ///< "VmRSS:" in bytes (absent for kernel threads)
};

/// The fields of /proc/PID/stat sparkops uses (proc(5) numbering).
struct ProcStat {
  uint32_t pid = 0;
  std::string comm;      ///< field 2 without the parentheses (may contain spaces and ')')
  char state = '?';      ///< field 3
  uint32_t ppid = 0;     ///< field 4
  uint32_t session = 0;  ///< field 6
  std::optional<uint64_t> flags;  ///< field 9 (PF_* bits); absent when not a number
  uint64_t start_ticks = 0;  ///< field 22, clock ticks after boot
};

/// One process as read from the table.
struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string name;               ///< status Name (comm)
  std::vector<std::string> argv;  ///< empty for kernel threads
  std::map<std::string, std::string> env;
  bool env_readable = false;      ///< false: environ unreadable (not ours) or absent
  std::optional<uint32_t> uid;
  std::optional<uint64_t> rss_bytes;
  std::optional<uint32_t> session;
  bool nvidia_fd = false;         ///< holds an open /dev/nvidia* (only probed for interpreters)
  std::string script_head;        ///< first bytes of a Python script named in argv (readers may fill)
  /// NSpid (host/pidns.h), read only from the real /proc when its PIDs are not this process's.
  std::vector<uint32_t> nspid;
};

/// NUL-separated argv. A trailing NUL adds no empty word; a title rewritten with setproctitle
/// (one space-joined string without NULs) is returned as one word.
std::vector<std::string> ParseCmdline(std::string_view data);
/// NUL-separated KEY=VALUE; entries without '=' are ignored; the last duplicate wins.
std::map<std::string, std::string> ParseEnviron(std::string_view data);
/// /proc/PID/status. Error when "Name:" is missing or a used field is malformed.
Result<ProcStatus> ParseStatus(std::string_view text);
/// /proc/PID/stat. comm is found by the LAST ')' (a comm may contain ") ").
Result<ProcStat> ParseStat(std::string_view text);

/// Reads one process; NotFound when it vanished or its status/cmdline cannot be read.
Result<ProcessInfo> ReadProcess(const HostFs& fs, uint32_t pid);
/// Every numeric directory of /proc, in PID order. NotFound when /proc itself cannot be listed.
Result<std::vector<ProcessInfo>> ReadProcessTable(const HostFs& fs);

/// The script a Python process runs (`python [opts] path.py ...`), read under the root (absolute
/// path, or relative to /proc/PID/cwd), at most 1 MiB. "" when there is none or it cannot be read.
std::string ReadScriptHead(const HostFs& fs, const ProcessInfo& p);

/// True for python, python3, python3.12, pypy3 ... (by basename).
bool IsPythonInterpreter(std::string_view argv0);

}  // namespace sparkops
