// ParseDeepSpeedJson (DeepSpeed config for G10): no crash or uncaught exception; errors name the file.
#include "fuzz_util.h"
#include "workloads/parallelism.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto l = sparkops::ParseDeepSpeedJson(AsText(data, size), "ds.json");
  if (!l) {
    FUZZ_CHECK(l.error().message.rfind("ds.json", 0) == 0);
    return 0;
  }
  for (auto d : {l->nodes, l->tp, l->pp}) FUZZ_CHECK(!d || (*d >= 0 && *d <= 1000000));
  (void)sparkops::JudgeLayout(*l, 2);
  return 0;
}
