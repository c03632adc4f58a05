#include "report/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <sstream>

#include "base/json_text.h"
#include "memory/mechanisms.h"

namespace sparkops {

using namespace memory;

namespace {

double G(double bytes) { return bytes / kGiB; }
double Round3(double v) { return std::round(v * 1000) / 1000; }

std::string OptionsLine(const PlanOptions& o) {
  std::string s =
      fmt::format("method {}, seq {}, batch {}, grad-ckpt {}, optimizer {}, precision {}", ToString(o.method), o.seq,
                  o.batch, o.grad_ckpt ? "on" : "off", ToString(o.optimizer), ToString(o.precision));
  if (o.method != Method::kFull) {
    std::vector<std::string> t;
    for (const char* n : {"q", "k", "v", "o", "gate", "up", "down", "head"})
      if (o.targets.count(n)) t.push_back(n);
    s += fmt::format(", LoRA r{} on {}{}", o.rank, fmt::join(t, ","),
                     o.lora_dropout > 0 ? fmt::format(" (dropout {})", o.lora_dropout) : "");
  }
  if (o.method != Method::kFull) s += fmt::format(", adapters {}{}", ToString(o.adapter_dtype), o.dora ? ", DoRA" : "");
  if (o.quant != BaseQuant::kNone) s += fmt::format(", base {}", ToString(o.quant));
  if (o.method == Method::kQlora && o.framework != Framework::kTorchtune)
    s += o.bnb_version.empty() ? ", bitsandbytes version unknown"
                               : fmt::format(", bitsandbytes {} ({})", o.bnb_version, o.bnb_version_source);
  if (o.method == Method::kQlora && !o.double_quant) s += ", no double quantisation";
  if (o.method == Method::kQlora && o.framework == Framework::kTransformers)
    s += o.kbit_prep ? ", kbit-prep (fp32 non-4-bit)" : ", no kbit-prep";
  if (!o.modules_to_save.empty()) s += fmt::format(", modules_to_save {}", fmt::join(o.modules_to_save, ","));
  const std::string version = o.framework_version.empty()
                                  ? " (version unknown)"
                                  : fmt::format(" {} ({})", o.framework_version, o.framework_version_source);
  return s + fmt::format(", attention {}, loss {}{}, framework {}{}", ToString(o.attention), ToString(o.loss),
                         o.compile ? ", torch.compile" : "", ToString(o.framework), version);
}

std::string LossNote(const PlanOptions& o, const Breakdown& b) {
  if (o.framework == Framework::kTorchtune)
    return fmt::format("{:g} B/logit, torchtune {}", b.loss_bytes_per_logit,
                       o.framework_version.empty() ? "version unknown: the current release"
                       : b.loss_bytes_per_logit > kStandardLossBytesPerLogit
                           ? "< 0.3 (the recipe holds its shifted fp32 logits)"
                           : ">= 0.3 (labels shifted, logits deleted before backward)");
  const auto era = TransformersLossEra(o.framework_version);
  return fmt::format("{:g} B/logit, transformers {}", b.loss_bytes_per_logit,
                     era ? ToString(*era) : "version unknown: the current release");
}

std::string Count(double n) {
  if (n >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f} M", n / 1e6);
  return fmt::format("{:.0f}", n);
}

}  // namespace

nlohmann::json PlanJson(const Plan& p) {
  const Breakdown& b = p.breakdown;
  nlohmann::json j;
  j["schema"] = kPlanJsonSchema;
  j["model"] = p.model.spec.name;
  j["model_type"] = p.model.spec.model_type;
  j["params"] = b.params;
  j["params_source"] = p.model.params_source;
  j["trainable_params"] = b.trainable;
  j["options"] = {
      {"method", ToString(p.options.method)},
      {"seq", p.options.seq},
      {"batch", p.options.batch},
      {"grad_accum", p.options.grad_accum},
      {"grad_ckpt", p.options.grad_ckpt},
      {"optimizer", ToString(p.options.optimizer)},
      {"precision", ToString(p.options.precision)},
      {"lora_rank", p.options.rank},
      {"lora_targets", p.options.targets},
      {"lora_dropout", p.options.lora_dropout},
      {"attention", ToString(p.options.attention)},
      {"loss", ToString(p.options.loss)},
      {"adapter_dtype", ToString(p.options.adapter_dtype)},
      {"bnb_version", p.options.bnb_version.empty() ? nlohmann::json() : nlohmann::json(p.options.bnb_version)},
      {"bnb_version_source",
       p.options.bnb_version_source.empty() ? nlohmann::json() : nlohmann::json(p.options.bnb_version_source)},
      {"compile", p.options.compile},
      {"framework", ToString(p.options.framework)},
      {"framework_version",
       p.options.framework_version.empty() ? nlohmann::json() : nlohmann::json(p.options.framework_version)},
      {"framework_version_source", p.options.framework_version_source.empty()
                                       ? nlohmann::json()
                                       : nlohmann::json(p.options.framework_version_source)},
      {"kbit_prep", p.options.kbit_prep},
      {"double_quant", p.options.double_quant},
      {"modules_to_save", p.options.modules_to_save},
      {"dora", p.options.dora},
      {"quant", ToString(p.options.quant)}};
  j["components"] = {{"weights_gib", Round3(G(b.weights))},
                     {"adapter_gib", Round3(G(b.adapter))},
                     {"gradients_gib", Round3(G(b.gradients))},
                     {"optimizer_gib", Round3(G(b.optimizer))},
                     {"master_weights_gib", Round3(G(b.master_weights))},
                     {"activations_gib", Round3(G(b.activations))},
                     {"logits_gib", Round3(G(b.logits))},
                     {"dequant_gib", Round3(G(b.dequant))},
                     {"overhead_gib", Round3(G(b.overhead))},
                     {"bnb_inputs_gib", Round3(G(b.bnb_inputs))},
                     {"retained_gib", Round3(G(b.retained))},
                     {"first_gradients_gib", Round3(G(b.first_gradients))},
                     {"accum_gradients_gib", Round3(G(b.accum_gradients))},
                     {"optimizer_step_gib", Round3(G(b.optimizer_step))},
                     {"slack_gib", Round3(G(b.slack))},
                     {"load_cache_gib", Round3(G(b.load_cache))},
                     {"cast_copies_gib", Round3(G(b.cast_copies))},
                     {"dora_transient_gib", Round3(G(b.dora))},
                     {"saved_weights_gib", Round3(G(b.saved_weights))},
                     {"host_state_dict_gib", Round3(G(b.host_state_dict))}};
  j["loss_bytes_per_logit"] = b.loss_bytes_per_logit > 0 ? nlohmann::json(b.loss_bytes_per_logit) : nlohmann::json();
  j["optimizer_paged"] = b.optimizer_paged;
  j["backward_phase_gib"] = Round3(G(b.backward_peak()));
  j["step_phase_gib"] = Round3(G(b.step_peak()));
  j["allocated_peak_gib"] = Round3(G(b.allocated_peak()));
  j["reserved_peak_gib"] = Round3(G(b.reserved_peak()));
  j["process_peak_gib"] = Round3(G(b.process_peak()));
  auto range = [](double lo, double hi) { return nlohmann::json{{"low", Round3(G(lo))}, {"high", Round3(G(hi))}}; };
  j["range"] = {{"allocated_peak_gib", range(p.low.allocated_peak(), p.high.allocated_peak())},
                {"reserved_peak_gib", range(p.low.reserved_peak(), p.high.reserved_peak())},
                {"process_peak_gib", range(p.low.process_peak(), p.high.process_peak())}};
  j["widened"] = p.widened;
  j["load_peak_gib"] = Round3(G(b.load_peak()));
  j["verdict_peak_gib"] = Round3(G(p.high.peak()));
  j["budget_gib"] = Round3(G(p.budget.bytes));
  j["budget_source"] = p.budget.source;
  if (p.budget.source != "--budget-gib")
    j["budget_note"] = "MemAvailable is the pool on a unified-memory GPU (GB10); on a discrete GPU pass --budget-gib";
  j["mem_available_gib"] =
      p.budget.mem_available ? nlohmann::json(Round3(G(*p.budget.mem_available))) : nlohmann::json();
  j["mem_free_gib"] = p.budget.mem_free ? nlohmann::json(Round3(G(*p.budget.mem_free))) : nlohmann::json();
  j["verdict"] = ToString(p.verdict);
  j["max_seq_that_fits"] = OrNull(p.max_seq);
  j["max_batch_that_fits"] = OrNull(p.max_batch);
  if (p.source) {
    const PlanSource& src = *p.source;
    nlohmann::json taken = nlohmann::json::array();
    for (size_t i = 0; i < src.config.taken.size(); ++i) {
      const auto& t = src.config.taken[i];
      taken.push_back({{"flag", t.flag}, {"value", t.value}, {"key", t.key}, {"overridden", src.overridden.at(i)}});
    }
    j["from"] = {{"file", src.file},
                 {"format", src.config.format},
                 {"model", src.model.empty() ? nlohmann::json() : nlohmann::json(src.model)},
                 {"model_key", src.config.model_key.empty() ? nlohmann::json() : nlohmann::json(src.config.model_key)},
                 {"taken", taken},
                 {"assumed", src.config.assumed}};
  }
  j["anchor"] = {{"name", p.anchor.name},
                 {"gib", Round3(G(p.anchor.bytes))},
                 {"source", p.anchor.source},
                 {"compared", p.anchor.compared},
                 {"diff_gib", Round3(G(p.anchor.diff))}};
  return j;
}

void PrintPlan(std::ostream& out, const Plan& p) {
  const Breakdown& b = p.breakdown;
  const auto& o = p.options;
  if (p.source) {
    const PlanSource& src = *p.source;
    out << fmt::format("from {} ({})", src.file, src.config.format);
    if (!src.model.empty()) out << fmt::format(": model {} ({})", src.model, src.config.model_key);
    out << "\n";
    std::vector<std::string> took, over;
    for (size_t i = 0; i < src.config.taken.size(); ++i) {
      const auto& t = src.config.taken[i];
      const std::string s = fmt::format("{}{}{} ({})", t.flag, t.value.empty() ? "" : " ", t.value, t.key);
      (src.overridden.at(i) ? over : took).push_back(s);
    }
    if (!took.empty()) out << fmt::format("  took     {}\n", fmt::join(took, ", "));
    if (!over.empty()) out << fmt::format("  overridden by flags: {}\n", fmt::join(over, ", "));
    for (const auto& a : src.config.assumed) out << "  assumed  " << a << "\n";
  }
  out << fmt::format("plan {} ({})\n  {}\n", p.model.spec.name, p.model.spec.model_type, OptionsLine(o));
  out << fmt::format("params        {} (source: {}); trainable {}\n", Count(double(b.params)), p.model.params_source,
                     Count(double(b.trainable)));
  auto row = [&](const char* name, double bytes, const std::string& note) {
    if (bytes <= 0) return;
    out << fmt::format("  {:<24}{:>9.2f} GiB{}{}\n", name, G(bytes), note.empty() ? "" : "  ", note);
  };
  const bool litgpt = o.framework == Framework::kLitgpt;
  const bool torchtune = o.framework == Framework::kTorchtune;
  const std::string head_note = litgpt && p.model.spec.tied ? "; LitGPT keeps a separate lm_head copy" : "";
  row("weights", b.weights,
      (o.quant != BaseQuant::kNone
           ? fmt::format("{} block linears: 4-bit packed + fp16 scales and zeros per 128; the rest 16-bit",
                         o.quant == BaseQuant::kGptq4 ? "GPTQ" : "AWQ")
       : o.method == Method::kQlora && torchtune
           ? std::string("torchao NF4 (4.126 bits/param) for the adapted linears only; the rest 16-bit")
       : o.method == Method::kQlora
           ? (litgpt ? "NF4 block linears and lm_head at 4.127 bits/param; embeddings, norms 16-bit"
                     : fmt::format("NF4 block linears at {} bits/param; embeddings, head, norms {}",
                                   o.double_quant ? "4.127" : "4.5",
                                   o.kbit_prep ? "fp32 (prepare_model_for_kbit_training)" : "16-bit"))
           : (o.method == Method::kFull ? "trained" : "frozen base")) +
          head_note);
  row("LoRA adapter", b.adapter, "r*(d_in+d_out) per targeted matrix");
  row("gradients", b.gradients, "trainable parameters only");
  row("optimizer states", b.optimizer,
      b.optimizer_paged ? "paged (bnb cudaMallocManaged): same pool on GB10, invisible to torch counters" : "");
  row("fp32 master weights", b.master_weights, "mixed precision");
  row("activations", b.activations, o.grad_ckpt ? "checkpointed: layer inputs + one layer" : "every layer kept");
  row("logits + loss", b.logits,
      litgpt                      ? (o.method == Method::kFull
                                         ? "LitGPT full.py: fp32 logits (Fabric), their slice copy, log-softmax: 12 B/logit"
                                         : "LitGPT: 128-token head chunks cast to fp32 by Fabric + chunked CE, largest moment")
      : o.loss == Loss::kStandard ? LossNote(o, b)
                                  : "chunked CE");
  row(o.quant != BaseQuant::kNone ? "4-bit dequant transient" : "QLoRA dequant transient", b.dequant,
      o.quant == BaseQuant::kGptq4  ? "auto-gptq: int32 shifted codes + int8, largest linear, one at a time"
      : o.quant == BaseQuant::kAwq4 ? "autoawq: largest linear in fp16, one at a time"
      : torchtune                   ? "torchao get_original_weight: 14 B per element of the largest adapted linear"
      : b.fp16_quant_state          ? "largest linear dequantised to fp16 + its bf16 copy, one at a time"
                                    : "largest linear in bf16, one at a time");
  row("GPTQ saved fp16 weights", b.saved_weights,
      o.grad_ckpt ? "matmul keeps the dequantised weight for backward: one layer's linears"
                  : "matmul keeps the dequantised weight for backward: every layer's linears");
  row("DoRA weight norm", b.dora, "x_eye + lora_weight + the norm's two full-size terms, one linear at a time");
  row("  of which bnb-kept inputs", b.bnb_inputs,
      "bitsandbytes < 0.43.2: every 4-bit matmul keeps its input (PR #1270)");
  row("previous step's tensors", b.retained, "bnb ctx inputs live with the graph a loop keeps into the next step");
  row("optimizer step transient", b.optimizer_step, "foreach AdamW's sqrt(v) list");
  row("bf16 weight copies", b.cast_copies,
      o.grad_ckpt ? "autocast's copy of one layer's fp32 frozen linears, saved for backward"
                  : "autocast's copies of every layer's fp32 frozen linears, saved for backward");
  row("allocator slack", b.slack, "caching allocator, 8% of per-step allocations (reserved counter)");
  row("4-bit load cache", b.load_cache,
      torchtune ? "torchao quantising the largest adapted linear at load, left reserved (reserved counter)"
                : "16-bit blocks left reserved by 4-bit loading (reserved counter)");
  row("CUDA context", b.overhead, "gpu_poor's 650 MB figure (process counter only)");
  out << fmt::format(
      "phases          backward start {:.2f} GiB (states + activations + logits{}), optimizer step {:.2f} GiB "
      "(states + all gradients)\n",
      G(b.backward_peak()),
      b.accum_gradients > 0   ? " + all gradients (accumulation)"
      : b.first_gradients > 0 ? " + first gradients"
                              : "",
      G(b.step_peak()));
  auto counter = [&](const char* name, double mid, double lo, double hi, const char* what) {
    std::string r =
        lo < mid - 0.005 * kGiB || hi > mid + 0.005 * kGiB ? fmt::format(" (range {:.2f}-{:.2f})", G(lo), G(hi)) : "";
    out << fmt::format("{:<16}{:>9.2f} GiB{}  {}\n", name, G(mid), r, what);
  };
  counter("allocated peak", b.allocated_peak(), p.low.allocated_peak(), p.high.allocated_peak(),
          "torch.cuda.max_memory_allocated: the larger phase");
  counter("reserved peak", b.reserved_peak(), p.low.reserved_peak(), p.high.reserved_peak(),
          "torch.cuda.max_memory_reserved: allocated + slack + load cache");
  counter("process peak", b.process_peak(), p.low.process_peak(), p.high.process_peak(),
          "what the process takes from the pool: reserved + paged state + CUDA context");
  for (const auto& w : p.widened) out << "  widened: " << w << "\n";
  if (b.host_state_dict > 0)
    out << fmt::format(
        "load-time peak  {:>9.2f} GiB  torchtune: the whole {:.1f} GiB state dict in host memory (the same pool on "
        "a GB10) beside the model and the quantiser's working set\n",
        G(b.load_peak()), G(b.host_state_dict));
  else
    out << fmt::format(
        "load-time peak  {:>9.2f} GiB  rule of thumb: mmap'd checkpoint pages and the device copy count at once "
        "(one {:.1f} GiB shard mapped at a time; no source measures this)\n",
        G(b.load_peak()), G(b.mmap_window));
  if (p.budget.source == "--budget-gib") {
    out << fmt::format("budget          {:>9.2f} GiB  from --budget-gib\n", G(p.budget.bytes));
  } else {
    out << fmt::format("budget          {:>9.2f} GiB  MemAvailable {:.2f} GiB - reserve {:.1f} GiB (OS/driver)\n",
                       G(p.budget.bytes), G(*p.budget.mem_available), G(p.budget.reserve));
  }
  if (p.budget.source != "--budget-gib")
    out << "  (the budget is the shared pool of a unified-memory GPU such as GB10; on a discrete GPU the limit is the "
           "card's own memory: pass --budget-gib)\n";
  if (p.budget.mem_free)
    out << fmt::format(
        "  MemFree {:.2f} GiB (the `free -g` \"free\" column); the budget is MemAvailable because it also "
        "counts page cache the kernel can reclaim, and nvidia-smi does not see this pool\n",
        G(*p.budget.mem_free));
  out << fmt::format(
      "verdict         {} (peak {:.2f} GiB = {:.0f}% of budget, the high end of process and load peaks; "
      "fits <= 90%, tight <= 100%)\n",
      ToString(p.verdict), G(p.high.peak()), 100 * p.high.peak() / p.budget.bytes);
  out << fmt::format("largest seq that fits (batch {}): {}\n", o.batch,
                     p.max_seq ? fmt::format("{}{}", *p.max_seq, p.max_seq_is_model_limit ? " (model maximum)" : "")
                               : "none (the weights alone do not fit)");
  out << fmt::format("largest batch that fits (seq {}): {}\n", o.seq,
                     p.max_batch ? std::to_string(*p.max_batch) : "none");
  out << fmt::format("anchor          {}: {:.2f} GiB [{}]; this plan's {}: {:+.2f} GiB from it\n", p.anchor.name,
                     G(p.anchor.bytes), p.anchor.source, p.anchor.compared, G(p.anchor.diff));
  out << "note: offloading activations or optimizer state \"to CPU RAM\" saves nothing on a unified-memory Spark: "
         "it is the same pool.\n";
}

nlohmann::json CalibrationJson(const std::vector<Calibration>& runs) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : runs)
    j.push_back({{"dir", c.dir},
                 {"model", c.model},
                 {"method", c.method},
                 {"measured_gib", Round3(G(c.measured))},
                 {"measured_what", c.measured_what},
                 {"predicted_gib", Round3(G(c.predicted))},
                 {"predicted_high_gib", Round3(G(c.predicted_high))},
                 {"residual_gib", Round3(G(c.measured - c.predicted))}});
  return j;
}

