// ParseLaunchScript and ParseParallelConfig (launch scripts / --config files for G10): never
// crash on any text; every layout found is judged without crashing.
#include "fuzz_util.h"
#include "workloads/parallelism.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  for (const auto& l : sparkops::ParseLaunchScript(text, "run.sh")) (void)sparkops::JudgeLayout(l, std::nullopt);
  if (auto all = sparkops::ParseParallelConfig("launch.sh", text))
    for (const auto& l : *all) (void)sparkops::JudgeLayout(l, 1);
  return 0;
}
