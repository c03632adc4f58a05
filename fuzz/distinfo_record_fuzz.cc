// dist-info RECORD (CSV of path,hash,size; bounded row count) and direct_url.json.
#include "fuzz_util.h"
#include "host/distinfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  auto rec = sparkops::ParseRecord(text, "RECORD", 1000);
  if (rec) FUZZ_CHECK(rec->size() <= 1000);
  else FUZZ_CHECK(rec.error().message.find("RECORD") != std::string::npos);
  (void)sparkops::ParseDirectUrl(text, "direct_url.json");
  return 0;
}
