// ParseJson (base/json_parse.h), the one JSON reader for files sparkops does not control: it
// accepts exactly what nlohmann accepts, minus documents nested deeper than the bound, and never
// builds more than the bound's levels. The depth is fuzzed too (first byte).
#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "fuzz_util.h"

namespace {

int Depth(const nlohmann::json& j) {
  if (!j.is_structured()) return 0;
  int d = 0;
  for (const auto& v : j) d = std::max(d, Depth(v));
  return d + 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int max_depth = 1 + data[0] % 80;
  std::string_view text = AsText(data + 1, size - 1);
  auto bounded = sparkops::ParseJson(text, max_depth);
  auto full = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const bool fits = !full.is_discarded() && Depth(full) <= max_depth;
  FUZZ_CHECK(bounded.has_value() == fits);
  if (bounded) FUZZ_CHECK(*bounded == full);
  else FUZZ_CHECK(!bounded.error().message.empty());
  FUZZ_CHECK(sparkops::ParseJsonOrDiscarded(text, max_depth).is_discarded() == !fits);
  return 0;
}
