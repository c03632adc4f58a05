#pragma once
/// `sparkops models` and `sparkops bandwidth` output: the model catalogue, and decode tokens/s
/// ceilings from memory bandwidth figures. Text for a person, JSON with the config.json field names.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/bandwidth.h"
#include "memory/catalogue.h"
#include "memory/model_spec.h"

namespace sparkops {

/// [{name, hf_id, model_type, params, active_params, params_official, vocab_size, hidden_size, ...,
///   max_position_embeddings (null when unknown), num_experts... (MoE only)}].
nlohmann::json ModelsJson(const std::vector<memory::CatalogueEntry>& cat);
/// One row per model (name, type, params, active, layers, kv/q heads, context, HF id) and a footer.
std::string ModelsText(const std::vector<memory::CatalogueEntry>& cat);

/// What `bandwidth` shows: the figures, and for a model the bytes read per decoded token.
struct BandwidthView {
  const memory::ModelSpec* model = nullptr;  ///< null without --model
  std::string dtype;
  double bytes_per_token = 0;  ///< > 0 with a model
  std::vector<memory::BandwidthFigure> figures;
};
/// {model, dtype, bytes_per_token, moe_active_params (with a model), figures: [{label, gb_per_s,
/// tokens_per_s_ceiling (with a model)}]}.
nlohmann::json BandwidthJson(const BandwidthView& v);
std::string BandwidthText(const BandwidthView& v);

}  // namespace sparkops
