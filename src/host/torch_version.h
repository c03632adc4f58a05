#pragma once
/// torch/version.py, read with line patterns - never evaluated as Python (docs/checks.md, G1).
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops {

struct TorchVersion {
  std::string version;              ///< __version__, e.g. "2.9.1+cu130", "2.9.0a0+145a3a7bda.nv25.10"
  std::optional<std::string> cuda;  ///< `cuda` = '13.0'; absent when the file says None (CPU build)
  bool cuda_line_seen = false;      ///< a `cuda = ...` line was present at all
  std::string git_version;          ///< may be empty
};

/// Parses version.py text. Input error (naming `name` and the field) when `__version__` is missing.
Result<TorchVersion> ParseTorchVersionPy(std::string_view text, const std::string& name = "torch/version.py");

/// CUDA major from "13.0" -> 13; absent when unparsable.
std::optional<int> CudaMajor(std::string_view cuda);
/// The `+cuXYZ` local tag of a version ("2.9.1+cu130" -> "cu130"), or "".
std::string CudaTag(std::string_view version);
/// The NGC release in a version ("2.9.0a0+145a3a7bda.nv25.10" -> "25.10"), or "".
std::string NgcRelease(std::string_view version);

}  // namespace sparkops
