// ParseStepLine (training-log lines of every format: tqdm, HF dicts, torchtune, Megatron,
// Lightning, ...) and ParseNumberPrefix, per '\n'-separated line: no crash; the timestamp view
// lies inside the line; `used` never passes the end.
#include "analysis/step_line.h"
#include "base/strings.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  for (std::string_view line : sparkops::SplitLines(text)) {
    auto s = sparkops::ParseStepLine(line);
    if (!s.timestamp.empty())
      FUZZ_CHECK(s.timestamp.data() >= line.data() &&
                 s.timestamp.data() + s.timestamp.size() <= line.data() + line.size());
    FUZZ_CHECK(s.format != nullptr);
  }
  size_t used = 0;
  if (sparkops::ParseNumberPrefix(text, &used)) FUZZ_CHECK(used <= text.size());
  return 0;
}
