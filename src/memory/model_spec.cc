#include "memory/model_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/json_parse.h"

namespace sparkops::memory {
namespace {

using nlohmann::json;

bool OneOf(const std::string& t, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (t == n) return true;
  return false;
}

constexpr uint64_t kMaxDim = 100'000'000;  // larger than any real config field; bounds products

/// Reads the first present key of `keys` as a positive integer bounded by kMaxDim.
Result<std::optional<uint64_t>> Field(const json& j, std::initializer_list<const char*> keys, const std::string& file) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer() && !it->is_number_unsigned())
      return InputError(fmt::format("{}: field '{}' is not an integer", file, k));
    int64_t v = it->get<int64_t>();
    if (v <= 0 || static_cast<uint64_t>(v) > kMaxDim)
      return InputError(fmt::format("{}: field '{}' = {} is out of range (1..{})", file, k, v, kMaxDim));
    return std::optional<uint64_t>(static_cast<uint64_t>(v));
  }
  return std::optional<uint64_t>();
}

Result<uint64_t> Required(const json& j, std::initializer_list<const char*> keys, const std::string& file) {
  auto v = Field(j, keys, file);
  if (!v) return std::unexpected(v.error());
  if (!*v) return InputError(fmt::format("{}: missing field '{}'", file, *keys.begin()));
  return **v;
}

bool DefaultTied(const std::string& t) {
  // transformers' per-class default for tie_word_embeddings (PretrainedConfig's True for gpt_bigcode).
  return OneOf(t, {"gemma", "gemma2", "gemma3", "gemma3_text", "opt", "bloom", "gpt_bigcode"});
}

}  // namespace

// Architecture traits by model_type, as each model's modeling code stores its weights: qwen (v1)
// c_attn, gpt_bigcode c_attn (multi-query), baichuan W_pack and chatglm query_key_value are one
// fused q|k|v linear; chatglm's dense_h_to_4h is a fused gate|up; gpt_bigcode and phi have a plain
// fc1/fc2 MLP; phi and falcon run attention and MLP in parallel off one LayerNorm.
bool ModelSpec::gated_mlp() const {
  return !OneOf(model_type, {"gpt_neox", "falcon", "opt", "bloom", "gpt_bigcode", "phi"});
}
bool ModelSpec::fused_qkv() const {
  return OneOf(model_type, {"phi3", "falcon", "bloom", "gpt_neox", "qwen", "gpt_bigcode", "baichuan", "chatglm"});
}
bool ModelSpec::fused_gate_up() const { return OneOf(model_type, {"phi3", "chatglm"}); }
int ModelSpec::norms_per_layer() const {
  if (OneOf(model_type, {"falcon", "phi"})) return 1;  // one LayerNorm feeding parallel attention + MLP
  return OneOf(model_type, {"gemma2", "gemma3", "gemma3_text"}) ? 4 : 2;
}

std::vector<LinearShape> ModelSpec::BlockLinears() const {
  std::vector<LinearShape> v;
  const uint64_t q = heads * head_dim, kv = kv_heads * head_dim;
  if (fused_qkv()) {
    v.push_back({"qkv", hidden, q + 2 * kv, 1});
  } else {
    v.push_back({"q", hidden, q, 1});
    v.push_back({"k", hidden, kv, 1});
    v.push_back({"v", hidden, kv, 1});
  }
  v.push_back({"o", q, hidden, 1});
  const uint64_t n = is_moe() ? experts : 1;
  const uint64_t i = is_moe() ? expert_intermediate : intermediate;
  if (!gated_mlp()) {
    v.push_back({"up", hidden, i, n});
  } else if (fused_gate_up()) {
    v.push_back({"gate_up", hidden, 2 * i, n});
  } else {
    v.push_back({"gate", hidden, i, n});
    v.push_back({"up", hidden, i, n});
  }
  v.push_back({"down", i, hidden, n});
  return v;
}

