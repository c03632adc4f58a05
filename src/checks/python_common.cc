#include "checks/python_common.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "host/container.h"

namespace sparkops {

std::string EnvEvidence(const PythonEnv& env) {
  return fmt::format("Python environment from {}: {}", env.source, Join(env.site_dirs, ", "));
}

HostCuda HostCudaVersion(const HostFacts& f) {
  HostCuda h;
  auto tk = ReadCudaToolkitVersion(f.ctx().fs);
  if (tk) h.toolkit = fmt::format("CUDA toolkit {} (from {})", tk->version, tk->file);
  const auto& snap = f.gpu();
  if (snap.any() && snap.gpus[0].cuda_driver_version) {
    int v = *snap.gpus[0].cuda_driver_version;
    h.major = v / 1000;
    h.text = fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
    h.from = "driver CUDA version (" + snap.source + ")";
    h.from_driver = true;
    return h;
  }
  if (!snap.any() && f.options().gpu == "gb10") {  // a Spark's driver: DGX OS 7, driver 580, CUDA 13.0
    h.major = 13;
    h.text = "13.0";
    h.from = "--gpu gb10 (a DGX Spark's driver is CUDA 13.0)";
    h.from_driver = true;
    return h;
  }
  if (tk) {
    h.text = tk->version;
    auto dot = tk->version.find('.');
    if (auto m = ParseInt(std::string_view(tk->version).substr(0, dot))) h.major = static_cast<int>(*m);
    h.from = tk->file;
  }
  return h;
}

bool IsGpuHost(const HostFacts& f, std::string* why) {
  if (f.gpu().any()) {
    if (why) *why = fmt::format("GPU {} read through {}", f.gpu().gpus[0].name, f.gpu().source);
    return true;
  }
  if (f.options().gpu == "gb10") {
    if (why) *why = "--gpu gb10 (no GPU readable here)";
    return true;
  }
  if (auto line = NvidiaDriverVersionLine(f.ctx().fs)) {
    if (why) *why = "NVIDIA driver loaded (/proc/driver/nvidia/version: " + *line + ")";
    return true;
  }
  if (why)
    *why = "no GPU readable (" + (f.gpu().why_none.empty() ? std::string("none") : f.gpu().why_none) +
           ") and no NVIDIA driver loaded";
  return false;
}

std::optional<std::pair<int, int>> ComputeCapability(const HostFacts& f) {
  const auto& snap = f.gpu();
  if (!snap.any() && f.options().gpu == "gb10") return std::pair{12, 1};
  if (!snap.any() || !snap.gpus[0].cc_major || !snap.gpus[0].cc_minor) return std::nullopt;
  return std::pair{*snap.gpus[0].cc_major, *snap.gpus[0].cc_minor};
}

std::string ComputeCapabilitySource(const HostFacts& f) {
  return f.gpu().any() ? f.gpu().source : "--gpu " + f.options().gpu + ", no GPU readable";
}

std::optional<CheckResult> NoEnvironment(const HostFacts& f, const char* id) {
  const auto& env = f.python();
  if (env) return std::nullopt;
  CheckResult r{id, CheckStatus::kSkip, "", {env.error().message}, ""};
  if (env.error().kind == Error::Kind::kInput) {
    r.summary = "cannot read the Python environment: " + env.error().message;
    r.input_error = true;
  } else {
    r.summary = "no Python environment found (give --python EXE or --site-packages DIR)";
  }
  return r;
}

std::string PackageLabel(const Package& p) { return p.name + " " + p.version; }

ObjectCpu ClassifyObjectCpu(const HostFacts& f, const Package& p, const std::string& obj, uint16_t host_em) {
  const auto& info = f.elf(obj);
  if (host_em == 0 || !info || info->machine == host_em) return ObjectCpu::kHost;
  for (const auto& other : p.shared_objects)
    if (other != obj && BaseName(other) == BaseName(obj))
      if (const auto& o = f.elf(other); o && o->machine == host_em) return ObjectCpu::kCrossCopy;
  return ObjectCpu::kForeign;
}

}  // namespace sparkops
