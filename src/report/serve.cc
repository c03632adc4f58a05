#include "report/serve.h"

#include <fmt/format.h>

#include <cmath>

#include "host/meminfo.h"
#include "report/plan.h"

namespace sparkops {

using namespace memory;

namespace {

double G(double bytes) { return bytes / kGiB; }
double Round3(double v) { return std::round(v * 1000) / 1000; }
nlohmann::json RoundedOrNull(std::optional<double> v, double scale = 1) {
  return v ? nlohmann::json(Round3(*v / scale)) : nlohmann::json();
}

std::string Layout(const ServeFootprint& f, const ModelSpec& s) {
  std::string out =
      s.kv_lora_rank ? fmt::format("MLA: {} layers x ({} latent + {} rope) x {} B", s.layers, s.kv_lora_rank,
                                   s.qk_rope_head_dim, f.kv_elem_bytes)
                     : fmt::format("{}: {} layers x {} KV heads x {} x 2 x {} B", s.kv_heads < s.heads ? "GQA" : "MHA",
                                   s.layers, s.kv_heads, s.head_dim, f.kv_elem_bytes);
  if (s.sliding_layers())
    out += fmt::format("; {} of {} layers keep a {}-token window", s.sliding_layers(), s.layers, *s.sliding_window);
  return out;
}

std::string FlagLine(const ServeFlag& fl, Engine e) {
  if (!fl.needed || !fl.most) return fmt::format("{}: not computed ({} unknown)", fl.flag, fl.basis);
  const bool tokens = e == Engine::kLlamacpp;
  auto v = [&](double x) { return tokens ? fmt::format("{:.0f}", x) : fmt::format("{:.2f}", x); };
  const std::string basis =
      tokens ? fl.basis : fmt::format("of {} {:.1f} GiB", fl.basis, fl.basis_bytes ? G(*fl.basis_bytes) : 0.0);
  if (!fl.fits())
    return fmt::format("{}: needs {} but at most {} leaves the budget ({}): does not fit", fl.flag, v(*fl.needed),
                       v(*fl.most), basis);
  return fmt::format("{} {}  (the least that holds the high end; up to {} leaves the budget; {})", fl.flag,
                     v(*fl.needed), v(*fl.most), basis);
}

nlohmann::json ServeJson(const ServePlan& p, const ModelSpec& s) {
  const ServeFootprint& f = p.server;
  auto range = [](double lo, double hi) { return nlohmann::json{{"low", Round3(G(lo))}, {"high", Round3(G(hi))}}; };
  nlohmann::json j;
  j["engine"] = ToString(f.options.engine);
  j["model"] = f.model;
  j["params"] = f.params;
  j["weights_dtype"] = f.weights_format.name;
  j["weights_bits"] = f.weights_format.bits;
  j["max_model_len"] = f.options.max_model_len.value_or(0);
  j["max_num_seqs"] = f.options.max_num_seqs;
  j["kv_dtype"] = ToString(f.options.kv_dtype);
  j["kv_elem_bytes"] = f.kv_elem_bytes;
  j["kv_bytes_per_token"] = f.kv_per_token;
  j["attention"] = s.kv_lora_rank ? "mla" : (s.kv_heads < s.heads ? "gqa" : "mha");
  j["sliding_layers"] = s.sliding_layers();
  j["sliding_window"] = s.sliding_layers() ? nlohmann::json(*s.sliding_window) : nlohmann::json();
  j["components_gib"] = {{"weights", Round3(G(f.weights))},
                         {"kv_cache", Round3(G(f.kv))},
                         {"activation_peak", Round3(G(f.activation))},
                         {"non_torch", Round3(G(f.non_torch))},
                         {"cuda_graphs", Round3(G(f.graphs))}};
  j["range"] = {{"kv_cache_gib", range(f.kv, f.kv_high)},
                {"activation_peak_gib", range(f.activation, f.activation_high)},
                {"non_torch_gib", range(f.non_torch, f.non_torch_high)},
                {"cuda_graphs_gib", range(f.graphs, f.graphs_high)},
                {"footprint_gib", range(f.total(), f.total_high())}};
  j["footprint_gib"] = Round3(G(f.total()));
  j["flag"] = {{"name", p.flag.flag},
               {"needed", RoundedOrNull(p.flag.needed)},
               {"most", RoundedOrNull(p.flag.most)},
               {"basis", p.flag.basis},
               {"basis_gib", p.flag.basis_bytes ? nlohmann::json(Round3(G(*p.flag.basis_bytes))) : nlohmann::json()},
               {"fits", p.flag.fits()}};
  return j;
}

}  // namespace

nlohmann::json ServePlanJson(const ServePlan& p, const ModelSpec& s) {
  if (p.trainer) {
    nlohmann::json j = PlanJson(*p.trainer);
    j["beside"] = {{"serve", ServeJson(p, s)},
                   {"room_gib", Round3(G(p.room))},
                   {"combined_peak_gib", Round3(G(p.trainer->high.peak() + p.server.total_high()))},
                   {"verdict", ToString(p.verdict)}};
    return j;
  }
  nlohmann::json j;
  j["schema"] = kPlanJsonSchema;
  j["serve"] = ServeJson(p, s);
  j["budget_gib"] = Round3(G(p.budget.bytes));
  j["budget_source"] = p.budget.source;
  j["mem_total_gib"] = p.mem_total ? nlohmann::json(Round3(ToGiB(*p.mem_total))) : nlohmann::json();
  j["mem_available_gib"] = RoundedOrNull(p.budget.mem_available, kGiB);
  j["room_gib"] = Round3(G(p.room));
  j["verdict"] = ToString(p.verdict);
  return j;
}

void PrintServePlan(std::ostream& out, const ServePlan& p, const ModelSpec& s) {
  const ServeFootprint& f = p.server;
  if (p.trainer) {
    PrintPlan(out, *p.trainer);
    out << "\nBeside it:\n";
  }
  out << fmt::format(
      "Server: {} {} ({:.2f} B params, {} weights {:g} bits), max-model-len {}, max-num-seqs {}, "
      "KV {} ({} B)\n",
      ToString(f.options.engine), f.model, double(f.params) / 1e9, f.weights_format.name, f.weights_format.bits,
      f.options.max_model_len.value_or(0), f.options.max_num_seqs, ToString(f.options.kv_dtype), f.kv_elem_bytes);
  out << fmt::format("  KV cache per token   {:9.1f} KiB  ({})\n", double(f.kv_per_token) / 1024, Layout(f, s));
  auto row = [&](const char* name, double c, double h, const char* why) {
    out << fmt::format("  {:<20} {:9.2f} GiB", name, G(c));
    if (std::abs(h - c) > 0.0005 * kGiB) out << fmt::format("  (high {:.2f}: {})", G(h), why);
    out << "\n";
  };
  const bool llama = f.options.engine == Engine::kLlamacpp;
  row("weights", f.weights, f.weights, "");
  row("KV cache", f.kv, f.kv_high, "every layer at full length");
  row(llama ? "compute buffer" : "activation peak", f.activation, f.activation_high,
      llama ? "KQ scores without flash attention" : "1024 sampler rows");
  row(llama ? "CUDA context" : "non-torch memory", f.non_torch, f.non_torch_high, "largest logged");
  if (!llama) row("CUDA graphs", f.graphs, f.graphs_high, "largest logged");
  out << fmt::format("  footprint            {:9.2f} GiB  range {:.2f} - {:.2f} GiB\n", G(f.total()), G(f.total()),
                     G(f.total_high()));
  if (p.trainer)
    out << fmt::format("Together: trainer {:.2f} + server {:.2f} = {:.2f} GiB (high ends) of {:.2f} GiB ({})\n",
                       G(p.trainer->high.peak()), G(f.total_high()), G(p.trainer->high.peak() + f.total_high()),
                       G(p.budget.bytes), p.budget.source);
  else out << fmt::format("Budget: {:.2f} GiB ({})\n", G(p.budget.bytes), p.budget.source);
  out << "Flag: " << FlagLine(p.flag, f.options.engine) << "\n";
  if (f.options.engine == Engine::kVllm && p.flag.fits() && p.flag.basis_bytes)
    out << fmt::format(
        "  vLLM takes the whole fraction ({:.2f} GiB) at start-up; what its profile leaves is KV cache\n",
        G(*p.flag.needed * *p.flag.basis_bytes));
  if (f.options.engine == Engine::kSglang && p.trainer)
    out << "  (SGLang started before the trainer: its fraction is of what is free when it starts)\n";
  out << "Verdict: " << ToString(p.verdict) << (p.trainer ? " (trainer and server together)" : "") << "\n";
}

}  // namespace sparkops
