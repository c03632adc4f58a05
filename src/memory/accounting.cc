#include "memory/accounting.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/strings.h"
#include "host/distinfo.h"
#include "memory/activations.h"
#include "memory/mechanisms.h"

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

const std::map<std::string, Method> kMethods = {{"full", Method::kFull},
                                                {"lora", Method::kLora},
                                                {"qlora", Method::kQlora}};
const std::map<std::string, Optimizer> kOptimizers = {{"adamw", Optimizer::kAdamW},
                                                      {"adamw_fused", Optimizer::kAdamWFused},
                                                      {"adamw8bit", Optimizer::kAdamW8bit},
                                                      {"paged_adamw8bit", Optimizer::kPagedAdamW8bit},
                                                      {"sgd", Optimizer::kSgd},
                                                      {"adafactor", Optimizer::kAdafactor}};
const std::map<std::string, Precision> kPrecisions = {{"bf16", Precision::kBf16},
                                                      {"mixed", Precision::kMixed},
                                                      {"fp32", Precision::kFp32}};
const std::map<std::string, Attention> kAttention = {{"sdpa", Attention::kSdpa},
                                                     {"flash", Attention::kFlash},
                                                     {"eager", Attention::kEager}};
const std::map<std::string, Loss> kLosses = {{"standard", Loss::kStandard}, {"chunked", Loss::kChunked}};
const std::map<std::string, AdapterDtype> kAdapterDtypes = {{"fp32", AdapterDtype::kFp32},
                                                            {"bf16", AdapterDtype::kBf16}};
const std::map<std::string, Framework> kFrameworks = {{"transformers", Framework::kTransformers},
                                                      {"litgpt", Framework::kLitgpt},
                                                      {"torchtune", Framework::kTorchtune}};
const std::map<std::string, BaseQuant> kQuants = {{"none", BaseQuant::kNone},
                                                  {"gptq4", BaseQuant::kGptq4},
                                                  {"awq4", BaseQuant::kAwq4}};

