#pragma once
/// Model architecture facts (the config.json fields the memory planner needs) and the parameter
/// counts derived from them. Sources of a spec: the built-in catalogue (data/models/catalogue.csv),
/// a config.json, or a directory holding one (plus safetensors headers, see safetensors.h).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops::memory {

/// One linear layer shape inside a transformer block (or the LM head), in elements.
struct LinearShape {
  std::string name;    ///< q k v o gate up down qkv gate_up head
  uint64_t d_in = 0;   ///< input features
  uint64_t d_out = 0;  ///< output features
  uint64_t count = 1;  ///< copies per block (MoE: number of experts)
  uint64_t params() const { return d_in * d_out * count; }
};

struct ModelSpec {
  std::string name;        ///< catalogue name or the config path
  std::string model_type;  ///< HF model_type (llama, qwen3_moe, ...)
  uint64_t vocab = 0, hidden = 0, intermediate = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool tied = false;                        ///< tie_word_embeddings
  std::optional<uint64_t> max_positions;    ///< max_position_embeddings, when the config has it
  uint64_t experts = 0;                     ///< MoE experts per layer (0 = dense)
  uint64_t experts_per_token = 0;           ///< MoE active experts per token
  uint64_t expert_intermediate = 0;         ///< per-expert MLP width
  std::string params_official;              ///< the model card's figure, text ("70B"), may be ""
  std::optional<uint64_t> sliding_window;   ///< tokens a sliding-window layer keeps (config sliding_window), if any
  uint64_t kv_lora_rank = 0;                ///< MLA (DeepSeek-V2/V3): compressed KV latent width; 0 = not MLA
  uint64_t qk_rope_head_dim = 0;            ///< MLA: decoupled RoPE key width cached beside the latent

  bool gated_mlp() const;      ///< SwiGLU/GeGLU (3 matrices) vs fc1/fc2 (2)
  bool fused_qkv() const;      ///< one q|k|v projection (phi3, falcon, bloom, gpt_neox)
  bool fused_gate_up() const;  ///< one gate|up projection (phi3)
  int norms_per_layer() const; ///< 2, or 4 for Gemma 2/3 (pre+post norms)
  bool is_moe() const { return experts > 0; }
  /// Layers that attend through `sliding_window` (0 without one): every layer for mistral, mixtral,
  /// phi3; every other one for gemma2 and gpt_oss (layer 0 first); 5 of every 6 for gemma3.
  uint64_t sliding_layers() const;

  /// The linear layers of one block (experts counted with `count`), q/k/v/gate/up split or
  /// fused as the HF implementation stores them.
  std::vector<LinearShape> BlockLinears() const;
};

/// Parameter counts in elements, derived from the config (exact for llama-style configs; small
/// terms such as biases of GPT-2-style blocks are approximate).
struct ParamCounts {
  uint64_t embedding = 0;   ///< token (and learned position) embeddings
  uint64_t head = 0;        ///< untied lm_head (0 when tied)
  uint64_t block_linear = 0;///< all linear weights in the blocks (all experts)
  uint64_t other = 0;       ///< norms, biases, routers
  uint64_t active_block_linear = 0;  ///< MoE: linears a token passes through (k experts)
  uint64_t total() const { return embedding + head + block_linear + other; }
  uint64_t active() const { return embedding + head + active_block_linear + other; }
};
ParamCounts CountParams(const ModelSpec& spec);

/// Types the planner knows (the catalogue's): llama mistral mixtral qwen2 qwen3 qwen3_moe gemma
/// gemma2 gemma3 gemma3_text phi3 gpt_oss gpt_neox falcon opt bloom.
const std::vector<std::string>& SupportedModelTypes();

/// Pure: parses a HF config.json text. `file` names it in errors. Unknown model_type, a missing
/// or non-positive field, or bad JSON is an Input error naming the file and the field.
Result<ModelSpec> ParseConfigJson(std::string_view text, const std::string& file);

}  // namespace sparkops::memory
