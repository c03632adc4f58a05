#pragma once
/// The memory accounting of one fine-tuning configuration (docs/memory-model.md gives every
/// formula and its source). All results in bytes; the CLI prints GiB.
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "base/error.h"
#include "memory/model_source.h"

namespace sparkops::memory {

enum class Method { kFull, kLora, kQlora };
/// kAdamW: torch.optim.AdamW as built by default on CUDA (foreach: HF Trainer's `adamw_torch`,
/// LitGPT); kAdamWFused: `fused=True` (torchtune's recipes, HF `adamw_torch_fused`).
enum class Optimizer { kAdamW, kAdamWFused, kAdamW8bit, kPagedAdamW8bit, kSgd, kAdafactor };
enum class Precision { kBf16, kMixed, kFp32 };
enum class Attention { kSdpa, kFlash, kEager };
enum class Loss { kStandard, kChunked };
/// Dtype of the LoRA adapters and so of their gradients and AdamW state. fp32 is PEFT's default
/// (`autocast_adapter_dtype=True` upcasts bf16/fp16 adapters); bf16 is LitGPT `bf16-true`.
enum class AdapterDtype { kFp32, kBf16 };
/// Whose model code and training loop run. kTransformers: Hugging Face transformers + PEFT (the
/// accounting's reference). kLitgpt: LitGPT's own GPT
/// class under Lightning Fabric (litgpt/model.py, litgpt/lora.py, litgpt/finetune/*.py): fused
/// qkv, separate fc_1/fc_2, a separate lm_head even for tied checkpoints, chunked lm_head +
/// cross-entropy with Fabric casting the logits to fp32, every nn.Linear 4-bit under QLoRA
/// (docs/memory-model.md, "LitGPT"). kTorchtune: torchtune's recipes; under QLoRA torchao's
/// NF4Tensor for the adapted linears only, loaded from a bf16 state dict held whole in host
/// memory (mechanisms.h).
enum class Framework { kTransformers, kLitgpt, kTorchtune };
/// A pre-quantised 4-bit base under LoRA (`--quant`): GPTQ or AWQ checkpoints, group size 128.
enum class BaseQuant { kNone, kGptq4, kAwq4 };
/// Does bitsandbytes' 4-bit matmul keep its input for backward? Before 0.43.2 `MatMul4Bit`
/// stored `ctx.tensors = (A, B)` whenever an input needed a gradient (fixed by bitsandbytes
/// PR #1270: `(None, B)`), so every 4-bit linear kept its input, adapted or not.
enum class BnbInputs { kUnknown, kFreed, kKept };
/// Which end of a widened estimate: inputs that are unknown (bnb version) or that move the peak
/// either way (torch.compile) resolve to their cheap side (kLow), their assumed default
/// (kCentral), or their costly side (kHigh, the one verdicts use).
enum class Side { kLow, kCentral, kHigh };

/// Defaults are the issue's: lora, seq 2048, batch 1, grad-ckpt on, adamw, bf16, rank 16,
/// targets all, sdpa, standard loss.
struct PlanOptions {
  Method method = Method::kLora;
  uint64_t seq = 2048;
  uint64_t batch = 1;
  /// Micro-batches per optimizer step (gradient accumulation). Above 1, every gradient from the
  /// first micro-batch is alive during the next one's forward and backward (the loops zero them
  /// only after the step: HF Trainer, LitGPT, torchtune).
  uint64_t grad_accum = 1;
  bool grad_ckpt = true;
  Optimizer optimizer = Optimizer::kAdamW;
  Precision precision = Precision::kBf16;
  uint64_t rank = 16;
  std::set<std::string> targets = {"q", "k", "v", "o", "gate", "up", "down"};  ///< + "head"
  Attention attention = Attention::kSdpa;
  Loss loss = Loss::kStandard;
  double lora_dropout = 0;  ///< PEFT's default 0; > 0 keeps a dropped copy of each adapted input + mask
  AdapterDtype adapter_dtype = AdapterDtype::kFp32;
  BnbInputs bnb_inputs = BnbInputs::kUnknown;  ///< from BnbInputsFor(version); unknown widens
  std::string bnb_version;         ///< "0.42.0" as given or read, "" when unknown
  std::string bnb_version_source;  ///< "--bnb-version", "dist-info in DIR", or "" (unknown)
  bool compile = false;            ///< torch.compile: AOTAutograd may recompute pointwise outputs
  Framework framework = Framework::kTransformers;
  std::string framework_version;         ///< "4.45.2" as given or read; "" = unknown (widens the loss term)
  std::string framework_version_source;  ///< "--framework-version", "dist-info in DIR", or ""
  /// QLoRA under transformers: PEFT's prepare_model_for_kbit_training casts every non-4-bit
  /// fp16/bf16 parameter (embeddings, lm_head, norms) to fp32. TRL and axolotl call it.
  bool kbit_prep = true;
  bool double_quant = true;                ///< bnb_4bit_use_double_quant (4.127 vs 4.5 bits/param)
  std::set<std::string> modules_to_save;   ///< PEFT modules_to_save: "embed", "head" (trainable copies)
  bool dora = false;                       ///< PEFT use_dora / torchtune use_dora: magnitude vectors + weight norm
  BaseQuant quant = BaseQuant::kNone;      ///< --quant gptq4|awq4: LoRA on a pre-quantised base
};

/// kKept before 0.43.2, kFreed from it on; kUnknown for "" or an unparsable version.
BnbInputs BnbInputsFor(std::string_view version);

std::string ToString(Method m);
std::string ToString(Optimizer o);
std::string ToString(Precision p);
std::string ToString(Attention a);
std::string ToString(Loss l);
std::string ToString(AdapterDtype d);
std::string ToString(Framework f);
Result<Framework> ParseFramework(std::string_view s);
std::string ToString(BaseQuant q);
Result<BaseQuant> ParseQuant(std::string_view s);
Result<AdapterDtype> ParseAdapterDtype(std::string_view s);
Result<Method> ParseMethod(std::string_view s);
Result<Optimizer> ParseOptimizer(std::string_view s);
Result<Precision> ParsePrecision(std::string_view s);
Result<Attention> ParseAttention(std::string_view s);
Result<Loss> ParseLoss(std::string_view s);
/// "q,v", "attn" (q,k,v,o), "all" (every block linear), plus "head"; error names the bad item.
Result<std::set<std::string>> ParseTargets(std::string_view s);
/// "embed,head" (also PEFT's module names embed_tokens, lm_head); "" is none. Error names the item.
Result<std::set<std::string>> ParseModulesToSave(std::string_view s);

/// Every component in bytes (absent components are 0 because they do not exist for the method,
/// not because they are unknown). Three counters, each what one tool would show:
/// allocated (torch.cuda.max_memory_allocated), reserved (max_memory_reserved) and process
/// (the pool the process takes: reserved + paged state + CUDA context).
struct Breakdown {
  uint64_t params = 0;            ///< total parameters
  uint64_t trainable = 0;         ///< parameters with gradients
  double weights = 0;             ///< model weights as held in memory (NF4 for QLoRA linears)
  double adapter = 0;             ///< LoRA A/B matrices
  double gradients = 0;           ///< trainable only (all of them exist at the optimizer step)
  double first_gradients = 0;     ///< gradients alive while the activations still are (head/embedding)
  double accum_gradients = 0;  ///< the rest of the gradients, alive from the second micro-batch on (grad_accum > 1)
  double optimizer = 0;  ///< optimizer states
  bool optimizer_paged = false;  ///< bnb paged: invisible to torch's allocated counters
  double optimizer_step = 0;  ///< step transient: foreach AdamW's sqrt(v) (+ denom) lists
  double cast_copies = 0;  ///< LoRA under mixed precision: bf16 copies of fp32 frozen weights saved for backward
  double loss_bytes_per_logit = 0;  ///< the loss term's bytes per b*s*V logit (transformers; 0 for LitGPT's own)
  /// High end only: kResidualMargin of the larger phase, the planner's own error where every input
  /// is known (the largest under-prediction on the tuned validation half; docs/memory-model.md).
  double residual_margin = 0;
  double master_weights = 0;  ///< fp32 master copy (mixed precision, full fine-tune)
  double activations = 0;  ///< saved for backward (Korthikanti et al., adapted)
  double bnb_inputs = 0;  ///< of which: inputs kept by bnb < 0.43.2's 4-bit matmuls
  double retained = 0;  ///< the previous step's tensors still alive in this forward (see docs)
  double logits = 0;  ///< logits + fp32 log-softmax + gradients (or chunked)
  double dequant = 0;  ///< QLoRA: one dequantised weight at a time (+ its bf16 copy, fp16 state)
  double slack = 0;  ///< caching-allocator fragmentation (reserved - allocated)
  double load_cache = 0;  ///< QLoRA: 16-bit blocks 4-bit loading leaves reserved (torchtune: the NF4 quantiser's)
  double dora = 0;  ///< DoRA: one adapted linear's weight-norm transient (mechanisms.h)
  double saved_weights = 0;  ///< GPTQ: dequantised fp16 weights matmul saves for backward (one layer, or all)
  double host_state_dict = 0;  ///< torchtune: the whole state dict in host memory while loading (same pool on GB10)
  double overhead = 0;  ///< CUDA context (process counter only)
  double checkpoint_bytes = 0;  ///< weights on disk (safetensors sizes, else 16-bit)
  double mmap_window = 0;  ///< bytes mapped at once while loading (one shard)
  bool bnb_keeps_inputs = false;  ///< the bnb behaviour this breakdown assumed (QLoRA)
  bool recomputed = false;  ///< --compile: pointwise outputs recomputed (not on the high side)
  bool fp16_quant_state = false;  ///< QLoRA: 4-bit state in fp16, so dequantising also makes a bf16 copy
  bool load_copies_16bit = false;  ///< bnb 4-bit loading: the mapped shard is copied to the device in 16-bit