ParamCounts CountParams(const ModelSpec& s) {
  ParamCounts c;
  c.embedding = s.vocab * s.hidden;
  if (s.model_type == "opt" && s.max_positions) c.embedding += (*s.max_positions + 2) * s.hidden;
  if (s.model_type == "gpt_bigcode" && s.max_positions) c.embedding += *s.max_positions * s.hidden;  // wpe
  c.head = s.tied ? 0 : s.vocab * s.hidden;
  uint64_t per_layer = 0, per_layer_active = 0;
  for (const auto& l : s.BlockLinears()) {
    per_layer += l.params();
    per_layer_active += l.d_in * l.d_out * (s.is_moe() ? std::min(l.count, s.experts_per_token) : l.count);
  }
  c.block_linear = per_layer * s.layers;
  c.active_block_linear = per_layer_active * s.layers;
  const bool ln_bias = OneOf(s.model_type, {"gpt_neox", "falcon", "opt", "bloom", "gpt_bigcode", "phi"});
  uint64_t other = static_cast<uint64_t>(s.norms_per_layer()) * s.hidden * (ln_bias ? 2 : 1);
  if (OneOf(s.model_type, {"qwen3", "qwen3_moe", "gemma3", "gemma3_text"})) other += 2 * s.head_dim;  // q_norm, k_norm
  if (OneOf(s.model_type, {"qwen2", "qwen", "chatglm"}))
    other += (s.heads + 2 * s.kv_heads) * s.head_dim;  // q/k/v biases
  if (s.is_moe()) other += s.hidden * s.experts;  // router
  if (OneOf(s.model_type, {"bloom", "opt", "gpt_neox", "gpt_bigcode", "phi"}))  // biases of every linear
    other += (s.heads + 2 * s.kv_heads) * s.head_dim + 2 * s.hidden + s.intermediate;
  c.other = other * s.layers + s.hidden * (ln_bias ? 2 : 1);  // + final norm
  if (s.model_type == "bloom") c.other += 2 * s.hidden;  // embedding LayerNorm
  if (s.model_type == "phi") c.other += s.vocab;  // lm_head bias
  return c;
}

const std::vector<std::string>& SupportedModelTypes() {
  static const std::vector<std::string> kTypes = {"llama",     "mistral", "mixtral",     "qwen2",  "qwen3",
                                                  "qwen3_moe", "gemma",   "gemma2",      "gemma3", "gemma3_text",
                                                  "phi3",      "gpt_oss", "gpt_neox",    "falcon", "opt",
                                                  "bloom",     "qwen",    "gpt_bigcode", "phi",    "chatglm",
                                                  "baichuan",  "granite"};
  return kTypes;
}

uint64_t ModelSpec::sliding_layers() const {
  if (!sliding_window) return 0;
  if (OneOf(model_type, {"mistral", "mixtral", "phi3"})) return layers;
  if (OneOf(model_type, {"gemma2", "gpt_oss"})) return (layers + 1) / 2;
  if (OneOf(model_type, {"gemma3", "gemma3_text"})) return layers - layers / 6;
  return 0;  // a type whose pattern is not known here: every layer counted at full length
}

