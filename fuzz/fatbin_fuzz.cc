// ScanFatbin (a .nv_fatbin section's bytes) and ParseCuobjdumpList (cuobjdump output): bounded
// by the input, no crash; every arch found is named sm_/compute_.
#include "fuzz_util.h"
#include "host/elf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  for (const auto& a : sparkops::ScanFatbin(text)) FUZZ_CHECK(a.name.size() <= size + 16);
  for (const auto& a : sparkops::ParseCuobjdumpList(text)) FUZZ_CHECK(a.name.size() <= size);
  return 0;
}
