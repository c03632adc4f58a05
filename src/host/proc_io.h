#pragma once
/// Storage I/O of one process, for the top consumers a `host_contention` event names (issue #24):
/// /proc/PID/io's read_bytes + write_bytes (bytes that went to or came from the block layer; a
/// read from /dev/zero or the page cache is not storage I/O), and its rate between two readings.
/// /proc/PID/io is readable only for one's own processes (or with CAP_SYS_PTRACE): an unreadable
/// file gives no reading, never a 0.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

struct ProcIo {
  uint64_t read_bytes = 0, write_bytes = 0;  ///< cumulative since the process started, bytes
};

/// Pure: /proc/PID/io text ("read_bytes: N" and "write_bytes: N" lines among others, any order).
/// Error naming the field when either is missing, repeated or not a count.
Result<ProcIo> ParseProcIo(std::string_view text);

/// Reads /proc/PID/io through `fs` (under --root), bounded; the file's error (EACCES for another
/// user's process) or ParseProcIo's.
Result<ProcIo> ReadProcIo(const HostFs& fs, uint32_t pid);

/// One reading of a process's I/O, for a rate against the next.
struct IoMark {
  uint64_t start_ticks = 0;  ///< /proc/PID/stat field 22: the same pid is the same process
  uint64_t bytes = 0;        ///< read_bytes + write_bytes
  std::chrono::steady_clock::time_point at;
};

/// Pure: bytes per second between two readings of one process; nullopt when they are of different
/// processes (a reused pid), the counter went back, or less than 0.1 s lies between them.
std::optional<double> IoBytesPerSecond(const IoMark& before, const IoMark& now);

}  // namespace sparkops
