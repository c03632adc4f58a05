#pragma once
/// Resolves the MODEL argument of plan/oom/bandwidth: a catalogue name, a directory holding a
/// config.json (and maybe safetensors), or a config.json path.
#include <optional>
#include <string>

#include "base/error.h"
#include "memory/model_spec.h"
#include "memory/safetensors.h"

namespace sparkops::memory {

struct LoadedModel {
  ModelSpec spec;
  std::optional<SafetensorsInfo> safetensors;  ///< headers of the checkpoint, when present
  /// Where the parameter count comes from: "safetensors headers (N files)", "config.json", or
  /// "catalogue (config fields)".
  std::string params_source;
  uint64_t params = 0;         ///< total parameters (exact from headers, else from the config)
};

/// Input error (exit 2) naming MODEL when it is none of the three, suggesting the nearest
/// catalogue name.
Result<LoadedModel> ResolveModel(const std::string& arg);

}  // namespace sparkops::memory
