#pragma once
// Shared set-up for the preflight tests over the fake Python environments (tests/pyenv.cmake):
// a --root, an environment and preset GPU facts, so no test touches the real GPU or Python.
#include <sstream>
#include <string>
#include <vector>

#include "checks/check.h"
#include "cli/context.h"
#include "test_util.h"

namespace sparkops::testing {

inline std::string Site(const std::string& name) { return BuildArtifact("site-packages/" + name); }
inline std::string FakeDir() { return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/fake"; }

/// A GB10 as NVML reports it: CC 12.1, driver CUDA 13.0, no memory of its own.
inline GpuSnapshot Gb10() {
  GpuSnapshot s;
  GpuReading g;
  g.name = "NVIDIA GB10";
  g.cc_major = 12;
  g.cc_minor = 1;
  g.cuda_driver_version = 13000;
  g.unified_memory = true;
  s.gpus.push_back(g);
  s.source = "nvml";
  return s;
}
inline GpuSnapshot NoGpu() {
  GpuSnapshot s;
  s.source = "none";
  s.why_none = "--nvml none";
  return s;
}

/// One preflight world: a --root, the user's environment, --site-packages dirs, preset GPU facts.
struct World {
  std::ostringstream out, err;
  Context ctx;
  HostFacts facts;
  World(const std::string& root, std::vector<std::string> sites, Env env = {}, GpuSnapshot gpu = Gb10())
      : ctx{GlobalOptions{root, "none", "none", false}, HostFs(root), std::move(env), out, err},
        facts(ctx, PreflightOptions{"", std::move(sites), {}}) {
    facts.SetGpu(std::move(gpu));
  }
};

/// Summary, evidence and fix in one string, for messages and substring checks.
inline std::string Joined(const CheckResult& r) {
  std::string s = r.summary + "\n";
  for (const auto& e : r.evidence) s += e + "\n";
  return s + r.fix;
}

}  // namespace sparkops::testing
