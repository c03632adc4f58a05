#include "memory/activations.h"

#include "memory/mechanisms.h"

namespace sparkops::memory {
namespace {

/// The four inputs a decoder block's linears read; linears sharing one input share its tensor.
enum class Input { kQkv, kO, kMlp, kDown };

Input InputOf(const LinearShape& l) {
  if (l.name == "q" || l.name == "k" || l.name == "v" || l.name == "qkv") return Input::kQkv;
  if (l.name == "o") return Input::kO;
  if (l.name == "down") return Input::kDown;
  return Input::kMlp;  // gate, up, gate_up, plain fc1 ("up")
}

/// Sum of d_in over the LoRA modules LitGPT builds for the adapted targets (litgpt/lora.py): one
/// LoRAQKVLinear for q, k and v together (one dropout), separate fc_1 / fc_2 even where the
/// checkpoint fuses gate_up, proj for o and down. MoE experts count `k` times per token.
double LitgptLoraInputs(const ModelSpec& m, const std::set<std::string>& t, double k) {
  double sum = 0;
  if (t.count("q") || t.count("k") || t.count("v")) sum += double(m.hidden);
  for (const auto& l : m.BlockLinears()) {
    const double per = l.count > 1 ? k : 1;
    if (l.name == "o" && t.count("o")) sum += double(l.d_in);
    if (l.name == "gate_up") sum += per * double(l.d_in) * double(t.count("gate") + t.count("up"));
    if ((l.name == "gate" || l.name == "up" || l.name == "down") && t.count(l.name)) sum += per * double(l.d_in);
  }
  return sum;
}

}  // namespace

bool Adapted(const LinearShape& l, const std::set<std::string>& t) {
  if (l.name == "qkv") return t.count("q") || t.count("k") || t.count("v");
  if (l.name == "gate_up") return t.count("gate") || t.count("up");
  return t.count(l.name) > 0;
}

Activations EstimateActivations(const ModelSpec& m, const PlanOptions& o, bool bnb_keeps, bool recompute) {
  const bool full = o.method == Method::kFull;
  const bool qlora = o.method == Method::kQlora;
  const auto linears = m.BlockLinears();
  const double h = m.hidden, hq = double(m.heads * m.head_dim), hkv = double(m.kv_heads * m.head_dim);
  const double s = o.seq, tokens = double(o.seq) * o.batch, act_scale = o.precision == Precision::kFp32 ? 2 : 1;
  const double i = m.is_moe() ? m.expert_intermediate : m.intermediate;
  const double k = m.is_moe() ? m.experts_per_token : 1;
  const bool litgpt = o.framework == Framework::kLitgpt;

  // The LoRA branch's own saved input, bytes per input element: PEFT casts x to the adapter dtype
  // (a fresh fp32 copy, 4) that lora_A keeps; a dropout keeps its output and a 1-byte mask instead.
  // In the model's dtype with no dropout, lora_A keeps x itself (the input shared by its group).
  const bool cast = o.adapter_dtype == AdapterDtype::kFp32 && o.precision != Precision::kFp32;
  const bool dropout = o.lora_dropout > 0;
  const double lora_own = cast ? (dropout ? 5 : 4) : (dropout ? 3 : 0);
  const bool lora_keeps_x = !cast && !dropout;

  auto adapted_in = [&](Input in) {
    if (full) return false;
    for (const auto& l : linears)
      if (InputOf(l) == in && Adapted(l, o.targets)) return true;
    return false;
  };
  // Bytes per token of each input, and who keeps it.
  auto input_bytes = [&](Input in) {
    switch (in) {
      case Input::kQkv: return 2 * h;
      case Input::kO: return 2 * hq;  // the contiguous copy of the attention output o_proj reads
      case Input::kMlp: return 2 * h;
      case Input::kDown: return k * 2 * i;
    }
    return 0.0;
  };
  double per_token = 0, bnb_per_token = 0, bnb_ctx_per_token = 0;
  for (Input in : {Input::kQkv, Input::kO, Input::kMlp, Input::kDown}) {
    // autoawq's WQLinearMMFunction keeps every 4-bit linear's input: save_for_backward(x, ...).
    const bool by_autograd = full || (lora_keeps_x && adapted_in(in)) || o.quant == BaseQuant::kAwq4;
    // LitGPT's proj reads the SDPA output itself (flash / memory-efficient SDPA return the
    // (B, T, H, D) layout, so `y.transpose(1, 2).reshape(...)` is a view): counted below, not again.
    const double extra = litgpt && in == Input::kO ? 0 : input_bytes(in);
    if (by_autograd) per_token += extra;
    else if (qlora && bnb_keeps) bnb_per_token += extra, bnb_ctx_per_token += input_bytes(in);
  }
  // DoRA keeps each adapted linear's base output and LoRA output for the magnitude's gradient.
  if (!full && o.dora) {
    const double abytes = o.precision == Precision::kFp32 || o.adapter_dtype == AdapterDtype::kFp32 ? 4 : 2;
    for (const auto& l : linears)
      if (Adapted(l, o.targets)) per_token += DoraSavedBytesPerToken(double(l.d_out) * (l.count > 1 ? k : 1), abytes);
  }
  if (!full && litgpt) per_token += lora_own * LitgptLoraInputs(m, o.targets, k);
  if (!full && !litgpt)
    for (const auto& l : linears)
      if (Adapted(l, o.targets)) per_token += lora_own * double(l.d_in) * (l.count > 1 ? k : 1);

  if (!recompute) per_token += m.norms_per_layer() * 4 * h;  // fp32 copy inside each RMSNorm/LayerNorm
  if (full) per_token += m.norms_per_layer() * 2 * h;        // normalised input of the norm weight
  if (!litgpt) {
    per_token += 2 * (hq + 2 * hkv);  // q, k, v kept for attention backward
  } else {
    // litgpt/model.py CausalSelfAttention: k and v are expanded to all heads before SDPA
    // ("training: flash attention requires it"), so the roped q, k and (GQA) the reshaped v are
    // full-head copies; without GQA v stays a view of the fused qkv output, which it keeps whole.
    per_token += 2 * hq + 2 * hq + (m.kv_heads < m.heads ? 2 * hq : 2 * (hq + 2 * hkv));
  }
  per_token += 2 * hq;                                       // attention output (SDPA keeps it)
  if (o.attention == Attention::kEager)
    per_token += double(m.heads) * s * (4 + 2);  // fp32 softmax + its bf16 copy: a*s per token
  else per_token += 4.0 * m.heads;  // flash/SDPA log-sum-exp, fp32
  if (m.is_moe()) per_token += k * 2 * h + 4.0 * m.experts;  // dispatched copies + router logits
  // gate, up, act(gate) (gated; act recomputed under compile's low end) / fc1 output (plain).
  per_token += k * (m.gated_mlp() ? (recompute ? 4 : 6) : 2) * i;

  const double L = m.layers;
  const double layer = (per_token + bnb_per_token) * tokens * act_scale;
  Activations a;
  // Checkpointing keeps each layer's input and one layer recomputed during its backward.
  a.total = o.grad_ckpt ? L * 2 * h * tokens * act_scale + layer : L * layer;
  a.bnb_inputs = bnb_per_token * tokens * act_scale * (o.grad_ckpt ? 1 : L);
  a.bnb_ctx = bnb_ctx_per_token * tokens * act_scale * (o.grad_ckpt ? 1 : L);
  // Final norm (fp32 copy) + the head's input; a LoRA head adds its own copy.
  a.total += (4 + 2) * h * tokens * act_scale;
  if (!full && o.targets.count("head")) a.total += lora_own * h * tokens * act_scale;
  return a;
}

}  // namespace sparkops::memory
