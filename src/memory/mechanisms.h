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

/// The "release part" of a version ("0.1.0" of "0.1.0rc1+cu121"): dot-separated numbers with at
/// least one dot; nullopt for "", "latest", "4", "4..5", ".4".
std::optional<std::string_view> ReleasePart(std::string_view version);

/// torchao's NF4Tensor, which torchtune's QLoRA uses instead of bitsandbytes (read in the torchao
/// 0.1, 0.10.0 and 0.18.0 wheels: dtypes/nf4tensor.py, from 0.18 quantization/quantize_/workflows/
/// nf4/nf4_tensor.py): per element a 4-bit code (two per uint8), one int8 scaler per 64-element
/// block, one quantization_factor in the weight's dtype (bf16) per 256 scalers. Always double
/// quantised: (4 + 8/64 + 16/16384) / 8 bytes per parameter.
double TorchaoNf4BytesPerParam();
/// NF4Tensor.get_original_weight's working set per weight element (LinearNF4 dequantises the
/// whole weight per call, forward and backward): the two int64 code lists (`.to(torch.long)`,
/// 4 + 4), the two looked-up bf16 halves (1 + 1), the two scaled halves (1 + 1) and the stacked
/// bf16 result (2), all locals alive until it returns.
inline constexpr double kTorchaoDequantBytesPerElem = 14;
/// Quantising one weight of `elems` elements on the device while torchtune loads the state dict
/// (copy_ dispatch: the checkpoint tensor `.to(device)`, then NF4Tensor.from_tensor). Unchunked
/// (torchao 0.1, the version torchtune 0.1.x pins): the copy 2 + its bf16 cast 2 + the scaled
/// blocks 2 + `(value - nf4)` and its `.abs()`, each (numel, 16) bf16, 32 + 32 = 70 B/element.
/// Chunked (torchao 0.2 on, CHUNK_SIZE 1024**2): the copy 2 + scaled blocks 2 + uint8 codes 1
/// = 5 B/element + one chunk's diff and abs (64 MiB).
double TorchaoQuantiseBytes(double elems, bool chunked);

/// What sets a torchtune release's peak (read in the torchtune 0.1.0, 0.2.1, 0.3.1, 0.4.0 and
/// 0.6.1 wheels and the torchao each pins).
struct TorchtuneRelease {
  bool unchunked_nf4;  ///< < 0.2: pins torchao==0.1, whose NF4 quantiser is not chunked
  bool holds_logits;   ///< < 0.3: the recipe keeps its shifted fp32 logits copy through backward
};
/// nullopt for an unparsable version.
std::optional<TorchtuneRelease> TorchtuneReleaseOf(std::string_view version);
/// Bytes per logit of torchtune's unchunked loss: the model returns `self.output(h).float()`;
/// before 0.3 the recipe slices `logits[..., :-1, :].contiguous()` and holds it through backward
/// (held copy 4 + log-softmax 4 + its gradient 4 + the input gradient 4 = 16); from 0.3 it shifts
/// the labels instead and `del logits` before backward (12, as transformers >= 4.50). Unknown
/// release: current (12) on the low and central sides, 16 on the high one.
double TorchtuneLossBytesPerLogit(std::optional<TorchtuneRelease> r, Side side);

/// PEFT's DoRA (peft 0.21.2, tuners/lora/dora.py DoraLinearLayer.forward): the weight-norm
/// transient of one adapted d_in x d_out linear, alive while its forward runs: `x_eye`
/// (d_in x d_in identity in the adapter dtype, kept by the lora_weight graph), `lora_weight`
/// (d_in x d_out in the adapter dtype, then `.to(x.dtype)`), and in get_weight_norm
/// `scaling * lora_weight` and `weight + ...` in bf16: adapter_bytes * d_in^2 + 6 * d_in * d_out.
double DoraWeightNormBytes(double d_in, double d_out, double adapter_bytes);
/// DoRA's saved tensors per token per adapted linear, for the magnitude's gradient:
/// `(mag_norm_scale - 1) * base_result` keeps the bf16 base output (2 * d_out) and
/// `mag_norm_scale * lora_result` the LoRA output in the adapter dtype.
double DoraSavedBytesPerToken(double d_out, double adapter_bytes);

/// Bytes of one d_in x d_out linear stored 4-bit at group size 128 (fp16 scales), read in
/// auto-gptq 0.7.1 (nn_modules/qlinear/qlinear_cuda_old.py QuantLinear buffers) and autoawq
/// 0.2.9 (modules/linear/gemm.py WQLinear_GEMM): qweight int32 d_in*d_out/8 (0.5 B/param),
/// qzeros int32 (d_in/128) x (d_out/8), scales fp16 (d_in/128) x d_out; GPTQ also g_idx int32
/// per input row (d_in).
double Quant4Bytes(BaseQuant q, double d_in, double d_out);
inline constexpr double kQuantGroupSize = 128;

}  // namespace sparkops::memory
