// ParseNvidiaSmiCsv + NvidiaSmiRowToReading (nvidia-smi --format=csv,noheader,nounits): garbage
// is an error or absent values, never a crash; every row has exactly the asked fields.
#include "fuzz_util.h"
#include "host/nvidia_smi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  for (const auto* fields : {&sparkops::NvidiaSmiFields(), &sparkops::NvidiaSmiLegacyFields()}) {
    auto rows = sparkops::ParseNvidiaSmiCsv(text, *fields);
    if (!rows) continue;
    for (const auto& row : *rows) {
      FUZZ_CHECK(row.size() <= fields->size());
      (void)sparkops::NvidiaSmiRowToReading(row);
    }
  }
  return 0;
}