/// LitGPT's logits + loss term (bytes), N = b*s*V logits. finetune/lora.py and adapter.py call
/// `model(x, lm_head_chunk_size=128)` and `chunked_cross_entropy` on the chunks; Fabric's
/// precision plugins cast the outputs to the default dtype (fp32: `convert_output`). Its moments:
/// end of forward, last step's fp32 logits (the loop's `logits`) + the bf16 chunks + their fp32
/// copies, 10 N; cross-entropy backward (all chunks' loss nodes run before the head's), fp32
/// logits + log-probs/grads 8 N + one chunk's two fp32 buffers; 4-bit head (QLoRA), its
/// dequantised weight `head_deq` beside last step's logits and the bf16 chunks made so far
/// (forward) or the fp32 logits and bf16 grads (backward). The backward moments come after the
/// new loss replaced last step's, so the previous step's `retained` is gone there. full.py
/// (unchunked head, the slice reshaped and chunked): 12 N, as the standard loss.
double LitgptLossBytes(const PlanOptions& o, double N, double head_deq, double retained) {
  if (o.method == Method::kFull) return N * kStandardLossBytesPerLogit;
  const double s = double(o.seq), c = std::min(kLitgptHeadChunk, s), chunk = N * c / s;
  return std::max(
      {10 * N, 4 * N + 2 * (N - chunk) + head_deq, 8 * N + 8 * chunk - retained, 6 * N + head_deq - retained});
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
std::string ToString(AdapterDtype d) { return Name(d, kAdapterDtypes); }
Result<AdapterDtype> ParseAdapterDtype(std::string_view s) { return Lookup(s, kAdapterDtypes, "--adapter-dtype"); }
std::string ToString(Framework f) { return Name(f, kFrameworks); }
Result<Framework> ParseFramework(std::string_view s) { return Lookup(s, kFrameworks, "--framework"); }
std::string ToString(BaseQuant q) { return Name(q, kQuants); }
Result<BaseQuant> ParseQuant(std::string_view s) { return Lookup(s, kQuants, "--quant"); }

BnbInputs BnbInputsFor(std::string_view version) {
  // The release part ("0.43.2" of "0.43.2rc1+cu121") must be dot-separated numbers.
  const std::string_view release = version.substr(0, version.find_first_not_of("0123456789."));
  if (release.empty() || release.front() == '.' || release.back() == '.' ||
      release.find("..") != std::string_view::npos)
    return BnbInputs::kUnknown;
  return CompareVersions(PublicVersion(version), "0.43.2") < 0 ? BnbInputs::kKept : BnbInputs::kFreed;
}

Result<std::set<std::string>> ParseTargets(std::string_view s) {
  static const std::set<std::string> kOne = {"q", "k", "v", "o", "gate", "up", "down", "head"};
  // PEFT target_modules names as the modeling code spells them (fused ones adapt the fused linear).
  static const std::map<std::string, std::set<std::string>> kModuleNames = {
      {"c_attn", {"q", "k", "v"}},
      {"w_pack", {"q", "k", "v"}},
      {"query_key_value", {"q", "k", "v"}},
      {"qkv", {"q", "k", "v"}},
      {"dense", {"o"}},
      {"c_proj", {"o", "down"}},
      {"output", {"o"}},  // torchtune's output_proj
      {"w1", {"gate"}},
      {"w2", {"down"}},
      {"w3", {"up"}},  // Mixtral experts
      {"fc1", {"up"}},
      {"fc_1", {"gate"}},
      {"fc_2", {"up"}},
      {"c_fc", {"up"}},
      {"fc2", {"down"}},
      {"dense_h_to_4h", {"gate", "up"}},
      {"dense_4h_to_h", {"down"}},
      {"gate_up", {"gate", "up"}},
      {"lm_head", {"head"}},
      {"all-linear", {"q", "k", "v", "o", "gate", "up", "down"}}};
  std::set<std::string> out;
  for (auto part : Split(s, ',')) {
    std::string p = ToLower(Trim(part));
    if (p.size() > 5 && p.ends_with("_proj")) p.resize(p.size() - 5);  // q_proj, gate_proj, ...
    if (p == "attn") out.insert({"q", "k", "v", "o"});
    else if (p == "all") out.insert({"q", "k", "v", "o", "gate", "up", "down"});
    else if (auto it = kModuleNames.find(p); it != kModuleNames.end()) out.insert(it->second.begin(), it->second.end());
    else if (kOne.count(p)) out.insert(p);
    else
      return InputError(fmt::format(
          "--lora-targets: unknown target '{}' (use q,k,v,o,gate,up,down,head, attn, all, or PEFT module names)", p));
  }
  if (out.empty()) return InputError("--lora-targets: empty list");
  return out;
}

Result<std::set<std::string>> ParseModulesToSave(std::string_view s) {
  std::set<std::string> out;
  if (Trim(s).empty()) return out;
  for (auto part : Split(s, ',')) {
    const std::string p = ToLower(Trim(part));
    if (p == "embed" || p == "embed_tokens" || p == "wte") out.insert("embed");
    else if (p == "head" || p == "lm_head") out.insert("head");
    else return InputError(fmt::format("--modules-to-save: unknown module '{}' (use embed,head)", p));
  }
  return out;
}

double Breakdown::states() const { return weights + adapter + (optimizer_paged ? 0 : optimizer) + master_weights; }
double Breakdown::backward_peak() const {
  return states() + activations + cast_copies + retained + logits + dequant + dora + saved_weights + first_gradients +
         accum_gradients;
}
double Breakdown::step_peak() const { return states() + gradients + optimizer_step; }
double Breakdown::allocated_peak() const { return std::max(backward_peak(), step_peak()) + residual_margin; }
double Breakdown::reserved_peak() const { return allocated_peak() + slack + load_cache; }
double Breakdown::process_peak() const { return reserved_peak() + (optimizer_paged ? optimizer : 0) + overhead; }
double Breakdown::load_peak() const {
  // torchtune: its checkpointer merges every shard into one state dict in host memory (the same
  // pool on a GB10) before the model loads it, and each NF4 weight is quantised on the device.
  if (host_state_dict > 0) return overhead + weights + host_state_dict + load_cache;
  // Weights already placed + the shard being mapped; for QLoRA the mapped shard is also copied
  // to the device in 16-bit before bitsandbytes quantises it.
  return overhead + weights + mmap_window + (load_copies_16bit ? mmap_window : 0);
}
double Breakdown::peak() const { return std::max(process_peak(), load_peak()); }

Result<Breakdown> Estimate(const LoadedModel& model, const PlanOptions& o, Side side) {
  if (o.seq == 0) return InputError("--seq: must be at least 1");
  if (o.batch == 0) return InputError("--batch: must be at least 1");
  if (o.method != Method::kFull && o.rank == 0) return InputError("--lora-rank: must be at least 1");
  if (!(o.lora_dropout >= 0 && o.lora_dropout < 1)) return InputError("--lora-dropout: must be in [0, 1)");
  if (o.seq > (1u << 24) || o.batch > (1u << 20)) return InputError("--seq/--batch: implausibly large");
  if (o.quant != BaseQuant::kNone && o.method != Method::kLora)
    return InputError("--quant: a GPTQ/AWQ base is trained with --method lora (adapters on the frozen 4-bit base)");
  if (o.dora && o.method == Method::kFull) return InputError("--dora: DoRA is a LoRA method (--method lora|qlora)");
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
  const bool qlora = o.method == Method::kQlora;
  const bool litgpt = o.framework == Framework::kLitgpt;
  const bool torchtune = o.framework == Framework::kTorchtune;
  const bool quant4 = o.quant != BaseQuant::kNone;
  const auto linears = m.BlockLinears();
  // Base weights' dtype. Mixed precision keeps a full fine-tune's 16-bit weights beside an fp32
  // master copy (below); LoRA under autocast (HF Trainer on an fp32 load, LitGPT bf16-mixed)
  // keeps the frozen weights themselves in fp32.
  const double wbytes = o.precision == Precision::kFp32 || (!full && o.precision == Precision::kMixed) ? 4 : 2;
  const double abytes = o.precision == Precision::kFp32 || o.adapter_dtype == AdapterDtype::kFp32 ? 4 : 2;

  // Weights. LitGPT's GPT has its own lm_head even for a tied checkpoint (its
  // convert_hf_checkpoint copies transformer.wte.weight into lm_head.weight), and under QLoRA
  // Fabric's BitsandbytesPrecision makes every nn.Linear built in init_module 4-bit, lm_head too.
  const double head = double(m.vocab) * double(m.hidden);
  const double head_copy = litgpt && m.tied ? head : 0;
  const bool head_4bit = litgpt && qlora;
  // Under transformers, PEFT's prepare_model_for_kbit_training casts what stays 16-bit to fp32.
  const double nf4 = Nf4BytesPerParam(o.double_quant);
  const double kept_bytes = qlora && !litgpt && !torchtune && o.kbit_prep ? 4 : wbytes;
  // torchtune quantises only the linears that carry an adapter (LoRALinear(quantize_base=True));
  // the others and its output projection stay in the model dtype. The largest adapted linear sets
  // the NF4 dequantisation and load transients.
  const double linear_scale = pc.block_linear > 0 ? block_linear / double(pc.block_linear) : 1;
  double adapted_linear = 0, largest_adapted = 0, quant_linear = 0;
  for (const auto& l : linears) {
    if (Adapted(l, o.targets)) {
      adapted_linear += double(l.params()) * double(m.layers) * linear_scale;
      largest_adapted = std::max(largest_adapted, double(l.d_in) * double(l.d_out));
    }
    quant_linear += Quant4Bytes(o.quant, double(l.d_in), double(l.d_out)) * double(l.count) * double(m.layers);
  }
  if (qlora && torchtune) b.weights = adapted_linear * TorchaoNf4BytesPerParam() + (P - adapted_linear) * wbytes;
  else if (quant4) b.weights = quant_linear + non_linear * wbytes;  // config shapes: packed checkpoints miscount
  else if (!qlora) b.weights = (P + head_copy) * wbytes;
  else if (!head_4bit) b.weights = block_linear * nf4 + non_linear * kept_bytes;
  else b.weights = (block_linear + head) * nf4 + (non_linear - double(pc.head)) * wbytes;

  // LoRA adapter: r * (d_in + d_out) per targeted matrix.
  double adapter_params = 0;
  if (!full) {
    // LitGPT splits what a checkpoint fuses: LoRAQKVLinear has r rows of A per enabled q/k/v and
    // B covers only the enabled outputs; gate_up becomes fc_1 + fc_2 (litgpt/lora.py).
    const double q_out = double(m.heads * m.head_dim), kv_out = double(m.kv_heads * m.head_dim);
    for (const auto& l : linears) {
      if (!Adapted(l, o.targets)) continue;
      double per = double(l.d_in + l.d_out);
      if (litgpt && l.name == "qkv") {
        per = 0;
        for (const auto& [t, out] : {std::pair{"q", q_out}, {"k", kv_out}, {"v", kv_out}})
          if (o.targets.count(t)) per += double(l.d_in) + out;
      } else if (litgpt && l.name == "gate_up") {
        per = double(o.targets.count("gate") + o.targets.count("up")) * (double(l.d_in) + double(l.d_out) / 2);
      }
      adapter_params += double(o.rank) * per * l.count * m.layers;
    }
    if (o.targets.count("head")) adapter_params += double(o.rank) * double(m.hidden + m.vocab);
    // DoRA: one trainable magnitude per output feature of each adapted linear (weight_norm, dim=1).
    if (o.dora) {
      for (const auto& l : linears)
        if (Adapted(l, o.targets)) adapter_params += double(l.d_out) * double(l.count) * double(m.layers);
      if (o.targets.count("head")) adapter_params += double(m.vocab);
    }
    b.adapter = adapter_params * abytes;
  }
  // PEFT modules_to_save: a trainable deep copy of each named module beside the frozen original,
  // in the module's dtype (ModulesToSaveWrapper), with its gradient and optimizer state.
  double saved_modules = 0;
  if (!full) {
    if (o.modules_to_save.count("embed")) saved_modules += double(m.vocab) * double(m.hidden);
    if (o.modules_to_save.count("head")) saved_modules += head;
  }
  const double saved_bytes = saved_modules * (qlora ? kept_bytes : wbytes);  // one copy, its grad, one state
  b.weights += saved_bytes;
  const double trainable = full ? P + head_copy : adapter_params + saved_modules;
  b.trainable = static_cast<uint64_t>(trainable);

  // Gradients (same dtype as the trainable tensors). Backward runs from the loss, so the head's
  // (or the tied embedding's) gradient exists while nearly all activations still do; the rest
  // appear as activations are freed. Adapter gradients are small: all counted in both phases.
  const double gbytes = full ? wbytes : abytes;
  b.gradients = full ? trainable * gbytes : adapter_params * gbytes + saved_bytes;
  b.first_gradients = full ? double(m.vocab) * double(m.hidden) * gbytes : b.gradients;
  // Accumulation: the loop zeroes gradients after the optimizer step only, so from the second
  // micro-batch on they all exist beside its activations (litgpt/finetune/full.py, transformers
  // Trainer's training_step loop, torchtune's recipes: zero_grad after step).
  b.accum_gradients = o.grad_accum > 1 ? std::max(0.0, b.gradients - b.first_gradients) : 0;

  // Optimizer states: AdamW's m and v take the trainable tensors' dtype (torch creates them with
  // zeros_like), so pure bf16 keeps bf16 states and fp32 adapters fp32 ones; mixed precision keeps
  // fp32 states beside the fp32 master copy.
  const double sbytes = full ? (o.precision == Precision::kBf16 ? 2 : 4) : abytes;
  // Bytes of one state-sized list (modules_to_save states take their module's dtype).
  const double state_list = full ? trainable * sbytes : adapter_params * sbytes + saved_bytes;
  switch (o.optimizer) {
    case Optimizer::kAdamW:
    case Optimizer::kAdamWFused:
      b.optimizer = 2 * state_list;
      // foreach AdamW (torch's default on CUDA) makes sqrt(v) for all parameters at once, and
      // older torch a second list for + eps (mechanisms.h); fused makes none.
      b.optimizer_step = AdamwStepLists(o.optimizer, side) * state_list;
      break;
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
  // Autocast casts each fp32 frozen weight to bf16 per call and the matmul saves that copy for
  // its backward (autocast's cache keeps only leaves that require grad): with checkpointing one
  // layer's linears at a time, without it every layer's. QLoRA's 4-bit linears dequantise instead.
  if (!full && !qlora && o.precision == Precision::kMixed) {
    double layer = 0;
    for (const auto& l : linears) layer += double(l.params());
    b.cast_copies = layer * 2 * (o.grad_ckpt ? 1.0 : double(m.layers));
  }

  // Activations, with the unknowns resolved to this side.
  b.bnb_keeps_inputs =
      qlora && !torchtune &&
      (o.bnb_inputs == BnbInputs::kKept || (o.bnb_inputs == BnbInputs::kUnknown && side == Side::kHigh));
  b.recomputed = o.compile && side != Side::kHigh;
  const Activations act = EstimateActivations(m, o, b.bnb_keeps_inputs, b.recomputed);
  b.activations = act.total;
  b.bnb_inputs = act.bnb_inputs;

  // Logits and loss.
  const double logit_elems = double(o.seq) * o.batch * double(m.vocab);
  // What the previous step leaves alive into this step's forward: bnb < 0.43.2 keeps inputs as
  // ctx attributes, released with the graph rather than after backward, and a loop that holds
  // last step's outputs (LitGPT's `logits`) holds that graph; the high side adds those bf16 logits.
  // LitGPT's loop holds last step's fp32 logits; they are counted in its loss term below.
  // torchtune's loop is known too: from 0.3 it deletes the logits before backward; before, last
  // step's shifted fp32 copy lives into the next forward, whose moment (4 + 2 + 4 + 4 B/logit)
  // stays under the backward one its loss term counts (16).
  b.retained = act.bnb_ctx + (side == Side::kHigh && !litgpt && !torchtune ? 2 * logit_elems : 0);
  const auto tt_release = TorchtuneReleaseOf(o.framework_version);
  b.loss_bytes_per_logit = o.loss != Loss::kStandard ? 2 + 8.0 / 8
                           : torchtune               ? TorchtuneLossBytesPerLogit(tt_release, side)
                                       : TransformersLossBytesPerLogit(TransformersLossEra(o.framework_version), side);
  b.logits = logit_elems * b.loss_bytes_per_logit;

  // QLoRA dequantisation: one linear's weight at a time, in the quantisation state's dtype, then
  // `.to(A.dtype)` (bitsandbytes MatMul4Bit). The state is fp16 when the weight was cast to fp16
  // before quantize_4bit: bitsandbytes before 0.43.0 (`Params4bit.cuda`: `.half()`; 0.43.0's
  // `_quantize` keeps the dtype) and Lightning Fabric whatever the version (`_Linear4bit.quantize`:
  // `.to(dtype=torch.half)`). A bf16 run then holds the fp16 weight and its bf16 copy at once.
  bool fp16_state = litgpt;
  if (qlora && !litgpt && !torchtune) {
    const bool known = BnbInputsFor(o.bnb_version) != BnbInputs::kUnknown;
    fp16_state = known ? CompareVersions(PublicVersion(o.bnb_version), "0.43.0") < 0 : side == Side::kHigh;
  }
  b.fp16_quant_state = qlora && fp16_state;
  const double cbytes = o.precision == Precision::kFp32 ? 4 : 2;  // compute dtype (autocast: bf16)
  const double deq_bytes = fp16_state ? 2 + cbytes : cbytes;
  double largest = 0, layer_linears = 0;
  for (const auto& l : linears) {
    largest = std::max(largest, double(l.d_in) * double(l.d_out));
    layer_linears += double(l.params());
  }
  if (litgpt) b.loss_bytes_per_logit = 0;
  if (litgpt) b.logits = LitgptLossBytes(o, logit_elems, head_4bit ? head * deq_bytes : 0, b.retained);
  if (qlora && torchtune) {
    // torchao's LinearNF4 dequantises the whole weight per call (14 B/element working set), and
    // the caching allocator keeps what quantising the largest weight at load took.
    const bool chunked = tt_release ? !tt_release->unchunked_nf4 : side != Side::kHigh;
    b.dequant = largest_adapted * kTorchaoDequantBytesPerElem;
    b.load_cache = TorchaoQuantiseBytes(largest_adapted, chunked);
  } else if (qlora) {
    b.dequant = largest * deq_bytes;
    // 4-bit loading moves each 16-bit weight to the device and quantises it there; the caching
    // allocator keeps the freed 16-bit blocks (one layer's linears) reserved afterwards.
    b.load_cache = layer_linears * 2;
    b.load_copies_16bit = true;
  } else if (o.quant == BaseQuant::kGptq4) {
    // auto-gptq's QuantLinear (qlinear_cuda_old.py, the torch path for >= 128 tokens): shifts the
    // packed int32 codes (4 B/element) and casts them to int8 (1), then `scales * (weight - zeros)`
    // in fp16 (2), which `torch.matmul(x, weight)` saves for backward: one layer's linears under
    // checkpointing, every layer's without.
    b.dequant = largest * 5;
    b.saved_weights = layer_linears * 2 * (o.grad_ckpt ? 1.0 : double(m.layers));
  } else if (o.quant == BaseQuant::kAwq4) {
    // autoawq's WQLinearMMFunction dequantises to fp16 in forward and again in backward; it saves
    // x and the packed tensors (x counted with the activations).
    b.dequant = largest * 2;
  }
  // DoRA's weight norm, one adapted linear at a time (+ its dequantised base when it is 4-bit:
  // dequantize_module_weight).
  if (o.dora && !full)
    for (const auto& l : linears)
      if (Adapted(l, o.targets))
        b.dora = std::max(b.dora, DoraWeightNormBytes(double(l.d_in), double(l.d_out), abytes) +
                                      (qlora || quant4 ? 2 * double(l.d_in) * double(l.d_out) : 0));
  // Fragmentation of the per-step allocations (activations, logits, dequant buffers).
  b.slack = kAllocatorSlack * (b.activations + b.logits + b.dequant + b.dora + b.saved_weights);
  b.overhead = kCudaContextBytes;
  if (side == Side::kHigh) b.residual_margin = kResidualMargin * std::max(b.backward_peak(), b.step_peak());

  // Load: checkpoint bytes on disk and the window mapped at once.
  if (model.safetensors) {
    b.checkpoint_bytes = double(model.safetensors->file_bytes);
    b.mmap_window = double(model.safetensors->largest_file_bytes);
  } else {
    b.checkpoint_bytes = P * 2;
    b.mmap_window = std::min(b.checkpoint_bytes, kDefaultShardBytes);
  }
  if (torchtune) b.host_state_dict = b.checkpoint_bytes;
  return b;
}

}  // namespace sparkops::memory
