#pragma once
/// Activation memory: what autograd keeps for backward, per token of one transformer layer and in
/// total (docs/memory-model.md, "activations"). Pure.
#include "memory/accounting.h"
#include "memory/model_spec.h"

namespace sparkops::memory {

struct Activations {
  double total = 0;       ///< bytes kept at the start of backward (all layers, or inputs + one layer)
  double bnb_inputs = 0;  ///< of which: inputs only bnb < 0.43.2's 4-bit matmuls keep
  double bnb_ctx = 0;     ///< what those matmuls' ctx holds per step, shared tensors included (the
                       ///< previous step's copy a loop holding last step's outputs keeps alive)
};

/// `bnb_keeps_inputs`: every 4-bit linear keeps its input (QLoRA with bnb < 0.43.2).
/// `recompute`: torch.compile's low end, the norms' fp32 copies and act(gate) are recomputed.
Activations EstimateActivations(const ModelSpec& m, const PlanOptions& o, bool bnb_keeps_inputs, bool recompute);

/// Is this block linear adapted by LoRA? Fused projections are adapted when any part is.
bool Adapted(const LinearShape& l, const std::set<std::string>& targets);

}  // namespace sparkops::memory
