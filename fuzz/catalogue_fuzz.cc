// The model catalogue CSV (ParseCatalogue) and model-name lookup with a typo'd name.
#include "fuzz_util.h"
#include "memory/catalogue.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  if (auto c = sparkops::memory::ParseCatalogue(text))
    for (const auto& e : *c) (void)sparkops::memory::CountParams(e.spec);
  (void)sparkops::memory::FindModel(text.substr(0, 64));
  (void)sparkops::memory::NearestModelName(text.substr(0, 64));
  return 0;
}
