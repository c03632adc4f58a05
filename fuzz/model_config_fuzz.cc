// config.json model spec (ParseConfigJson) and the parameter count derived from it.
#include "fuzz_util.h"
#include "memory/model_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto spec = sparkops::memory::ParseConfigJson(AsText(data, size), "config.json");
  if (!spec) {
    FUZZ_CHECK(spec.error().message.find("config.json") != std::string::npos);
    return 0;
  }
  (void)spec->BlockLinears();
  (void)sparkops::memory::CountParams(*spec);
  return 0;
}
