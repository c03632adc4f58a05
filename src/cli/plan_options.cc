#include "cli/plan_options.h"

#include <fmt/format.h>

#include <tuple>

#include "base/strings.h"
#include "host/pyenv.h"
#include "memory/mechanisms.h"

namespace sparkops {

using namespace memory;

void AddPlanFlags(CLI::App& app, PlanFlags& f) {
  app.add_option("--from", f.from,
                 "a training config: HF TrainingArguments/TRL SFTConfig (JSON or YAML), axolotl, torchtune recipe or "
                 "LitGPT finetune YAML; flags override what it says");
  app.add_option("--method", f.method, "full|lora|qlora (default lora)");
  AddNumber(app, "--seq", f.seq, {1, 1 << 24, false, true, "tokens"},
            "sequence / pack length in tokens (default 2048)");
  AddNumber(app, "--batch", f.batch, {1, 1 << 20, false, true, ""}, "micro-batch size (default 1)");
  AddNumber(app, "--grad-accum", f.grad_accum, {1, 1 << 20, false, true, ""},
            "micro-batches per optimizer step (gradient accumulation; default 1): above 1 all gradients live beside "
            "the next micro-batch's activations");
  app.add_option("--grad-ckpt", f.grad_ckpt, "gradient checkpointing on|off (default on)");
  app.add_option(
      "--optimizer", f.optimizer,
      "adamw (torch's default, foreach)|adamw_fused|adamw8bit|paged_adamw8bit|sgd|adafactor (default adamw)");
  app.add_option("--precision", f.precision,
                 "bf16 (pure bf16 weights/grads/states)|mixed (fp32 master + states)|fp32 (default bf16)");
  AddNumber(app, "--lora-rank", f.rank, {1, 65536, false, true, ""}, "LoRA rank r (default 16)");
  app.add_option("--lora-targets", f.targets, "comma list of q,k,v,o,gate,up,down,head; attn; all (default all)");
  AddNumber(app, "--lora-dropout", f.lora_dropout, {0, 0.99, false, false, ""},
            "LoRA dropout probability (default: the framework's, PEFT 0, LitGPT 0.05)");
  app.add_option("--attention", f.attention, "sdpa|flash|eager (default sdpa)");
  app.add_option("--loss", f.loss, "standard|chunked cross-entropy (default standard)");
  app.add_option("--adapter-dtype", f.adapter_dtype,
                 "fp32 (PEFT's default: adapters, their grads and AdamW state in fp32)|bf16 (LitGPT bf16-true, "
                 "LitGPT's default)");
  app.add_option("--framework", f.framework,
                 "transformers (HF transformers + PEFT)|litgpt (LitGPT's model code and finetune loop under Lightning "
                 "Fabric)|torchtune (its recipes; QLoRA with torchao's NF4) (default transformers)");
  app.add_option("--bnb-version", f.bnb_version,
                 "bitsandbytes version for QLoRA (before 0.43.2 4-bit matmuls keep their inputs); default: "
                 "read from the Python environment");
  app.add_option("--python", f.python, "Python interpreter whose environment holds bitsandbytes (as preflight)");
  app.add_option("--site-packages", f.site_packages, "site-packages directory holding bitsandbytes (repeatable)");
  app.add_option("--framework-version", f.framework_version,
                 "the framework's version (transformers: 4.45.2 upcasts logits in the model); default: read from "
                 "the Python environment, else the current release with the range covering older ones");
  app.add_option(
      "--kbit-prep", f.kbit_prep,
      "QLoRA: PEFT prepare_model_for_kbit_training casts embeddings, head, norms to fp32 on|off (default on)");
  app.add_option("--double-quant", f.double_quant, "QLoRA: NF4 double quantisation on|off (default on)");
  app.add_option("--modules-to-save", f.modules_to_save,
                 "PEFT modules_to_save: embed,head (trainable copies beside the frozen originals)");
  app.add_flag("--compile", f.compile, "the run uses torch.compile (the peak becomes a range)");
  app.add_flag("--dora", f.dora, "DoRA (PEFT use_dora, torchtune use_dora): magnitude vectors and the weight norm");
  app.add_option("--quant", f.quant,
                 "LoRA on a pre-quantised base: none|gptq4|awq4 (4-bit, group size 128; default none)");
  AddNumber(app, "--budget-gib", f.budget_gib, {0, 1 << 20, true, false, "GiB"},
            "budget in GiB instead of MemAvailable - reserve");
  AddNumber(app, "--reserve-gib", f.reserve_gib, {0, 1 << 20, false, false, "GiB"},
            "GiB kept back from MemAvailable for OS/driver (default 4)");
  for (const char* name : {"--method",          "--seq",          "--batch",     "--grad-accum",
                           "--grad-ckpt",       "--optimizer",    "--precision", "--lora-rank",
                           "--lora-targets",    "--lora-dropout", "--attention", "--loss",
                           "--adapter-dtype",   "--framework",    "--compile",   "--double-quant",
                           "--modules-to-save", "--dora",         "--quant",     "--framework-version"})
    f.given[name] = app.get_option(name);
}

Result<PlanSource> ApplyTrainConfig(const TrainConfig& c, const std::string& file, PlanFlags& f, std::string& model) {
  PlanSource src{file, c, "", {}};
  for (const auto& t : c.taken) {
    auto it = f.given.find(t.flag);
    const bool over = it != f.given.end() && it->second && it->second->count() > 0;
    src.overridden.push_back(over);
    if (over) continue;
    auto whole = [&](int64_t max, int64_t& dst) -> Result<void> {
      auto n = ParseInt(t.value);
      if (!n || *n < 1 || *n > max)
        return InputError(fmt::format("{}: field '{}': {} is out of range (1..{})", file, t.key, t.value, max));
      dst = *n;
      return {};
    };
    Result<void> r;
    const std::string& v = t.value;
    if (t.flag == "--method") f.method = v;
    else if (t.flag == "--seq") r = whole(1 << 24, f.seq);
    else if (t.flag == "--batch") r = whole(1 << 20, f.batch);
    else if (t.flag == "--grad-accum") r = whole(1 << 20, f.grad_accum);
    else if (t.flag == "--lora-rank") r = whole(65536, f.rank);
    else if (t.flag == "--grad-ckpt") f.grad_ckpt = v;
    else if (t.flag == "--optimizer") f.optimizer = v;
    else if (t.flag == "--precision") f.precision = v;
    else if (t.flag == "--lora-targets") f.targets = v;
    else if (t.flag == "--lora-dropout") f.lora_dropout = ParseDouble(v).value_or(0);
    else if (t.flag == "--attention") f.attention = v;
    else if (t.flag == "--loss") f.loss = v;
    else if (t.flag == "--adapter-dtype") f.adapter_dtype = v;
    else if (t.flag == "--framework") f.framework = v;
    else if (t.flag == "--compile") f.compile = true;
    else if (t.flag == "--double-quant") f.double_quant = v;
    else if (t.flag == "--modules-to-save") f.modules_to_save = v;
    else if (t.flag == "--dora") f.dora = v != "off";
    else if (t.flag == "--quant") f.quant = v;
    else if (t.flag == "--framework-version") f.framework_version = v;
    if (!r) return std::unexpected(r.error());
  }
  if (!model.empty()) return src;
  std::string why;
  for (const auto& m : c.models) {
    auto lm = ResolveModel(m);
    if (lm) {
      model = src.model = m;
      return src;
    }
    why += fmt::format("; '{}': {}", m, lm.error().message);
  }
  if (c.models.empty()) return InputError(fmt::format("{}: names no model (give MODEL)", file));
  return InputError(fmt::format("{}: field '{}': no model sparkops knows{}", file, c.model_key, why));
}

Result<PlanOptions> ToPlanOptions(const PlanFlags& f) {
  PlanOptions o;
  auto method = ParseMethod(f.method);
  if (!method) return std::unexpected(method.error());
  o.method = *method;
  // seq, batch, rank, dropout: range-checked by their flags (AddNumber).
  o.seq = static_cast<uint64_t>(f.seq);
  o.batch = static_cast<uint64_t>(f.batch);
  o.grad_accum = static_cast<uint64_t>(f.grad_accum);
  o.rank = static_cast<uint64_t>(f.rank);
  if (f.grad_ckpt != "on" && f.grad_ckpt != "off")
    return InputError(fmt::format("--grad-ckpt '{}': expected on|off", f.grad_ckpt));
  o.grad_ckpt = f.grad_ckpt == "on";
  auto opt = ParseOptimizer(f.optimizer);
  if (!opt) return std::unexpected(opt.error());
  o.optimizer = *opt;
  auto prec = ParsePrecision(f.precision);
  if (!prec) return std::unexpected(prec.error());
  o.precision = *prec;
  auto targets = ParseTargets(f.targets);
  if (!targets) return std::unexpected(targets.error());
  o.targets = *targets;
  auto attn = ParseAttention(f.attention);
  if (!attn) return std::unexpected(attn.error());
  o.attention = *attn;
  auto loss = ParseLoss(f.loss);
  if (!loss) return std::unexpected(loss.error());
  o.loss = *loss;
  auto fw = ParseFramework(f.framework);
  if (!fw) return std::unexpected(fw.error());
  o.framework = *fw;
  const bool litgpt = o.framework == Framework::kLitgpt;
  // LitGPT's finetune defaults: lora_dropout 0.05 (litgpt/finetune/lora.py), bf16-true keeps the
  // adapters in bf16; torchtune's LoRA parameters take the model dtype; PEFT's: dropout 0,
  // adapters upcast to fp32.
  o.lora_dropout = f.lora_dropout.value_or(litgpt ? 0.05 : 0);
  const bool model_dtype_adapters = litgpt || o.framework == Framework::kTorchtune;
  auto ad = ParseAdapterDtype(f.adapter_dtype.empty() ? (model_dtype_adapters ? "bf16" : "fp32") : f.adapter_dtype);
  if (!ad) return std::unexpected(ad.error());
  o.adapter_dtype = *ad;
  if (!f.bnb_version.empty()) {
    if (BnbInputsFor(f.bnb_version) == BnbInputs::kUnknown)
      return InputError(fmt::format("--bnb-version '{}': expected a version such as 0.45.5", f.bnb_version));
    o.bnb_version = f.bnb_version;
    o.bnb_version_source = "--bnb-version";
    o.bnb_inputs = BnbInputsFor(f.bnb_version);
  }
  o.compile = f.compile;
  o.dora = f.dora;
  auto quant = ParseQuant(f.quant);
  if (!quant) return std::unexpected(quant.error());
  o.quant = *quant;
  for (auto [flag, value, dst] :
       {std::tuple{"--kbit-prep", &f.kbit_prep, &o.kbit_prep}, {"--double-quant", &f.double_quant, &o.double_quant}}) {
    if (*value != "on" && *value != "off") return InputError(fmt::format("{} '{}': expected on|off", flag, *value));
    *dst = *value == "on";
  }
  auto saved = ParseModulesToSave(f.modules_to_save);
  if (!saved) return std::unexpected(saved.error());
  o.modules_to_save = *saved;
  if (!f.framework_version.empty()) {
    if (!ReleasePart(f.framework_version))
      return InputError(fmt::format("--framework-version '{}': expected a version such as {}", f.framework_version,
                                    o.framework == Framework::kTorchtune ? "0.6.1" : "4.45.2"));
    o.framework_version = f.framework_version;
    o.framework_version_source = "--framework-version";
  }
  return o;
}

void ResolveBnbVersion(const Context& ctx, const PlanFlags& f, PlanOptions& o) {
  if (o.method != Method::kQlora || !o.bnb_version_source.empty()) return;
  auto env = DiscoverPython(ctx, f.python, f.site_packages);
  if (!env) return;
  const Inventory inv = ScanSitePackages(env->site_dirs);
  const Package* bnb = inv.Find("bitsandbytes");
  if (!bnb || BnbInputsFor(bnb->version) == BnbInputs::kUnknown) return;
  o.bnb_version = bnb->version;
  o.bnb_version_source = "dist-info in " + bnb->site_dir;
  o.bnb_inputs = BnbInputsFor(bnb->version);
}

void ResolveFrameworkVersion(const Context& ctx, const PlanFlags& f, PlanOptions& o) {
  if (!o.framework_version_source.empty()) return;
  auto env = DiscoverPython(ctx, f.python, f.site_packages);
  if (!env) return;
  const Inventory inv = ScanSitePackages(env->site_dirs);
  const Package* pkg = inv.Find(ToString(o.framework));
  if (!pkg || !ReleasePart(pkg->version)) return;
  o.framework_version = pkg->version;
  o.framework_version_source = "dist-info in " + pkg->site_dir;
}

Result<Plan> PlanFromFlags(Context& ctx, const std::string& model_arg, const PlanFlags& flags) {
  PlanFlags f = flags;
  std::string model = model_arg;
  std::optional<PlanSource> source;
  if (!f.from.empty()) {
    auto tc = ReadTrainConfig(f.from);
    if (!tc) return std::unexpected(tc.error());
    auto s = ApplyTrainConfig(*tc, f.from, f, model);
    if (!s) return std::unexpected(s.error());
    source = std::move(*s);
  }
  if (model.empty()) return InputError("MODEL is required (or --from FILE naming one, or --calibrate RUN_DIR...)");
  auto opts = ToPlanOptions(f);
  if (!opts) return std::unexpected(opts.error());
  ResolveBnbVersion(ctx, f, *opts);
  ResolveFrameworkVersion(ctx, f, *opts);
  auto lm = ResolveModel(model);
  if (!lm) return std::unexpected(lm.error());
  auto budget = MakeBudget(ReadMemInfo(ctx.fs), f.budget_gib, f.reserve_gib);
  if (!budget) return std::unexpected(budget.error());
  auto plan = MakePlan(*lm, *opts, *budget);
  if (plan) plan->source = std::move(source);
  return plan;
}

}  // namespace sparkops
