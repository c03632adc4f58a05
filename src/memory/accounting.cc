#include "memory/accounting.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/strings.h"

namespace sparkops::memory {
namespace {

template <typename E>
Result<E> Lookup(std::string_view s, const std::map<std::string, E>& m, const char* flag) {
  auto it = m.find(std::string(s));
  if (it != m.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [k, v] : m) names.push_back(k);
  return InputError(fmt::format("{} '{}': expected one of {}", flag, s, fmt::join(names, "|")));
}
template <typename E>
std::string Name(E e, const std::map<std::string, E>& m) {
  for (const auto& [k, v] : m)
    if (v == e) return k;
  return "?";
}

const std::map<std::string, Method> kMethods = {{"full", Method::kFull}, {"lora", Method::kLora}, {"qlora", Method::kQlora}};
const std::map<std::string, Optimizer> kOptimizers = {{"adamw", Optimizer::kAdamW},
                                                      {"adamw8bit", Optimizer::kAdamW8bit},
                                                      {"paged_adamw8bit", Optimizer::kPagedAdamW8bit},
                                                      {"sgd", Optimizer::kSgd},
                                                      {"adafactor", Optimizer::kAdafactor}};
const std::map<std::string, Precision> kPrecisions = {{"bf16", Precision::kBf16}, {"mixed", Precision::kMixed}, {"fp32", Precision::kFp32}};
const std::map<std::string, Attention> kAttention = {{"sdpa", Attention::kSdpa}, {"flash", Attention::kFlash}, {"eager", Attention::kEager}};
const std::map<std::string, Loss> kLosses = {{"standard", Loss::kStandard}, {"chunked", Loss::kChunked}};

/// Is this block linear adapted by LoRA? Fused projections are adapted when any part is.
bool Adapted(const LinearShape& l, const std::set<std::string>& t) {
  if (l.name == "qkv") return t.count("q") || t.count("k") || t.count("v");
  if (l.name == "gate_up") return t.count("gate") || t.count("up");
  return t.count(l.name) > 0;
}

}  // namespace

std::string ToString(Method m) { return Name(m, kMethods); }
std::string ToString(Optimizer o) { return Name(o, kOptimizers); }
std::string ToString(Precision p) { return Name(p, kPrecisions); }
std::string ToString(Attention a) { return Name(a, kAttention); }
std::string ToString(Loss l) { return Name(l, kLosses); }
Result<Method> ParseMethod(std::string_view s) { return Lookup(s, kMethods, "--method"); }
Result<Optimizer> ParseOptimizer(std::string_view s) { return Lookup(s, kOptimizers, "--optimizer"); }
Result<Precision> ParsePrecision(std::string_view s) { return Lookup(s, kPrecisions, "--precision"); }
Result<Attention> ParseAttention(std::string_view s) { return Lookup(s, kAttention, "--attention"); }
Result<Loss> ParseLoss(std::string_view s) { return Lookup(s, kLosses, "--loss"); }

Result<std::set<std::string>> ParseTargets(std::string_view s) {
  static const std::set<std::string> kOne = {"q", "k", "v", "o", "gate", "up", "down", "head"};
  std::set<std::string> out;
  for (auto part : Split(s, ',')) {
    std::string p = ToLower(Trim(part));
    if (p == "attn") out.insert({"q", "k", "v", "o"});
    else if (p == "all") out.insert({"q", "k", "v", "o", "gate", "up", "down"});
    else if (kOne.count(p)) out.insert(p);
    else return InputError(fmt::format("--lora-targets: unknown target '{}' (use q,k,v,o,gate,up,down,head, attn or all)", p));
  }
  if (out.empty()) return InputError("--lora-targets: empty list");
  return out;
}

double Breakdown::allocated_peak() const {
  return weights + adapter + gradients + (optimizer_paged ? 0 : optimizer) + master_weights + activations + logits +
         dequant;
}
double Breakdown::steady_peak() const { return allocated_peak() + (optimizer_paged ? optimizer : 0) + overhead; }
double Breakdown::load_peak() const {
  // Weights already placed + the shard being mapped; for QLoRA the mapped shard is also copied
  // to the device in 16-bit before bitsandbytes quantises it.
  return overhead + weights + mmap_window + (dequant > 0 ? mmap_window : 0);
}
double Breakdown::peak() const { return std::max(steady_peak(), load_peak()); }

Result<Breakdown> Estimate(const LoadedModel& model, const PlanOptions& o) {
  if (o.seq == 0) return InputError("--seq: must be at least 1");
  if (o.batch == 0) return InputError("--batch: must be at least 1");
  if (o.method != Method::kFull && o.rank == 0) return InputError("--lora-rank: must be at least 1");
  if (o.lora_dropout < 0 || o.lora_dropout >= 1) return InputError("--lora-dropout: must be in [0, 1)");
  if (o.seq > (1u << 24) || o.batch > (1u << 20)) return InputError("--seq/--batch: implausibly large");
  const ModelSpec& m = model.spec;
  const ParamCounts pc = CountParams(m);
  Breakdown b;
  b.params = model.params;
  // With exact header counts, scale the config's block linears to the measured total.
  double block_linear = static_cast<double>(pc.block_linear);
  double non_linear = static_cast<double>(pc.total() - pc.block_linear);
  if (model.safetensors && model.params > 0)
    block_linear = std::max(0.0, static_cast<double>(model.params) - non_linear);
  const double P = block_linear + non_linear;

  const bool full = o.method == Method::kFull;
  const double wbytes = o.precision == Precision::kFp32 ? 4 : 2;    // base weights dtype
  const double abytes = o.precision == Precision::kBf16 ? 2 : 4;    // adapter dtype (PEFT upcasts in mixed)

  // Weights.
  if (o.method == Method::kQlora)
    b.weights = block_linear * kNf4BytesPerParam + non_linear * wbytes;
  else
    b.weights = P * wbytes;

  // LoRA adapter: r * (d_in + d_out) per targeted matrix.
  double adapter_params = 0;
  const auto linears = m.BlockLinears();
  if (!full) {
    for (const auto& l : linears)
      if (Adapted(l, o.targets)) adapter_params += double(o.rank) * double(l.d_in + l.d_out) * l.count * m.layers;
    if (o.targets.count("head")) adapter_params += double(o.rank) * double(m.hidden + m.vocab);
    b.adapter = adapter_params * abytes;
  }
  const double trainable = full ? P : adapter_params;
  b.trainable = static_cast<uint64_t>(trainable);

  // Gradients (same dtype as the trainable tensors; bf16 grads under mixed full fine-tune).
  const double gbytes = full ? wbytes : abytes;
  b.gradients = trainable * gbytes;

  // Optimizer states.
  const double sbytes = o.precision == Precision::kBf16 ? 2 : 4;  // state dtype follows params in pure bf16
  switch (o.optimizer) {
    case Optimizer::kAdamW: b.optimizer = trainable * 2 * sbytes; break;
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit: b.optimizer = trainable * (2 + 2 * 4.0 / 256); break;
    case Optimizer::kSgd: b.optimizer = 0; break;  // torch SGD default momentum=0 keeps no state
    case Optimizer::kAdafactor: {
      // Factored second moment: one row + one column vector (fp32) per matrix.
      double rc = 0;
      if (full) {
        for (const auto& l : linears) rc += double(l.d_in + l.d_out) * l.count * m.layers;
        rc += double(m.vocab + m.hidden) * (m.tied ? 1 : 2) + non_linear;
      } else {
        for (const auto& l : linears)
          if (Adapted(l, o.targets)) rc += double(o.rank * 2 + l.d_in + l.d_out) * l.count * m.layers;
      }
      b.optimizer = rc * 4;
      break;
    }
  }
  b.optimizer_paged = o.optimizer == Optimizer::kPagedAdamW8bit;
  if (full && o.precision == Precision::kMixed) b.master_weights = P * 4;

  // Activations per layer, bytes per token (16-bit activations; fp32 doubles them).
  const double h = m.hidden, hq = double(m.heads * m.head_dim), hkv = double(m.kv_heads * m.head_dim);
  const double s = o.seq, tokens = double(o.seq) * o.batch, act_scale = o.precision == Precision::kFp32 ? 2 : 1;
  auto keeps_input = [&](const std::string& name) {
    if (full) return true;
    for (const auto& l : linears)
      if (l.name == name || (name == "q" && l.name == "qkv") || (name == "gate" && l.name == "gate_up"))
        return Adapted(l, o.targets);
    return false;
  };
  double per_token = 0;
  per_token += m.norms_per_layer() * 4 * h;              // fp32 copy inside each RMSNorm/LayerNorm
  if (full) per_token += m.norms_per_layer() * 2 * h;    // normalised input of the norm weight
  if (keeps_input("q") || keeps_input("k") || keeps_input("v")) per_token += 2 * h;  // q/k/v input
  per_token += 2 * (hq + 2 * hkv);                       // q, k, v kept for attention backward
  per_token += 2 * hq;                                   // attention output (= o input)
  if (o.attention == Attention::kEager)
    per_token += double(m.heads) * s * (4 + 2);          // fp32 softmax + its bf16 copy: a*s per token
  else
    per_token += 4.0 * m.heads;                          // flash/SDPA log-sum-exp, fp32
  const double i = m.is_moe() ? m.expert_intermediate : m.intermediate;
  const double k = m.is_moe() ? m.experts_per_token : 1;
  if (keeps_input("gate") || keeps_input("up")) per_token += 2 * h;  // MLP input
  if (m.is_moe()) per_token += k * 2 * h + 4.0 * m.experts;       // dispatched copies + router logits
  per_token += k * (m.gated_mlp() ? 6 : 2) * i;          // gate, up, act (gated) / fc1 out (plain)
  if (keeps_input("down")) per_token += k * 2 * i;       // down-projection input
  if (!full && o.lora_dropout > 0)                       // dropped bf16 copy (2) + bool mask (1) per adapted linear
    for (const auto& l : linears)
      if (Adapted(l, o.targets)) per_token += 3.0 * double(l.d_in) * (l.count > 1 ? k : 1);
  const double layer_bytes = per_token * tokens * act_scale;
  const double L = m.layers;
  if (o.grad_ckpt)
    b.activations = L * 2 * h * tokens * act_scale + layer_bytes;  // layer inputs + one layer recomputed
  else
    b.activations = L * layer_bytes;
  b.activations += (4 + 2) * h * tokens * act_scale;     // final norm (fp32) + head input

  // Logits and loss.
  const double logit_elems = tokens * double(m.vocab);
  b.logits = logit_elems * (o.loss == Loss::kStandard ? (2 + 4 + 4) : (2 + 8.0 / 8));

  // QLoRA dequantisation: one linear's bf16 weight at a time.
  if (o.method == Method::kQlora) {
    double largest = 0;
    for (const auto& l : linears) largest = std::max(largest, double(l.d_in) * double(l.d_out));
    b.dequant = largest * 2;
  }

  b.overhead = kCudaContextBytes;

  // Load: checkpoint bytes on disk and the window mapped at once.
  if (model.safetensors) {
    b.checkpoint_bytes = double(model.safetensors->file_bytes);
    b.mmap_window = double(model.safetensors->largest_file_bytes);
  } else {
    b.checkpoint_bytes = P * 2;
    b.mmap_window = std::min(b.checkpoint_bytes, kDefaultShardBytes);
  }
  return b;
}

}  // namespace sparkops::memory
