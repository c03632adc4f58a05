// ParseLedger: any bytes either fail or give a ledger whose JSON parses back to the same ledger,
// with only the action/reason names a guard writes (the exporter mints series from them).
#include <string_view>

#include "fuzz_util.h"
#include "guard/ledger.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto l = sparkops::guard::ParseLedger(text);
  if (!l) return 0;
  FUZZ_CHECK(l->mode == "host" || l->mode == "run");
  for (const auto& [k, n] : l->actions) {
    FUZZ_CHECK(k.first == "flush" || k.first == "terminate" || k.first == "kill" || k.first == "would_terminate");
    FUZZ_CHECK(k.second == "min_available" || k.second == "pressure");
  }
  auto back = sparkops::guard::ParseLedger(sparkops::guard::LedgerJson(*l));
  FUZZ_CHECK(back && back->pid == l->pid && back->start_ticks == l->start_ticks && back->actions == l->actions &&
             back->min_available_bytes == l->min_available_bytes && back->max_pressure == l->max_pressure);
  return 0;
}
