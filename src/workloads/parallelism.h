#pragma once
/// Parallelism layout for G10 (docs/checks.md, G10): how many machines a job spans and its
/// tensor/pipeline degrees, read from accelerate YAML (yaml-cpp), DeepSpeed JSON (nlohmann), other
/// training YAML (axolotl, torchtune, NeMo/Megatron, LLaMA-Factory), launch scripts and command
/// lines (torchrun, accelerate launch, deepspeed, tune run, vLLM, SGLang, TGI), and launcher
/// environment variables (WORLD_SIZE > LOCAL_WORLD_SIZE, NNODES, PARALLELISM_CONFIG_TP_SIZE ...).
/// Parsers are pure; a malformed file is an Input error naming the file and the field.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/comm_env.h"

namespace sparkops {

struct ParallelLayout {
  std::string source;        ///< file name, "pid 4101 (torchrun)", "environment"
  std::string what;          ///< "accelerate config", "DeepSpeed config", "torchrun", "vLLM", ...
  bool training = true;      ///< false for inference servers (vLLM, SGLang, TGI)
  std::optional<int> nodes;  ///< machines the job spans
  std::optional<int> tp;     ///< tensor-parallel degree
  std::optional<int> pp;     ///< pipeline-parallel degree
  std::string data_parallel; ///< "FSDP", "DeepSpeed ZeRO-3", "DDP", "" when not stated
  std::vector<std::string> evidence;  ///< what was read: "num_machines: 2"
  /// NCCL_*/UCX_* variables a launch script sets for this launcher (exported earlier or as a
  /// `K=V cmd` prefix), source "run.sh line 3"; empty for YAML and JSON (they have no environment).
  std::vector<EnvSetting> comm_env;
};

/// The most keys ParseParallelYaml visits (an alias counts each time it is reached) and the most
/// bytes of key paths and values it keeps: past either the file is refused as an input error.
inline constexpr size_t kMaxYamlNodes = 100000;
inline constexpr size_t kMaxYamlFlatBytes = size_t{16} << 20;

/// accelerate config YAML, or another training YAML (axolotl, torchtune, NeMo, LLaMA-Factory, a vLLM
/// --config YAML). Keys are searched at any depth; bounded by kMaxYamlNodes and kMaxYamlFlatBytes.
Result<ParallelLayout> ParseParallelYaml(std::string_view text, const std::string& name);
/// DeepSpeed config JSON: zero_optimization.stage, tensor_parallel.autotp_size / tp_size, mp_size.
Result<ParallelLayout> ParseDeepSpeedJson(std::string_view text, const std::string& name);
/// A shell launch script: every line that runs a known launcher or server (with `export K=V` and
/// `K=V cmd` prefixes applied, `\` continuations joined). Never fails: unknown lines are ignored.
std::vector<ParallelLayout> ParseLaunchScript(std::string_view text, const std::string& name);
/// A file named with --config: by extension (.json, .yaml/.yml, else a launch script; content
/// starting with '{' is JSON).
Result<std::vector<ParallelLayout>> ParseParallelConfig(const std::string& name, std::string_view text);

/// A command line of a known launcher or server (`env` is its environment; may be empty).
std::optional<ParallelLayout> LayoutFromArgv(const std::vector<std::string>& argv,
                                             const std::map<std::string, std::string>& env, const std::string& source);
/// Launcher variables alone (the user's shell, or a rank's environment); nullopt when none is set.
std::optional<ParallelLayout> LayoutFromEnv(const std::map<std::string, std::string>& env, const std::string& source);

enum class LayoutLevel { kPass, kInfo, kWarn, kFail };
struct LayoutJudgement {
  LayoutLevel level = LayoutLevel::kPass;
  std::string line;  ///< one line naming the source and the rule
};
/// G10's rule. `job_nodes`: the machine count known from another source of the same job (a
/// launch script beside an axolotl YAML), used when the layout has none.
///   FAIL  training, TP > 1, >= 2 machines
///   INFO  inference, TP > 1 (on Sparks, one GPU each, it spans boxes): routine per the playbooks
///   WARN  PP > 1 across >= 2 machines; training TP > 1 with the machine count unknown
///   PASS  otherwise (DDP/FSDP/ZeRO, or one machine)
LayoutJudgement JudgeLayout(const ParallelLayout& l, std::optional<int> job_nodes);

}  // namespace sparkops
