#pragma once
/// An inference server's footprint on the pool (vLLM, SGLang, llama.cpp) and the engine flag that
/// sizes it: weights, KV cache per token from the attention layout, the start-up profile's
/// activation peak, non-torch memory and CUDA graphs. Constants and their sources:
/// docs/memory-model.md, "Serving". Sizes in bytes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "memory/model_source.h"
#include "memory/model_spec.h"
#include "memory/planner.h"

namespace sparkops::memory {

enum class Engine { kVllm, kSglang, kLlamacpp };
/// vllm|sglang|llamacpp (llama.cpp, llama-server accepted). Input error naming `flag`.
Result<Engine> ParseEngine(std::string_view s, std::string_view flag = "--engine");
std::string ToString(Engine e);

/// The KV cache element type: auto is the weights' 16-bit type on vLLM/SGLang, f16 on llama.cpp.
enum class KvDtype { kAuto, kFp8, kBf16, kFp16 };
Result<KvDtype> ParseKvDtype(std::string_view s, std::string_view flag = "--kv-dtype");
std::string ToString(KvDtype d);
/// Bytes per element: 1 for fp8, else 2.
uint64_t KvDtypeBytes(KvDtype d);

/// A weights storage format and its bits per weight (scales included).
struct WeightsFormat {
  std::string name;  ///< bf16 fp16 fp8 int8 int4 nvfp4 (safetensors) or f16 q8_0 q6_k q5_k_m q4_k_m q4_0 (GGUF)
  double bits = 16;  ///< per weight, block scales included
  bool gguf = false; ///< llama.cpp's GGUF block formats: every tensor quantised, embeddings too
};
/// "" picks the engine's default: bf16 on vLLM/SGLang, q4_k_m on llama.cpp. A GGUF format on
/// vLLM/SGLang or a safetensors one on llama.cpp is an input error naming `flag`.
Result<WeightsFormat> ParseWeightsDtype(std::string_view s, Engine e, std::string_view flag = "--weights-dtype");

/// KV bytes one token of context costs when every layer keeps it: MHA/GQA layers x kv_heads x
/// head_dim x 2 (K and V) x elem_bytes; MLA layers x (kv_lora_rank + qk_rope_head_dim) x elem_bytes.
/// Input error on overflow.
Result<uint64_t> KvBytesPerToken(const ModelSpec& s, uint64_t elem_bytes);
/// KV bytes for `seqs` sequences of `len` tokens. `windowed`: sliding-window layers keep
/// min(len, window) tokens (vLLM's hybrid KV cache manager, llama.cpp without --swa-full); else
/// every layer keeps all `len`. Input error on overflow.
Result<uint64_t> KvBytes(const ModelSpec& s, uint64_t len, uint64_t seqs, uint64_t elem_bytes, bool windowed);

struct ServeOptions {
  Engine engine = Engine::kVllm;
  std::optional<uint64_t> max_model_len;  ///< unset: the model's max_position_embeddings (llama.cpp: 4096)
  uint64_t max_num_seqs = 1;              ///< sequences of max_model_len the KV cache must hold at once
  KvDtype kv_dtype = KvDtype::kAuto;
  std::string weights_dtype;              ///< "" = the engine's default
};

/// Constants (docs/memory-model.md "Serving" gives each one's source).
inline constexpr uint64_t kVllmProfileTokens = 8192;      ///< vLLM's default max_num_batched_tokens (API server)
inline constexpr uint64_t kVllmSamplerRows = 256;         ///< max_num_seqs in the dummy sampler run (central)
inline constexpr uint64_t kVllmSamplerRowsHigh = 1024;    ///< V1's default max_num_seqs on large devices
inline constexpr uint64_t kLlamacppUbatch = 512;          ///< llama.cpp's default -ub
inline constexpr uint64_t kLlamacppDefaultCtx = 4096;     ///< llama-server -c default used when none is given

/// One server's footprint, central and high (the verdict and flag use high).
struct ServeFootprint {
  std::string model;
  ServeOptions options;    ///< max_model_len filled in
  WeightsFormat weights_format;
  uint64_t kv_elem_bytes = 2;
  uint64_t params = 0;
  uint64_t kv_per_token = 0;             ///< every layer at full length
  double weights = 0;
  double kv = 0, kv_high = 0;            ///< central: sliding layers windowed; high: every layer full length
  double activation = 0, activation_high = 0;  ///< profile peak (vLLM/SGLang) or compute buffer (llama.cpp)
  double non_torch = 0, non_torch_high = 0;    ///< CUDA context, cuBLAS workspace, allocator slack
  double graphs = 0, graphs_high = 0;          ///< CUDA graph pools (0 on llama.cpp)
  double total() const { return weights + kv + activation + non_torch + graphs; }
  double total_high() const { return weights + kv_high + activation_high + non_torch_high + graphs_high; }
  /// What the engine's fraction flag covers: everything on vLLM; weights + KV on SGLang.
  double flagged_high() const;
};

/// Input error naming the flag: --max-model-len above the model's max_position_embeddings (vLLM
/// refuses it too), or a product that overflows.
Result<ServeFootprint> SizeServer(const LoadedModel& m, const ServeOptions& o);

/// The engine flag that sizes the server: needed (the least that holds the high end) and the
/// most that `room` allows. A value the inputs cannot give (no MemTotal) stays absent.
struct ServeFlag {
  std::string flag;                 ///< --gpu-memory-utilization, --mem-fraction-static, -c
  std::string basis;                ///< what the fraction is of ("MemTotal", "MemAvailable at start-up", "tokens")
  std::optional<double> basis_bytes;
  std::optional<double> needed, most;  ///< fractions rounded up/down to 0.01; llama.cpp: tokens
  bool fits() const { return needed && most && *needed <= *most; }
};
/// vLLM: fraction of MemTotal (per instance since vLLM PR #10511). SGLang: fraction of the free
/// memory before its weights load (model_runner profile_max_num_token) covering weights + KV.
/// llama.cpp: -c tokens (needed: max_model_len x max_num_seqs; most: what fits `room`, in 256s).
ServeFlag FlagFor(const ServeFootprint& f, const ModelSpec& spec, double room, std::optional<double> mem_total,
                  std::optional<double> free_at_start);

/// One server (and a trainer's plan with --beside) against one budget.
struct ServePlan {
  ServeFootprint server;
  Budget budget;
  std::optional<uint64_t> mem_total;  ///< MemTotal (bytes), when read
  std::optional<Plan> trainer;        ///< --beside: the trainer's plan (its high end is kept free)
  double room = 0;                    ///< budget - the trainer's high end (or the budget)
  ServeFlag flag;
  Verdict verdict = Verdict::kNoFit;  ///< server high (+ trainer high) against the budget
};

/// Sizes the server and its flag; the verdict judges both high ends against the budget. With a
/// --budget-gib budget the engine fractions are of that budget (MemTotal is host RAM there).
Result<ServePlan> MakeServePlan(const LoadedModel& m, const ServeOptions& o, const Budget& budget,
                                std::optional<uint64_t> mem_total, std::optional<Plan> trainer);

}  // namespace sparkops::memory
