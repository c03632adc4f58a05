#include "analysis/crash_evidence.h"

#include "base/strings.h"
#include "base/timefmt.h"
#include "host/kmsg.h"
#include "host/platform.h"

namespace sparkops {

namespace {
bool IsSign(const std::string& text) {
  KmsgRecord r;
  r.text = text;
  return MatchKernelSign(r).has_value();
}
}  // namespace

std::vector<std::string> CrashKernelLines(const HostFs& fs, const std::vector<RunEvent>& events, size_t max_lines) {
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
  if (out.size() > max_lines) out.erase(out.begin(), out.end() - static_cast<long>(max_lines));
  return out;
}

}  // namespace sparkops
