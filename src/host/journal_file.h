#pragma once
/// The kernel records of one boot from the systemd journal's files, read as files (issue 33: what a
/// frozen boot left when nothing else did). The format is systemd's JOURNAL_FILE_FORMAT: a header
/// ("LPKSHHRH") whose entry_array_offset starts a chain of ENTRY_ARRAY objects; each ENTRY (its
/// realtime and boot id in its own header) lists the offsets of its DATA objects, whose payloads are
/// "FIELD=value". Both layouts are read: regular (64-bit offsets, 16-byte entry items) and compact
/// (HEADER_INCOMPATIBLE_COMPACT, systemd >= 252: 32-bit offsets, DATA payload 8 bytes later).
/// Compressed DATA objects (XZ, LZ4, zstd) are not decompressed: they are skipped and counted.
/// Everything is bounded: offsets must lie in the file, be 8-aligned and past the header; object
/// sizes must fit; the entry-array chain must move forward (no loop); counts are capped. The
/// parser is pure and fuzzed (fuzz/journal_fuzz.cc); a file that is cut short (a crashed boot's
/// journal, `system@...journal~`) yields what lies before the cut.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

inline constexpr size_t kJournalMaxFileBytes = 128u << 20;  ///< a larger file is not read
inline constexpr size_t kJournalMaxEntries = 4u << 20;      ///< entries walked per file at most
inline constexpr size_t kJournalMaxItems = 1024;            ///< DATA items read per entry at most
inline constexpr size_t kJournalMaxKept = 4096;             ///< records kept per scan (the last ones)
inline constexpr size_t kJournalMaxMessage = 2048;          ///< bytes of MESSAGE kept

struct JournalRecord {
  uint64_t realtime_us = 0;  ///< the entry's wall clock, µs since the epoch
  std::string boot_id;       ///< 32 lower-case hex digits (the entry's own boot id)
  std::string message;       ///< MESSAGE= (cut at kJournalMaxMessage)
};

struct JournalScan {
  std::vector<JournalRecord> records;  ///< kernel records (_TRANSPORT=kernel) of the boot asked for, in order
  uint64_t compressed = 0;  ///< such records whose MESSAGE was in a compressed DATA object: not read
  uint64_t bad = 0;         ///< objects skipped: out of bounds, wrong type, malformed
  bool capped = false;      ///< a count limit was reached
};

/// Pure: the kernel records of boot `boot_id` (hex digits, dashes ignored; "" for every boot) in
/// the journal file `file`. Input error when it is not a journal file (signature, header size) or
/// uses an incompatible feature this reader does not know.
Result<JournalScan> ScanJournal(std::string_view file, std::string_view boot_id);

/// The journal files under /var/log/journal/<machine-id>/ (under the HostFs root) that systemd-journald
/// writes for the system: `system.journal`, `system@*.journal` and `system@*.journal~` (a file of a
/// boot that ended without closing it: renamed so at the next start). Sorted by path; at most 256.
std::vector<std::string> ListSystemJournals(const HostFs& fs);

}  // namespace sparkops
