#include "memory/serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/strings.h"
#include "host/meminfo.h"

namespace sparkops::memory {

namespace {

struct FormatRow {
  const char* name;
  double bits;
  bool gguf;
};
/// Bits per weight, scales included. Safetensors: fp8 per-tensor scales; int4 AWQ/GPTQ group 128
/// (fp16 scale + 4-bit zero per group); nvfp4 an fp8 scale per 16. GGUF: llama.cpp's quantize
/// README table (tools/quantize/README.md, Llama-3.1-8B, whole file incl. the q6_k output tensor:
/// q4_k_m 4.8944, q5_k_m 5.7036, q6_k 6.5633, q8_0 8.5008, f16 16.0005). q4_0 is not in that table:
/// its blocks are 18 B per 32 weights (4.5), but llama-quant.cpp makes output.weight q6_k (210 B per
/// 256) for every non-IQ type, so the same file averages 4.635 (Llama-3.1-8B: 525M of 8.03B in the
/// head); 4.64 here.
constexpr FormatRow kFormats[] = {
    {"bf16", 16, false},   {"fp16", 16, false},    {"fp8", 8, false},      {"int8", 8, false},
    {"int4", 4.16, false}, {"nvfp4", 4.5, false},  {"f16", 16, true},      {"q8_0", 8.5, true},
    {"q6_k", 6.56, true},  {"q5_k_m", 5.70, true}, {"q4_k_m", 4.89, true}, {"q4_0", 4.64, true},
};

Result<uint64_t> Mul(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return InputError(fmt::format("{}: the product overflows", what));
  return r;
}

double Ceil2(double x) { return std::ceil(x * 100 - 1e-9) / 100; }
double Floor2(double x) { return std::floor(x * 100 + 1e-9) / 100; }

/// Activation bytes per token of a forward pass at 16 bits: gate|up (or fc1) output, the
/// activation, q|k|v output and ~4 hidden-size buffers (residual, norm, attention out, MLP out).
double ActivationPerToken(const ModelSpec& s) {
  const double inter = double(s.is_moe() ? s.experts_per_token * s.expert_intermediate : s.intermediate);
  const double mlp = (s.gated_mlp() ? 3 : 2) * inter;
  const double qkv = double((s.heads + 2 * s.kv_heads) * s.head_dim);
  return 2 * (mlp + qkv + 4 * double(s.hidden));
}

}  // namespace

Result<Engine> ParseEngine(std::string_view s, std::string_view flag) {
  const std::string v = ToLower(std::string(s));
  if (v == "vllm") return Engine::kVllm;
  if (v == "sglang") return Engine::kSglang;
  if (v == "llamacpp" || v == "llama.cpp" || v == "llama-server") return Engine::kLlamacpp;
  return InputError(fmt::format("{} '{}': expected vllm|sglang|llamacpp", flag, s));
}

std::string ToString(Engine e) {
  switch (e) {
    case Engine::kVllm: return "vllm";
    case Engine::kSglang: return "sglang";
    case Engine::kLlamacpp: return "llamacpp";
  }
  return "?";
}

Result<KvDtype> ParseKvDtype(std::string_view s, std::string_view flag) {
  const std::string v = ToLower(std::string(s));
  if (v == "auto") return KvDtype::kAuto;
  if (v == "fp8" || v == "fp8_e4m3" || v == "fp8_e5m2" || v == "q8_0") return KvDtype::kFp8;
  if (v == "bf16") return KvDtype::kBf16;
  if (v == "fp16" || v == "f16") return KvDtype::kFp16;
  return InputError(fmt::format("{} '{}': expected auto|fp8|bf16|fp16", flag, s));
}

std::string ToString(KvDtype d) {
  switch (d) {
    case KvDtype::kAuto: return "auto";
    case KvDtype::kFp8: return "fp8";
    case KvDtype::kBf16: return "bf16";
    case KvDtype::kFp16: return "fp16";
  }
  return "?";
}

uint64_t KvDtypeBytes(KvDtype d) { return d == KvDtype::kFp8 ? 1 : 2; }

Result<WeightsFormat> ParseWeightsDtype(std::string_view s, Engine e, std::string_view flag) {
  const bool llama = e == Engine::kLlamacpp;
  const std::string v = s.empty() ? (llama ? "q4_k_m" : "bf16") : ToLower(std::string(s));
  for (const auto& r : kFormats) {
    if (v != r.name) continue;
    if (r.gguf != llama)
      return InputError(fmt::format("{} '{}': {} on {} (expected {})", flag, s, r.gguf ? "a GGUF format" : "not GGUF",
                                    ToString(e),
                                    llama ? "f16|q8_0|q6_k|q5_k_m|q4_k_m|q4_0" : "bf16|fp16|fp8|int8|int4|nvfp4"));
    return WeightsFormat{r.name, r.bits, r.gguf};
  }
  return InputError(fmt::format("{} '{}': expected {}", flag, s,
                                llama ? "f16|q8_0|q6_k|q5_k_m|q4_k_m|q4_0" : "bf16|fp16|fp8|int8|int4|nvfp4"));
}

Result<uint64_t> KvBytesPerToken(const ModelSpec& s, uint64_t elem_bytes) {
  return KvBytes(s, 1, 1, elem_bytes, false);
}

Result<uint64_t> KvBytes(const ModelSpec& s, uint64_t len, uint64_t seqs, uint64_t elem_bytes, bool windowed) {
  const bool mla = s.kv_lora_rank > 0;
  auto pair = Mul(s.kv_heads, s.head_dim, "KV bytes per layer");
  if (!pair) return pair;
  auto per_layer = mla ? Mul(s.kv_lora_rank + s.qk_rope_head_dim, elem_bytes, "KV bytes per layer")
                       : Mul(*pair, 2 * elem_bytes, "KV bytes per layer");
  if (!per_layer) return per_layer;
  const uint64_t sliding = windowed ? std::min(s.sliding_layers(), s.layers) : 0;
  auto full = Mul(s.layers - sliding, len, "KV tokens");
  if (!full) return full;
  auto win = Mul(sliding, std::min(len, s.sliding_window.value_or(len)), "KV tokens");
  if (!win) return win;
  if (*full > UINT64_MAX - *win) return InputError("KV tokens: the sum overflows");
  auto tokens = Mul(*full + *win, seqs, "KV tokens x --max-num-seqs");
  if (!tokens) return tokens;
  return Mul(*tokens, *per_layer, "KV bytes");
}

double ServeFootprint::flagged_high() const {
  return options.engine == Engine::kSglang ? weights + kv_high : total_high();
}

Result<ServeFootprint> SizeServer(const LoadedModel& m, const ServeOptions& o) {
  const ModelSpec& s = m.spec;
  ServeFootprint f;
  f.model = s.name;
  f.options = o;
  f.params = m.params;
  const bool llama = o.engine == Engine::kLlamacpp;
  if (!f.options.max_model_len) {
    if (llama) f.options.max_model_len = kLlamacppDefaultCtx;
    else if (s.max_positions) f.options.max_model_len = *s.max_positions;
    else return InputError("--max-model-len: the model's config gives no max_position_embeddings; give one");
  }
  const uint64_t len = *f.options.max_model_len;
  if (s.max_positions && len > *s.max_positions)
    return InputError(
        fmt::format("--max-model-len {}: above the model's max_position_embeddings {}", len, *s.max_positions));
  auto wf = ParseWeightsDtype(o.weights_dtype, o.engine);
  if (!wf) return std::unexpected(wf.error());
  f.weights_format = *wf;
  f.kv_elem_bytes = KvDtypeBytes(o.kv_dtype);
  auto per_token = KvBytesPerToken(s, f.kv_elem_bytes);
  if (!per_token) return std::unexpected(per_token.error());
  f.kv_per_token = *per_token;
  auto kv = KvBytes(s, len, o.max_num_seqs, f.kv_elem_bytes, true);
  if (!kv) return std::unexpected(kv.error());
  auto kv_high = KvBytes(s, len, o.max_num_seqs, f.kv_elem_bytes, false);
  if (!kv_high) return std::unexpected(kv_high.error());
  f.kv = double(*kv);
  f.kv_high = double(*kv_high);
  // Weights: GGUF quantises every tensor; safetensors quantisation leaves embeddings, head and
  // norms at 16 bits.
  const ParamCounts pc = CountParams(s);
  const double params = double(m.params ? m.params : pc.total());
  if (wf->bits >= 16 || wf->gguf) {
    f.weights = params * wf->bits / 8;
  } else {
    const double kept = double(pc.embedding + pc.head + pc.other);
    f.weights = kept * 2 + std::max(0.0, params - kept) * wf->bits / 8;
  }
  if (llama) {
    // Compute buffer: fp32 logits and a few hidden-size rows per ubatch token; high adds the
    // KQ matrix without flash attention (ubatch x context x heads, fp32).
    const double ub = double(kLlamacppUbatch);
    f.activation = ub * 4 * (double(s.vocab) + 4 * double(s.hidden));
    f.activation_high = f.activation + ub * double(len) * double(s.heads) * 4;
    f.non_torch = 0.3 * kGiB;
    f.non_torch_high = 0.5 * kGiB;
    return f;
  }
  // vLLM profile_run / SGLang's chunked prefill: one forward pass of the batched tokens plus the
  // dummy sampler's fp32 logits and probabilities.
  const double fwd = double(kVllmProfileTokens) * ActivationPerToken(s);
  f.activation = fwd + double(kVllmSamplerRows) * double(s.vocab) * 8;
  f.activation_high = fwd + double(kVllmSamplerRowsHigh) * double(s.vocab) * 8;
  f.non_torch = 0.5 * kGiB;
  f.non_torch_high = 2.0 * kGiB;
  f.graphs = 0.5 * kGiB;
  f.graphs_high = 1.0 * kGiB;
  return f;
}

ServeFlag FlagFor(const ServeFootprint& f, const ModelSpec& spec, double room, std::optional<double> mem_total,
                  std::optional<double> free_at_start) {
  ServeFlag out;
  switch (f.options.engine) {
    case Engine::kVllm:
      out.flag = "--gpu-memory-utilization";
      out.basis = "MemTotal";
      out.basis_bytes = mem_total;
      if (mem_total && *mem_total > 0) {
        out.needed = Ceil2(f.flagged_high() / *mem_total);
        out.most = std::min(1.0, Floor2(std::max(0.0, room) / *mem_total));
      }
      break;
    case Engine::kSglang:
      out.flag = "--mem-fraction-static";
      out.basis = "memory free when it starts (MemAvailable)";
      out.basis_bytes = free_at_start;
      if (free_at_start && *free_at_start > 0) {
        const double outside = f.total_high() - f.flagged_high();
        out.needed = Ceil2(f.flagged_high() / *free_at_start);
        out.most = std::min(1.0, Floor2(std::max(0.0, room - outside) / *free_at_start));
      }
      break;
    case Engine::kLlamacpp: {
      out.flag = "-c";
      out.basis = "tokens of context (all slots)";
      const uint64_t len = f.options.max_model_len.value_or(kLlamacppDefaultCtx);
      out.needed = double(len) * double(f.options.max_num_seqs);
      const double ub = double(kLlamacppUbatch);
      const double fixed = f.weights + f.non_torch_high + f.activation;
      const double per_token = double(f.kv_per_token) + ub * double(spec.heads) * 4;
      double n = room > fixed ? (room - fixed) / per_token : 0;
      n = std::floor(n / 256) * 256;
      if (spec.max_positions) n = std::min(n, double(*spec.max_positions) * double(f.options.max_num_seqs));
      out.most = n;
      break;
    }
  }
  return out;
}

Result<ServePlan> MakeServePlan(const LoadedModel& m, const ServeOptions& o, const Budget& budget,
                                std::optional<uint64_t> mem_total, std::optional<Plan> trainer) {
  auto fp = SizeServer(m, o);
  if (!fp) return std::unexpected(fp.error());
  ServePlan p;
  p.server = std::move(*fp);
  p.budget = budget;
  p.mem_total = mem_total;
  const double trainer_high = trainer ? trainer->high.peak() : 0;
  p.trainer = std::move(trainer);
  p.room = budget.bytes - trainer_high;
  std::optional<double> total = mem_total ? std::optional<double>(double(*mem_total)) : std::nullopt;
  std::optional<double> free = budget.mem_available;
  // --budget-gib (a discrete GPU): MemTotal/MemAvailable are host RAM, not the device; the
  // fractions are then of the budget given.
  if (budget.source == "--budget-gib") total = free = budget.bytes;
  p.flag = FlagFor(p.server, m.spec, p.room, total, free);
  if (budget.source == "--budget-gib" && o.engine != Engine::kLlamacpp) p.flag.basis = "--budget-gib";
  p.verdict = Judge(trainer_high + p.server.total_high(), budget.bytes);
  return p;
}

}  // namespace sparkops::memory
