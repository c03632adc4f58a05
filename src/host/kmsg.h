#pragma once
/// The kernel log as /dev/kmsg serves it: one record per read(), `prio,seq,usec,flags[,...];text`
/// then continuation lines that start with a space (`KEY=VALUE`, e.g. ` SUBSYSTEM=pci`). The
/// parser is pure; KernelSignTable() names the records that foretell a GB10 host wedge (driver
/// out of memory, Xid, OOM kill, hung task, lockup) and MatchKernelSign() finds them in a record.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"

namespace sparkops {

/// One kernel log record.
struct KmsgRecord {
  int priority = 0;     ///< syslog level 0 (emerg) .. 7 (debug)
  int facility = 0;     ///< syslog facility (0 = kernel)
  uint64_t seq = 0;     ///< the ring's sequence number (grows by one per record, per boot)
  uint64_t usec = 0;    ///< microseconds since boot (monotonic clock)
  std::string text;     ///< the message, with the kernel's \xNN escapes left as they are
  std::vector<std::pair<std::string, std::string>> dict;  ///< continuation KEY=VALUE lines
};

/// Pure: parses one record (its header line and any continuation lines). Input error naming the
/// field when the header is malformed. Text longer than 8 KiB is cut (the kernel's own bound is
/// about 1 KiB); at most 32 continuation lines are kept.
Result<KmsgRecord> ParseKmsgRecord(std::string_view record);

/// Splits a regular file of newline-separated records (the stand-in for /dev/kmsg under --root, or a
/// saved copy) into records: a line that starts with a space continues the record before it.
/// Malformed records are counted in `*bad` (when given) and skipped.
std::vector<KmsgRecord> ParseKmsgText(std::string_view text, size_t* bad = nullptr);

/// The kinds of kernel records that sparkops acts on; one row each in KernelSignTable().
enum class KernelSignKind { kNvrmNoMemory, kXid, kOomKill, kHungTask, kSoftLockup };

struct KernelSignDef {
  KernelSignKind kind;
  const char* name;     ///< metric label and JSON value: "nvrm_no_memory", "xid", ...
  const char* event;    ///< events.jsonl kind: "kernel_nvrm_no_memory", ...
  const char* meaning;  ///< one line for users: what the record means on a Spark
  const char* source;   ///< the public report or code that documents the record
};

/// The one table of kernel signs, in KernelSignKind order.
const std::vector<KernelSignDef>& KernelSignTable();
const KernelSignDef& KernelSignInfo(KernelSignKind kind);

/// One recognised record.
struct KernelSign {
  KernelSignKind kind = KernelSignKind::kNvrmNoMemory;
  uint64_t seq = 0;
  uint64_t usec = 0;
  std::optional<int> xid;      ///< Xid code
  std::optional<int64_t> pid;  ///< the process named by the record (Xid, OOM kill, hung task, lockup)
  std::string name;            ///< that process's name
  std::string line;            ///< the record's text, at most 300 bytes
};

/// Pure: the sign in a record's text, if any.
std::optional<KernelSign> MatchKernelSign(const KmsgRecord& record);

/// Signs found in a run of records, counted per kind. An OOM kill prints an `oom-kill:` line and a
/// `Killed process PID` line: the pair counts once.
struct KernelSignals {
  std::vector<KernelSign> signs;  ///< in log order, at most kMaxKept (the latest kept)
  uint64_t counts[5] = {0, 0, 0, 0, 0};  ///< per KernelSignKind
  uint64_t records = 0;                  ///< records read
  std::optional<uint64_t> last_seq;      ///< the last record's sequence number

  static constexpr size_t kMaxKept = 256;
  uint64_t count(KernelSignKind k) const { return counts[static_cast<int>(k)]; }
  /// Adds one record: counts it, keeps its sign.
  void Add(const KmsgRecord& record);
  /// The last sign of `kind`, if any was kept.
  const KernelSign* Last(KernelSignKind kind) const;
};

}  // namespace sparkops
