#include "report/models.h"

#include <fmt/format.h>

#include "base/json_text.h"

namespace sparkops {

using namespace memory;

nlohmann::json ModelsJson(const std::vector<CatalogueEntry>& cat) {
  auto arr = nlohmann::json::array();
  for (const auto& e : cat) {
    const ModelSpec& s = e.spec;
    auto pc = CountParams(s);
    nlohmann::json j = {{"name", s.name},
                        {"hf_id", e.hf_id},
                        {"model_type", s.model_type},
                        {"params", pc.total()},
                        {"active_params", pc.active()},
                        {"params_official", s.params_official},
                        {"vocab_size", s.vocab},
                        {"hidden_size", s.hidden},
                        {"intermediate_size", s.intermediate},
                        {"num_hidden_layers", s.layers},
                        {"num_attention_heads", s.heads},
                        {"num_key_value_heads", s.kv_heads},
                        {"head_dim", s.head_dim},
                        {"tie_word_embeddings", s.tied}};
    j["max_position_embeddings"] = OrNull(s.max_positions);
    if (s.is_moe()) {
      j["num_experts"] = s.experts;
      j["num_experts_per_tok"] = s.experts_per_token;
      j["expert_intermediate_size"] = s.expert_intermediate;
    }
    arr.push_back(j);
  }
  return arr;
}

std::string ModelsText(const std::vector<CatalogueEntry>& cat) {
  std::string out = fmt::format("{:<30} {:<12} {:>9} {:>9} {:>7} {:>6} {:>8}  {}\n", "name", "type", "params", "active",
                                "layers", "kv/q", "context", "hf id");
  for (const auto& e : cat) {
    const ModelSpec& s = e.spec;
    auto pc = CountParams(s);
    out += fmt::format("{:<30} {:<12} {:>8.2f}B {:>8}  {:>6} {:>6} {:>8}  {}\n", s.name, s.model_type, pc.total() / 1e9,
                       s.is_moe() ? fmt::format("{:.2f}B", pc.active() / 1e9) : "", s.layers,
                       fmt::format("{}/{}", s.kv_heads, s.heads),
                       s.max_positions ? std::to_string(*s.max_positions) : "", e.hf_id);
  }
  return out +
         fmt::format("{} models; params are counted from the config fields (architecture facts only, no weights).\n",
                     cat.size());
}

nlohmann::json BandwidthJson(const BandwidthView& v) {
  nlohmann::json j;
  if (v.model) {
    j["model"] = v.model->name;
    j["dtype"] = v.dtype;
    j["bytes_per_token"] = v.bytes_per_token;
    j["moe_active_params"] = v.model->is_moe() ? nlohmann::json(CountParams(*v.model).active()) : nlohmann::json();
  }
  j["figures"] = nlohmann::json::array();
  for (const auto& f : v.figures) {
    nlohmann::json e = {{"label", f.label}, {"gb_per_s", f.gb_per_s}};
    if (v.model) e["tokens_per_s_ceiling"] = f.gb_per_s * 1e9 / v.bytes_per_token;
    j["figures"].push_back(e);
  }
  return j;
}

std::string BandwidthText(const BandwidthView& v) {
  std::string out;
  const ModelSpec* m = v.model;
  if (m)
    out += fmt::format(
        "{} in {}: {:.2f} GB read per decoded token{} (weights only; the KV cache adds more at long "
        "context, so these are ceilings)\n",
        m->name, v.dtype, v.bytes_per_token / 1e9,
        m->is_moe() ? fmt::format(" (MoE: {} of {} experts active)", m->experts_per_token, m->experts) : "");
  for (const auto& f : v.figures) {
    if (m)
      out += fmt::format("  {:>7.1f} GB/s -> {:>8.1f} tokens/s  {}\n", f.gb_per_s, f.gb_per_s * 1e9 / v.bytes_per_token,
                         f.label);
    else out += fmt::format("  {:>7.1f} GB/s  {}\n", f.gb_per_s, f.label);
  }
  if (!m) out += "give --model M [--dtype D] for the decode tokens/s ceiling\n";
  return out;
}

}  // namespace sparkops