Result<ModelSpec> ParseConfigJson(std::string_view text, const std::string& file) {
  auto parsed = ParseJson(text);
  if (!parsed) return InputError(fmt::format("{}: {}", file, parsed.error().message));
  json root = std::move(*parsed);
  if (!root.is_object()) return InputError(fmt::format("{}: not a JSON object", file));
  auto mt = root.find("model_type");
  if (mt == root.end() || !mt->is_string()) return InputError(fmt::format("{}: missing field 'model_type'", file));
  ModelSpec s;
  s.name = file;
  s.model_type = mt->get<std::string>();
  const auto& types = SupportedModelTypes();
  if (std::find(types.begin(), types.end(), s.model_type) == types.end())
    return InputError(fmt::format("{}: model_type '{}' is not supported (supported: {})", file, s.model_type,
                                  fmt::join(types, ", ")));
  const json* j = &root;
  if (s.model_type == "gemma3") {  // multimodal wrapper: the language model is text_config
    auto tc = root.find("text_config");
    if (tc == root.end() || !tc->is_object())
      return InputError(fmt::format("{}: gemma3 config without 'text_config'", file));
    j = &*tc;
  }
  auto get = [&](std::initializer_list<const char*> keys) { return Required(*j, keys, file); };
  auto hidden = get({"hidden_size", "n_embed", "n_embd", "d_model"});
  if (!hidden) return std::unexpected(hidden.error());
  s.hidden = *hidden;
  // Gemma 3 text_config may omit vocab_size (class default 262208).
  auto vocab = Field(*j, {"vocab_size", "padded_vocab_size"}, file);
  if (!vocab) return std::unexpected(vocab.error());
  if (*vocab) s.vocab = **vocab;
  else if (s.model_type == "gemma3") s.vocab = 262208;
  else return InputError(fmt::format("{}: missing field 'vocab_size'", file));
  auto layers = get({"num_hidden_layers", "n_layer", "num_layers"});
  if (!layers) return std::unexpected(layers.error());
  s.layers = *layers;
  auto heads = get({"num_attention_heads", "n_head"});
  if (!heads) return std::unexpected(heads.error());
  s.heads = *heads;
  auto kv = Field(*j, {"num_key_value_heads", "num_kv_heads"}, file);
  if (!kv) return std::unexpected(kv.error());
  auto mqi = j->find("multi_query");
  const bool mq = mqi != j->end() && mqi->is_boolean() && mqi->get<bool>();
  s.kv_heads = *kv ? **kv : (mq ? 1 : s.heads);
  // chatglm: multi_query_attention with multi_query_group_num key/value groups.
  if (auto g = j->find("multi_query_attention"); g != j->end() && g->is_boolean() && g->get<bool>()) {
    auto groups = Required(*j, {"multi_query_group_num"}, file);
    if (!groups) return std::unexpected(groups.error());
    s.kv_heads = *groups;
  }
  if (s.kv_heads > s.heads)
    return InputError(fmt::format("{}: {} key/value heads exceed the {} attention heads", file, s.kv_heads, s.heads));
  auto hd = Field(*j, {"head_dim", "kv_channels"}, file);
  if (!hd) return std::unexpected(hd.error());
  s.head_dim = *hd ? **hd : s.hidden / s.heads;
  if (s.head_dim == 0) return InputError(fmt::format("{}: hidden_size smaller than num_attention_heads", file));
  auto inter = Field(*j, {"intermediate_size", "ffn_dim", "ffn_hidden_size", "n_inner"}, file);
  if (!inter) return std::unexpected(inter.error());
  if (*inter) s.intermediate = **inter;
  else if (OneOf(s.model_type, {"falcon", "bloom", "gpt_neox", "gpt_bigcode"})) s.intermediate = 4 * s.hidden;
  else return InputError(fmt::format("{}: missing field 'intermediate_size'", file));
  // Qwen (v1)'s intermediate_size is w1 + w2 together (QWenMLP: intermediate_size // 2 each).
  if (s.model_type == "qwen") s.intermediate = std::max<uint64_t>(1, s.intermediate / 2);
  auto maxpos = Field(*j, {"max_position_embeddings", "n_positions", "seq_length"}, file);
  if (!maxpos) return std::unexpected(maxpos.error());
  s.max_positions = *maxpos;
  s.tied = DefaultTied(s.model_type);
  // sliding_window: null (Mistral v0.3), or a value with use_sliding_window false (Qwen2/3), is no window.
  if (auto w = j->find("sliding_window"); w != j->end() && w->is_number_unsigned() && w->get<uint64_t>() > 0) {
    auto use = j->find("use_sliding_window");
    if (use == j->end() || !use->is_boolean() || use->get<bool>()) s.sliding_window = w->get<uint64_t>();
  }
  if (auto t = j->find("tie_word_embeddings"); t != j->end() && t->is_boolean()) s.tied = t->get<bool>();
  else if (auto r = root.find("tie_word_embeddings"); r != root.end() && r->is_boolean()) s.tied = r->get<bool>();
  if (OneOf(s.model_type, {"mixtral", "qwen3_moe", "gpt_oss"})) {
    auto e = Required(*j, {"num_local_experts", "num_experts"}, file);
    if (!e) return std::unexpected(e.error());
    auto k = Required(*j, {"num_experts_per_tok", "experts_per_token"}, file);
    if (!k) return std::unexpected(k.error());
    if (*k > *e) return InputError(fmt::format("{}: num_experts_per_tok {} exceeds the {} experts", file, *k, *e));
    auto mi = Field(*j, {"moe_intermediate_size"}, file);
    if (!mi) return std::unexpected(mi.error());
    s.experts = *e;
    s.experts_per_token = *k;
    s.expert_intermediate = *mi ? **mi : s.intermediate;
  }
  // Bound the products before any integer arithmetic uses them (100 T parameters is implausible).
  const double d = [&] {
    double h = double(s.hidden), layer = double(s.heads + 2 * s.kv_heads) * double(s.head_dim) * h * 2;
    layer += 3.0 * h * double(s.is_moe() ? s.expert_intermediate : s.intermediate) * double(s.is_moe() ? s.experts : 1);
    return layer * double(s.layers) + 2.0 * double(s.vocab) * h;
  }();
  if (d > 1e14)
    return InputError(fmt::format("{}: the dimensions give {:.3g} parameters, which is implausible", file, d));
  return s;
}

}  // namespace sparkops::memory
