// safetensors: the 8-byte length prefix (bounded by the file size and 100 MB before any
// allocation) and the header JSON (dtype, shape, data_offsets): errors, never a crash.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_util.h"
#include "memory/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const uint64_t file_size = in.ConsumeIntegral<uint64_t>();
  const std::string first8 = in.ConsumeBytesAsString(8);
  if (auto n = sparkops::memory::ParseHeaderLength(first8, file_size, "m.safetensors")) {
    FUZZ_CHECK(*n <= sparkops::memory::kMaxSafetensorsHeader);
    FUZZ_CHECK(*n + 8 <= file_size);
  }
  const std::string json = in.ConsumeRemainingBytesAsString();
  if (auto h = sparkops::memory::ParseSafetensorsHeader(json, "m.safetensors")) (void)h->params();
  return 0;
}
