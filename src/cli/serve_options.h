#pragma once
/// `plan --serve MODEL` and `plan MODEL --beside SPEC`: the serving flags (CLI11 side), the
/// --beside spec parser and the server-beside-trainer plan. Footprint maths: memory/serving.h.
#include <map>
#include <optional>
#include <string>

#include "cli/flags.h"
#include "memory/planner.h"
#include "memory/serving.h"

namespace sparkops {

/// Raw flag values as CLI11 fills them; 0 = not given for the numbers.
struct ServeFlags {
  std::string serve;   ///< --serve MODEL
  std::string beside;  ///< --beside SPEC
  std::string engine = "vllm", kv_dtype = "auto", weights_dtype;
  int64_t max_model_len = 0, max_num_seqs = 1;
  /// The app's option for each server flag (filled by AddServeFlags): whether the user gave it.
  std::map<std::string, const CLI::Option*> given;
};

void AddServeFlags(CLI::App& app, ServeFlags& f);

/// A --beside spec: ENGINE:MODEL[,max-model-len=N][,max-num-seqs=N][,kv-dtype=D][,weights-dtype=D].
struct ServeSpec {
  std::string model;
  memory::ServeOptions options;
};
/// Pure. Input error naming --beside and the part at fault (unknown engine or key, a number out of
/// 1..2^24 tokens / 1..65536 sequences, NaN, no model).
Result<ServeSpec> ParseServeSpec(std::string_view spec);
/// The --serve flags as a spec (same checks, naming each flag).
Result<ServeSpec> ServeSpecFromFlags(const ServeFlags& f);

}  // namespace sparkops
