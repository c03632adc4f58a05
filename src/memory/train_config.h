#pragma once
/// `plan --from FILE`: the plan flags a user's own training config implies. Pure parser over the
/// file's text (JSON or YAML); the CLI reads the file (bounded) and lets flags override.
/// Formats: Hugging Face TrainingArguments / TRL SFTConfig (+ TRL's ModelConfig keys), axolotl,
/// torchtune recipe, LitGPT finetune (docs/memory-model.md, "Plan from a training config").
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops::memory {

/// One plan flag taken from the file: `flag` (as on the command line), its `value`, and the
/// file's `key` it came from ("train.micro_batch_size").
struct TakenSetting {
  std::string flag, value, key;
};

struct TrainConfig {
  std::string format;  ///< "axolotl", "torchtune recipe", "LitGPT finetune", "HF TrainingArguments/TRL"
  std::vector<std::string> models;  ///< model candidates in order (a directory, an HF id, a catalogue name)
  std::string model_key;  ///< the key the model came from ("" when the file names none)
  std::vector<TakenSetting> taken;  ///< in the order the plan flags are listed
  std::vector<std::string> assumed;  ///< what the file did not say and what the plan assumes instead
};

/// What a plan took from a training config, for the renderers: the file, its format, the model
/// chosen, each setting with whether a command-line flag overrode it, and the assumptions.
struct PlanSource {
  std::string file;
  TrainConfig config;
  std::string model;  ///< the candidate that resolved ("" when MODEL was given)
  std::vector<bool> overridden;  ///< per config.taken: a flag on the command line won
};

inline constexpr size_t kMaxTrainConfigBytes = 1u << 20;  ///< 1 MiB: configs are a few KiB
inline constexpr size_t kMaxTrainConfigNodes = 20000;  ///< YAML/JSON nodes walked
inline constexpr int kMaxTrainConfigDepth = 32;  ///< nesting (brackets and mappings)

/// Input error naming `file` (and the key) for: over 1 MiB, nesting deeper than 32, more than
/// 20000 nodes, not a mapping, a format it does not recognise, or a value of the wrong kind.
Result<TrainConfig> ParseTrainConfig(std::string_view text, const std::string& file);
/// Reads `path` (a regular file only: a FIFO or device is refused, never blocked on) bounded by
/// kMaxTrainConfigBytes, then ParseTrainConfig.
Result<TrainConfig> ReadTrainConfig(const std::string& path);

}  // namespace sparkops::memory
