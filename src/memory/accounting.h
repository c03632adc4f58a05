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
enum class Optimizer { kAdamW, kAdamW8bit, kPagedAdamW8bit, kSgd, kAdafactor };
enum class Precision { kBf16, kMixed, kFp32 };
enum class Attention { kSdpa, kFlash, kEager };
enum class Loss { kStandard, kChunked };

/// Defaults are the issue's: lora, seq 2048, batch 1, grad-ckpt on, adamw, bf16, rank 16,
/// targets all, sdpa, standard loss.
struct PlanOptions {
  Method method = Method::kLora;
  uint64_t seq = 2048;
  uint64_t batch = 1;
  bool grad_ckpt = true;
  Optimizer optimizer = Optimizer::kAdamW;
  Precision precision = Precision::kBf16;
  uint64_t rank = 16;
  std::set<std::string> targets = {"q", "k", "v", "o", "gate", "up", "down"};  ///< + "head"
  Attention attention = Attention::kSdpa;
  Loss loss = Loss::kStandard;
  double lora_dropout = 0;  ///< PEFT's default 0; > 0 keeps a dropped copy of each adapted input + mask
};

std::string ToString(Method m);
std::string ToString(Optimizer o);
std::string ToString(Precision p);
std::string ToString(Attention a);
std::string ToString(Loss l);
Result<Method> ParseMethod(std::string_view s);
Result<Optimizer> ParseOptimizer(std::string_view s);
Result<Precision> ParsePrecision(std::string_view s);
Result<Attention> ParseAttention(std::string_view s);
Result<Loss> ParseLoss(std::string_view s);
/// "q,v", "attn" (q,k,v,o), "all" (every block linear), plus "head"; error names the bad item.
Result<std::set<std::string>> ParseTargets(std::string_view s);

/// Every component in bytes (absent components are 0 because they do not exist for the method,
/// not because they are unknown).
struct Breakdown {
  uint64_t params = 0;            ///< total parameters
  uint64_t trainable = 0;         ///< parameters with gradients
  double weights = 0;             ///< model weights as held in memory (NF4 for QLoRA linears)
  double adapter = 0;             ///< LoRA A/B matrices
  double gradients = 0;           ///< trainable only
  double optimizer = 0;           ///< optimizer states
  bool optimizer_paged = false;   ///< bnb paged: invisible to torch's allocated counters
  double master_weights = 0;      ///< fp32 master copy (mixed precision, full fine-tune)
  double activations = 0;         ///< saved for backward (Korthikanti et al., adapted)
  double logits = 0;              ///< logits + fp32 upcast + its gradient (or chunked)
  double dequant = 0;             ///< QLoRA: one dequantised bf16 weight at a time
  double overhead = 0;            ///< CUDA context (+ allocator slack, see docs)
  double checkpoint_bytes = 0;    ///< weights on disk (safetensors sizes, else 16-bit)
  double mmap_window = 0;         ///< bytes mapped at once while loading (one shard)

  double allocated_peak() const;  ///< what torch.cuda.max_memory_allocated would show
  double steady_peak() const;     ///< allocated + paged state + overhead: the pool the process takes
  double load_peak() const;       ///< seed's rule: mapped checkpoint + device copy + overhead
  double peak() const;            ///< max(steady, load)
};

/// Pure: the accounting. Input error for rank 0, seq 0, batch 0.
Result<Breakdown> Estimate(const LoadedModel& model, const PlanOptions& opts);

/// Constants with their sources (docs/memory-model.md).
inline constexpr double kNf4BytesPerParam = 4.127 / 8;      ///< QLoRA paper: 4 bit + 0.127 bit double-quant
inline constexpr double kCudaContextBytes = 650.0 * 1024 * 1024;  ///< gpu_poor's flat 650 MB (MiB in its code)
inline constexpr double kDefaultShardBytes = 5e9;           ///< transformers save_pretrained max_shard_size "5GB"

}  // namespace sparkops::memory
