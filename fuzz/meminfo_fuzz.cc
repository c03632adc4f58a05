// ParseMemInfo (/proc/meminfo): no crash; a parsed result always has MemTotal; derived figures
// never wrap.
#include "fuzz_util.h"
#include "host/meminfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto m = sparkops::ParseMemInfo(AsText(data, size));
  if (!m) {
    FUZZ_CHECK(!m.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(m->total.has_value());
  if (auto pc = m->PageCache()) {
    // Exact arithmetic: Cached + Buffers - Shmem, floored at 0 (no 64-bit wrap-around).
    __int128 want = static_cast<__int128>(*m->cached) + *m->buffers - m->shmem.value_or(0);
    if (want < 0) want = 0;
    if (want <= static_cast<__int128>(UINT64_MAX)) FUZZ_CHECK(static_cast<__int128>(*pc) == want);
  }
  if (auto su = m->SwapUsed()) FUZZ_CHECK(*su <= *m->swap_total);
  return 0;
}
