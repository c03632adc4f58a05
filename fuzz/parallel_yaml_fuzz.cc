// ParseParallelYaml (accelerate / training YAML for G10): no crash, no uncaught exception, no
// stack exhaustion; degrees read are within the parser's bound; errors name the file.
#include "fuzz_util.h"
#include "workloads/parallelism.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto l = sparkops::ParseParallelYaml(AsText(data, size), "f.yaml");
  if (!l) {
    FUZZ_CHECK(l.error().message.rfind("f.yaml", 0) == 0);
    return 0;
  }
  for (auto d : {l->nodes, l->tp, l->pp}) FUZZ_CHECK(!d || (*d >= 0 && *d <= 1000000));
  (void)sparkops::JudgeLayout(*l, std::nullopt);
  (void)sparkops::JudgeLayout(*l, 2);
  return 0;
}
