#pragma once
/// The framework mechanisms the accounting (accounting.cc) prices, each a pure function of what
/// the user said or what sparkops read: transformers' loss code by release, AdamW's step
/// transients by implementation, NF4 storage with or without double quantisation. Each is cited
/// to the framework's source in docs/memory-model.md ("Framework mechanisms").
#include <optional>
#include <string_view>

#include "memory/accounting.h"

namespace sparkops::memory {

/// transformers' causal-LM loss code, by release (read in the 4.44.2, 4.45.2, 4.46.0, 4.48.0 and
/// 4.50.0 wheels: models/llama/modeling_llama.py, loss/loss_utils.py).
enum class LossEra {
  kModelUpcast,     ///< < 4.46: the model returns `logits.float()`, the loss shifts a contiguous copy
  kLossShiftCopy,   ///< 4.46 - 4.49: bf16 logits; ForCausalLMLoss upcasts and shifts a contiguous copy
  kLossPadLabels,   ///< >= 4.50: bf16 logits; ForCausalLMLoss upcasts and pads the labels instead
};
std::string ToString(LossEra e);

/// The era of a transformers version ("4.45.2", "4.50.0.dev0"); nullopt for "" or unparsable.
std::optional<LossEra> TransformersLossEra(std::string_view version);

/// Bytes per logit (b*s*V elements) of transformers' loss at its costliest moment. A known era
/// gives its own figure (both sides); an unknown one (nullopt) resolves to the current release
/// (low, central) or the costliest era (high).
double TransformersLossBytesPerLogit(std::optional<LossEra> era, Side side);

/// State-sized lists AdamW's step allocates beside the states: foreach (torch's default on CUDA)
/// 1 (`exp_avg_sq_sqrt`, eps added in place); torch 2.0's adamw.py made a second one (`denom`),
/// but no torch that runs on a GB10 (CUDA 13: 2.9 or later) does, so neither side counts it.
/// fused 0; other optimizers 0 (bitsandbytes' 8-bit kernels update in place).
double AdamwStepLists(Optimizer o, Side side);

/// NF4 storage per parameter: 4-bit codes + one fp32 absmax per 64 (4.5 bits), or with double
/// quantisation the absmax in 8 bit per 256 (4.127 bits; the QLoRA paper).
double Nf4BytesPerParam(bool double_quant);

}  // namespace sparkops::memory