  double states() const;  ///< weights + adapter + visible optimizer + master
  double backward_peak() const;  ///< phase 1, start of backward: states + activations + logits + dequant + first grads
  double step_peak() const;  ///< phase 2, optimizer step: states + all gradients + step transient
  double allocated_peak() const;  ///< max of the two phases: torch.cuda.max_memory_allocated
  double reserved_peak() const;  ///< allocated + slack + load cache: torch.cuda.max_memory_reserved
  double process_peak() const;  ///< reserved + paged state + CUDA context: what the process takes
  double load_peak()
      const;  ///< rule of thumb: mapped checkpoint + device copy + overhead (torchtune: + whole state dict)
  double peak() const;  ///< max(process, load): what verdicts use
};

/// Pure: the accounting, with unknown or two-sided inputs resolved to `side`. Input error for
/// rank 0, seq 0, batch 0.
Result<Breakdown> Estimate(const LoadedModel& model, const PlanOptions& opts, Side side = Side::kCentral);

/// Constants with their sources (docs/memory-model.md).
inline constexpr double kNf4BytesPerParam = 4.127 / 8;  ///< QLoRA paper: 4 bit + 0.127 bit double-quant
inline constexpr double kCudaContextBytes = 650.0 * 1024 * 1024;  ///< gpu_poor's flat 650 MB (MiB in its code)
inline constexpr double kDefaultShardBytes = 5e9;  ///< transformers save_pretrained max_shard_size "5GB"
inline constexpr double kAllocatorSlack = 0.08;  ///< reserved - allocated, share of per-step allocations (docs)
inline constexpr double kStandardLossBytesPerLogit = 12;  ///< bf16 logits + fp32 log-softmax + fp32 and bf16 grads
/// The largest central under-prediction on the tuned half of tests/data/memory-validation.csv
/// when it was set (TT-19, -7.5 %; -6.6 % as torchtune 0.1.0), rounded up: what the high end adds
/// for what no input explains.
inline constexpr double kResidualMargin = 0.08;
inline constexpr double kLitgptHeadChunk = 128;  ///< litgpt/finetune/lora.py: model(..., lm_head_chunk_size=128)

}  // namespace sparkops::memory
