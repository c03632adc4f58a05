// ParseKmsgText / MatchKernelSign (/dev/kmsg records) and ParseBuddyInfo: no crash; kept lines and
// names stay bounded; counts agree with the kept signs.
#include "fuzz_util.h"
#include "host/buddyinfo.h"
#include "host/kmsg.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  size_t bad = 0;
  sparkops::KernelSignals signals;
  for (const auto& r : sparkops::ParseKmsgText(text, &bad)) {
    FUZZ_CHECK(r.text.size() <= 8192);
    FUZZ_CHECK(r.dict.size() <= 32);
    signals.Add(r);
  }
  uint64_t total = 0;
  for (uint64_t c : signals.counts) total += c;
  FUZZ_CHECK(signals.signs.size() <= sparkops::KernelSignals::kMaxKept);
  FUZZ_CHECK(signals.signs.size() <= total);
  for (const auto& s : signals.signs) {
    FUZZ_CHECK(s.line.size() <= 300);
    FUZZ_CHECK(s.name.size() <= 64);
  }
  if (auto z = sparkops::ParseBuddyInfo(text)) {
    for (const auto& zone : *z) FUZZ_CHECK(zone.free.size() <= 16);
    (void)sparkops::FreeBlocksAtOrder(*z, 9);
  }
  (void)sparkops::ShmSizeFromMounts(text);
  return 0;
}
