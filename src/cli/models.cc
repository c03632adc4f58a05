#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "memory/catalogue.h"

namespace sparkops {

using namespace memory;

int CmdModels(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("models", "List the built-in model catalogue (architecture facts, names for `plan`).");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  const auto& cat = Catalogue();
  if (ctx.json) {
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
      j["max_position_embeddings"] = s.max_positions ? nlohmann::json(*s.max_positions) : nlohmann::json();
      if (s.is_moe()) {
        j["num_experts"] = s.experts;
        j["num_experts_per_tok"] = s.experts_per_token;
        j["expert_intermediate_size"] = s.expert_intermediate;
      }
      arr.push_back(j);
    }
    ctx.out << JsonText(arr) << "\n";
    return kExitOk;
  }
  ctx.out << fmt::format("{:<30} {:<12} {:>9} {:>9} {:>7} {:>6} {:>8}  {}\n", "name", "type", "params", "active",
                         "layers", "kv/q", "context", "hf id");
  for (const auto& e : cat) {
    const ModelSpec& s = e.spec;
    auto pc = CountParams(s);
    ctx.out << fmt::format("{:<30} {:<12} {:>8.2f}B {:>8}  {:>6} {:>6} {:>8}  {}\n", s.name, s.model_type,
                           pc.total() / 1e9, s.is_moe() ? fmt::format("{:.2f}B", pc.active() / 1e9) : "", s.layers,
                           fmt::format("{}/{}", s.kv_heads, s.heads),
                           s.max_positions ? std::to_string(*s.max_positions) : "", e.hf_id);
  }
  ctx.out << fmt::format(
      "{} models; params are counted from the config fields (architecture facts only, no weights).\n", cat.size());
  return kExitOk;
}

}  // namespace sparkops
