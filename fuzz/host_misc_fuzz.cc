// Small host parsers: /proc/1/cgroup engine, a container's environ block, cuda version.json,
// `ptxas --version`, /proc/sys/kernel/random/boot_id, the Python probe's output.
#include "fuzz_util.h"
#include "host/bootid.h"
#include "host/container.h"
#include "host/proctable.h"
#include "host/ptxas.h"
#include "host/pyenv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  (void)sparkops::ParseCgroupEngine(text);
  (void)sparkops::ParseEnviron(text);
  (void)sparkops::ParseCudaVersionJson(text);
  (void)sparkops::ParsePtxasRelease(text);
  if (auto b = sparkops::ParseBootId(text)) FUZZ_CHECK(b->size() <= size);
  if (auto p = sparkops::ParsePythonProbe(text)) (void)sparkops::SiteDirsFromProbe(*p, "/home/u", true);
  return 0;
}
