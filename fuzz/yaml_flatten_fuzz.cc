// ParseParallelYaml's flattening under aliases: the input's bytes build a YAML of levels of
// aliased maps (a billion-laughs shape when fanout and depth are large), then raw bytes follow.
// Whatever the shape, the parse ends quickly (libFuzzer's -timeout catches a slow one) and either
// reads a layout or refuses the file naming it; a refusal for size says which bound.
#include <string>

#include "fuzz_util.h"
#include "workloads/parallelism.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int levels = 1 + data[0] % 12, fanout = 1 + data[1] % 16;
  std::string y;
  for (int level = 0; level < levels; ++level) {
    y += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " {";
    for (int k = 0; k < fanout; ++k) {
      y += (k ? ", k" : "k") + std::to_string(k) + ": ";
      y += level == 0 ? std::string("1") : "*l" + std::to_string(level - 1);
    }
    y += "}\n";
  }
  y.append(reinterpret_cast<const char*>(data + 2), size - 2);
  auto l = sparkops::ParseParallelYaml(y, "f.yaml");
  if (!l) {
    FUZZ_CHECK(l.error().message.rfind("f.yaml", 0) == 0);
    return 0;
  }
  for (auto d : {l->nodes, l->tp, l->pp}) FUZZ_CHECK(!d || (*d >= 0 && *d <= 1000000));
  return 0;
}
