// analyze's thermal input (analysis/thermal.h ParseThermalCsv): sparkops CSV or nvidia-smi CSV
// with local timestamps, RFC 4180 quoted fields (base/csv_field.h); errors name the source. Each
// line that splits is also written back and split again: the same fields.
#include "analysis/thermal.h"
#include "base/csv_field.h"
#include "base/strings.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto zone = sparkops::LocalZone::Make("+05:30");
  if (!zone) std::abort();
  auto s = sparkops::ParseThermalCsv(AsText(data, size), "t.csv", *zone);
  if (s) FUZZ_CHECK(s->interval_ms >= 0);
  else FUZZ_CHECK(s.error().message.find("t.csv") != std::string::npos);
  (void)zone->ParseMillis(AsText(data, size));
  std::vector<std::string> fields, again;
  for (auto line : sparkops::SplitLines(AsText(data, size))) {
    if (!sparkops::CsvSplit(line, &fields).empty()) continue;
    std::string rec = sparkops::CsvJoin(fields);
    FUZZ_CHECK(!sparkops::CsvOpenQuote(rec));
    FUZZ_CHECK(sparkops::CsvSplit(rec, &again).empty());
    FUZZ_CHECK(again == fields);
  }
  return 0;
}