std::string CalibrationReport(const std::vector<Calibration>& runs) {
  std::ostringstream out;
  for (const auto& c : runs) {
    const double resid = c.measured - c.predicted;
    out << fmt::format("{} ({} {})\n", c.dir, c.model, c.method);
    out << fmt::format("  measured  {:>8.2f} GiB  {}\n", c.measured / kGiB, c.measured_what);
    out << fmt::format("  predicted {:>8.2f} GiB  process peak (range {:.2f}-{:.2f}); error {:+.1f}%{}\n",
                       c.predicted / kGiB, c.predicted_low / kGiB, c.predicted_high / kGiB,
                       c.measured > 0 ? 100 * (c.predicted / c.measured - 1) : 0.0,
                       c.measured > c.predicted_high ? "  ABOVE THE HIGH END" : "");
    out << fmt::format("  residual  {:>+8.2f} GiB (measured - predicted)\n", resid / kGiB);
    const double step = c.activations + c.logits;
    if (step > 0)
      out << fmt::format("    as activations + logits: {:.2f} GiB planned, {:.2f} GiB would match (x{:.2f})\n",
                         step / kGiB, (step + resid) / kGiB, (step + resid) / step);
    if (c.weights > 0)
      out << fmt::format("    as weights: {:.2f} GiB planned, {:.2f} GiB would match (x{:.2f})\n", c.weights / kGiB,
                         (c.weights + resid) / kGiB, (c.weights + resid) / c.weights);
  }
  out << "to send a run back as a validation row: tests/data/memory-validation.csv's format (model, method, seq, "
         "batch, measured_peak_gb, what_measured, source, sparkops_args)\n";
  return out.str();
}

}  // namespace sparkops
