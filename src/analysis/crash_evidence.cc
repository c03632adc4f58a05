#include "analysis/crash_evidence.h"

#include "base/strings.h"
#include "base/timefmt.h"
#include "host/journal_file.h"
#include "host/kern_log.h"
#include "host/kmsg.h"
#include "host/platform.h"

namespace sparkops {

namespace {
bool IsSign(const std::string& text) {
  KmsgRecord r;
  r.text = text;
  return MatchKernelSign(r).has_value();
}

void KeepLast(std::vector<std::string>& v, size_t n) {
  if (v.size() > n) v.erase(v.begin(), v.end() - static_cast<long>(n));
}

/// The journal's kernel records of boot `boot_id` that are signs, and a note for compressed ones.
void FromJournal(const HostFs& fs, const std::string& boot_id, size_t max_lines, std::vector<std::string>* out) {
  if (boot_id.empty()) return;
  std::vector<std::string> lines;
  uint64_t compressed = 0;
  for (const std::string& path : ListSystemJournals(fs)) {
    auto file = fs.Read(path, kJournalMaxFileBytes);
    if (!file) continue;
    auto scan = ScanJournal(*file, boot_id);
    if (!scan) continue;
    compressed += scan->compressed;
    for (const JournalRecord& r : scan->records)
      if (IsSign(r.message))
        lines.push_back(path + " " + FormatUtcMillis(FromUnixMillis(static_cast<int64_t>(r.realtime_us / 1000))) +
                        ": " + r.message);
  }
  KeepLast(lines, max_lines);
  out->insert(out->end(), lines.begin(), lines.end());
  if (compressed)
    out->push_back("/var/log/journal: " + std::to_string(compressed) + " compressed record" +
                   (compressed == 1 ? "" : "s") + " not read");
}

/// rsyslog's kern.log: the boot before the current one. When kern.log holds none of it (rotated
/// since that boot ended: it starts in the current boot), logrotate's kern.log.1 (plain text with
/// delaycompress, Ubuntu's default) read before it; every line of that boot then comes from kern.log.1.
void FromKernLog(const HostFs& fs, size_t max_lines, std::vector<std::string>* out) {
  bool cut = false;
  auto text = ReadLocalFileTail(fs.Path("/var/log/kern.log"), kKernLogMaxBytes, &cut);
  if (!text) return;  // no rsyslog in this boot: which of kern.log.1's boots came last is not known
  std::string from = "/var/log/kern.log: ";
  std::vector<std::string> previous = PreviousBootKernLines(*text);
  if (previous.empty())
    if (auto rotated = ReadLocalFileTail(fs.Path("/var/log/kern.log.1"), kKernLogMaxBytes, &cut)) {
      const std::string_view both[] = {*rotated, *text};
      previous = PreviousBootKernLines(both);
      from = "/var/log/kern.log.1: ";
    }
  std::vector<std::string> lines;
  for (std::string& line : previous)
    if (IsSign(line)) lines.push_back(from + line);
  KeepLast(lines, max_lines);
  out->insert(out->end(), lines.begin(), lines.end());
}

}  // namespace

std::vector<std::string> CrashKernelLines(const HostFs& fs, const std::vector<RunEvent>& events,
                                          const std::string& boot_id, size_t max_lines) {
  std::vector<std::string> out;
  for (const RunEvent& e : events) {  // recorded by `run` while the boot was alive
    if (!StartsWith(e.type, "kernel_")) continue;
    std::string line = e.Str("line");
    if (!line.empty()) out.push_back("events.jsonl " + FormatUtcMillis(FromUnixMillis(e.t_ms)) + ": " + line);
  }
  for (const PstoreFile& p : ListPstore(fs)) {  // saved by the kernel as the boot went down
    auto text = fs.Read(p.path, 4u << 20);
    if (!text) continue;
    for (std::string& line : ParsePstoreDmesg(*text))
      if (IsSign(line)) out.push_back(p.path + ": " + line);
  }
  KeepLast(out, max_lines);
  FromJournal(fs, boot_id, max_lines, &out);  // persistent logs of the boot that froze
  FromKernLog(fs, max_lines, &out);
  return out;
}

}  // namespace sparkops
