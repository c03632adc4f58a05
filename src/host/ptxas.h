#pragma once
/// Triton's bundled ptxas (triton-lang/triton#8539; docs/checks.md, G1): Triton compiles
/// GB10 kernels for sm_121a, which needs a ptxas from CUDA >= 12.9. Older bundled ones fail with
/// `ptxas fatal : Value 'sm_121a' is not defined for option 'gpu-name'`.
#include <optional>
#include <string>
#include <utility>

#include "host/host_view.h"

namespace sparkops {

/// "Cuda compilation tools, release 12.8, V12.8.93" -> {12, 8}. Pure.
std::optional<std::pair<int, int>> ParsePtxasRelease(std::string_view version_output);

struct PtxasInfo {
  std::string path;     ///< the ptxas Triton would run for a Blackwell GPU
  std::string chosen_by;  ///< "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_PTXAS_PATH", "bundled"
  std::optional<std::pair<int, int>> release;
  std::string error;    ///< why the release is unknown
};

/// Which ptxas Triton uses for arch >= 100: env TRITON_PTXAS_BLACKWELL_PATH, else
/// TRITON_PTXAS_PATH, else <site>/triton/backends/nvidia/bin/ptxas-blackwell, else .../ptxas
/// (override order not verified against Triton's source). Runs `PATH --version` (5 s timeout).
/// nullopt when there is no candidate at all.
std::optional<PtxasInfo> TritonPtxas(const HostView& ctx, const std::string& triton_site_dir);

}  // namespace sparkops
