// ScanJournal (systemd journal files read as files, issue 33) and the kern.log reader: no crash, no
// read outside the input, no endless walk; what is kept stays bounded.
#include "fuzz_util.h"
#include "host/journal_file.h"
#include "host/kern_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes = AsText(data, size);
  for (std::string_view boot : {std::string_view(), std::string_view("1f0e9b7c-3a2d-4e8f-8c6b-5d4a3b2c1e00")}) {
    auto s = sparkops::ScanJournal(bytes, boot);
    if (!s) continue;
    FUZZ_CHECK(s->records.size() <= sparkops::kJournalMaxKept);
    for (const auto& r : s->records) {
      FUZZ_CHECK(r.message.size() <= sparkops::kJournalMaxMessage);
      FUZZ_CHECK(r.boot_id.size() == 32);
      if (!boot.empty()) FUZZ_CHECK(r.boot_id == "1f0e9b7c3a2d4e8f8c6b5d4a3b2c1e00");
    }
  }
  auto prev = sparkops::PreviousBootKernLines(bytes);
  FUZZ_CHECK(prev.size() <= sparkops::kKernLogMaxLines);
  for (const auto& l : prev) FUZZ_CHECK(l.size() <= 2048);
  return 0;
}
