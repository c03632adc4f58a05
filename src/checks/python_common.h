#pragma once
/// Helpers shared by the Python-environment checks (G1, G2, G7, G9).
#include <optional>
#include <string>
#include <vector>

#include "checks/check.h"

namespace sparkops {

/// "site-packages: /a, /b (from VIRTUAL_ENV=/v)" for evidence.
std::string EnvEvidence(const PythonEnv& env);

/// The host's CUDA: NVML's driver CUDA version, else the toolkit under --root.
struct HostCuda {
  std::optional<int> major;
  std::string text;  ///< "13.0"
  std::string from;  ///< "NVML driver", "/usr/local/cuda/version.json"
  bool from_driver = false;  ///< the driver's CUDA version (what a wheel needs), not a toolkit's
  std::string toolkit;       ///< "CUDA toolkit 13.0 (from ...)" when one is under --root, else ""
};
HostCuda HostCudaVersion(const HostFacts& f);

/// A GPU host: a readable GPU, or an NVIDIA driver loaded (/proc/driver/nvidia/version). `why`
/// says which.
bool IsGpuHost(const HostFacts& f, std::string* why);

/// Compute capability of the first GPU, when reported; 12.1 for `--gpu gb10` when no GPU is readable.
std::optional<std::pair<int, int>> ComputeCapability(const HostFacts& f);
/// Where ComputeCapability came from: the GPU reader ("nvml"), or "--gpu gb10".
std::string ComputeCapabilitySource(const HostFacts& f);

/// The common SKIP/input-error result when no environment was found; nullopt when there is one.
std::optional<CheckResult> NoEnvironment(const HostFacts& f, const char* id);

/// "torch 2.9.1+cu130" style label of a package.
std::string PackageLabel(const Package& p);

/// How `obj` (one of `p`'s objects) stands against this host's CPU (`host_em`, an ELF machine).
enum class ObjectCpu {
  kHost,        ///< built for this CPU, or unreadable (its own error is reported elsewhere)
  kForeign,     ///< built for another CPU: it fails at import
  kCrossCopy,   ///< another CPU's copy beside a same-named object for this CPU in the same package:
                ///< a multi-target wheel's cross-compilation copy that nothing here loads
                ///< (nvidia-cutlass-dsl-libs 4.8.0: lib/stubs/aarch64-unknown-linux-gnu/...)
};
ObjectCpu ClassifyObjectCpu(const HostFacts& f, const Package& p, const std::string& obj, uint16_t host_em);

}  // namespace sparkops
