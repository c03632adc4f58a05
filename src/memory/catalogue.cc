#include "memory/catalogue.h"

#include <fmt/format.h>

#include <map>

#include "base/strings.h"

namespace sparkops::memory {

extern const char kCatalogueCsv[];  // generated from data/models/catalogue.csv

namespace {

/// Splits one CSV line (RFC 4180 quotes, no embedded newlines).
std::vector<std::string> SplitCsv(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace

Result<std::vector<CatalogueEntry>> ParseCatalogue(std::string_view csv) {
  auto lines = SplitLines(csv);
  if (lines.empty()) return InputError("model catalogue: empty");
  auto header = SplitCsv(lines[0]);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  std::vector<CatalogueEntry> out;
  for (size_t n = 1; n < lines.size(); ++n) {
    if (Trim(lines[n]).empty()) continue;
    auto f = SplitCsv(lines[n]);
    auto cell = [&](const char* k) -> std::string {
      auto it = col.find(k);
      return it == col.end() || it->second >= f.size() ? std::string() : f[it->second];
    };
    auto num = [&](const char* k) -> Result<uint64_t> {
      std::string v = cell(k);
      if (v.empty()) return 0;
      auto p = ParseUint(v);
      if (!p) return InputError(fmt::format("model catalogue line {}: field '{}' = '{}' is not a number", n + 1, k, v));
      return *p;
    };
    CatalogueEntry e;
    ModelSpec& s = e.spec;
    s.name = cell("name");
    e.hf_id = cell("hf_id");
    s.model_type = cell("model_type");
    s.params_official = cell("params_official");
    s.tied = cell("tie_word_embeddings") == "true";
    struct {
      const char* key;
      uint64_t* dst;
    } fields[] = {{"vocab_size", &s.vocab},
                  {"hidden_size", &s.hidden},
                  {"intermediate_size", &s.intermediate},
                  {"num_hidden_layers", &s.layers},
                  {"num_attention_heads", &s.heads},
                  {"num_key_value_heads", &s.kv_heads},
                  {"head_dim", &s.head_dim},
                  {"num_experts", &s.experts},
                  {"num_experts_per_tok", &s.experts_per_token},
                  {"moe_intermediate_size", &s.expert_intermediate}};
    for (auto& fl : fields) {
      auto v = num(fl.key);
      if (!v) return std::unexpected(v.error());
      *fl.dst = *v;
    }
    auto mp = num("max_position_embeddings");
    if (!mp) return std::unexpected(mp.error());
    if (*mp) s.max_positions = *mp;
    auto sw = num("sliding_window");
    if (!sw) return std::unexpected(sw.error());
    if (*sw) s.sliding_window = *sw;
    if (s.name.empty() || !s.hidden || !s.layers || !s.heads || !s.vocab || !s.intermediate)
      return InputError(fmt::format("model catalogue line {}: incomplete row", n + 1));
    if (!s.kv_heads) s.kv_heads = s.heads;
    if (!s.head_dim) s.head_dim = s.hidden / s.heads;
    if (s.experts && !s.expert_intermediate) s.expert_intermediate = s.intermediate;
    out.push_back(std::move(e));
  }
  return out;
}

const std::vector<CatalogueEntry>& Catalogue() {
  static const std::vector<CatalogueEntry> kCat = [] {
    auto c = ParseCatalogue(kCatalogueCsv);
    return c ? *c : std::vector<CatalogueEntry>{};  // a broken embedded CSV fails the catalogue test
  }();
  return kCat;
}

const CatalogueEntry* FindModel(std::string_view name) {
  std::string n = ToLower(std::string(name));
  for (const auto& e : Catalogue())
    if (e.spec.name == n || ToLower(e.hf_id) == n) return &e;
  return nullptr;
}

std::string NearestModelName(std::string_view name) {
  std::string n = ToLower(std::string(name)), best;
  size_t best_d = 4;  // more than 3 edits away is not a typo
  for (const auto& e : Catalogue()) {
    size_t d = EditDistanceAtMost(n, e.spec.name, best_d - 1);  // bounded: a long name costs O(1) per entry
    if (d < best_d) best_d = d, best = e.spec.name;
    if (best_d == 0) break;  // nothing later beats an exact match
  }
  return best;
}

}  // namespace sparkops::memory
