#pragma once
/// The plan flags shared by `plan` and `oom` (CLI11 side), and the plan renderers.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "memory/planner.h"

namespace sparkops {

/// Raw flag values as CLI11 fills them (strings and numbers checked later, with the flag named).
struct PlanFlags {
  std::string method = "lora", grad_ckpt = "on", optimizer = "adamw", precision = "bf16", targets = "all",
              attention = "sdpa", loss = "standard";
  int64_t seq = 2048, batch = 1, rank = 16, grad_accum = 1;
  std::optional<double> budget_gib;
  double reserve_gib = 4;
  std::optional<double> lora_dropout;  ///< unset: the framework's default (transformers/PEFT 0, LitGPT 0.05)
  std::string adapter_dtype;           ///< "": the framework's default (transformers/PEFT fp32, LitGPT bf16)
  std::string framework = "transformers";
  std::string bnb_version;                 ///< --bnb-version; "" = read from the Python environment
  std::string python;                      ///< --python EXE (to find the environment, as preflight)
  std::vector<std::string> site_packages;  ///< --site-packages DIR...
  bool compile = false;
  std::string framework_version;  ///< --framework-version; "" = read from the Python environment
  std::string kbit_prep = "on", double_quant = "on";
  std::string modules_to_save;    ///< --modules-to-save embed,head
  std::string from;               ///< --from FILE: a training config whose settings flags override
  bool dora = false;              ///< --dora: PEFT/torchtune DoRA (magnitude vectors + weight-norm transient)
  std::string quant = "none";     ///< --quant gptq4|awq4: LoRA on a pre-quantised 4-bit base
  /// The app's option for each plan flag (filled by AddPlanFlags): whether the user gave it.
  std::map<std::string, const CLI::Option*> given;
};

void AddPlanFlags(CLI::App& app, PlanFlags& f);
/// Input error naming the flag for a bad value (rank 0, seq 0, unknown optimizer, ...).
Result<memory::PlanOptions> ToPlanOptions(const PlanFlags& f);
/// QLoRA without --bnb-version: bitsandbytes' version from the Python environment preflight finds
/// (--site-packages, --python, VIRTUAL_ENV, ...); leaves the options unknown when none is found.
void ResolveBnbVersion(const Context& ctx, const PlanFlags& f, memory::PlanOptions& o);
/// Without --framework-version: the framework's version (transformers, litgpt) from the same
/// environment; left unknown (the plan widens) when none is found.
void ResolveFrameworkVersion(const Context& ctx, const PlanFlags& f, memory::PlanOptions& o);
/// plan --from: sets each setting the file gave whose flag is not on the command line, and MODEL
/// (when empty) to the first of the file's candidates that resolves. Input error naming the file
/// and key for an out-of-range value or a model none of whose candidates resolves.
Result<memory::PlanSource> ApplyTrainConfig(const memory::TrainConfig& c, const std::string& file, PlanFlags& f,
                                            std::string& model);
/// Resolves MODEL (after --from), reads the budget (MemAvailable under --root), plans. Errors are input errors.
Result<memory::Plan> PlanFromFlags(Context& ctx, const std::string& model, const PlanFlags& f);

}  // namespace sparkops
