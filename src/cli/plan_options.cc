#include "cli/plan_options.h"

#include <fmt/format.h>

#include "host/pyenv.h"

namespace sparkops {

using namespace memory;

void AddPlanFlags(CLI::App& app, PlanFlags& f) {
  app.add_option("--method", f.method, "full|lora|qlora (default lora)");
  AddNumber(app, "--seq", f.seq, {1, 1 << 24, false, true, "tokens"},
            "sequence / pack length in tokens (default 2048)");
  AddNumber(app, "--batch", f.batch, {1, 1 << 20, false, true, ""}, "micro-batch size (default 1)");
  app.add_option("--grad-ckpt", f.grad_ckpt, "gradient checkpointing on|off (default on)");
  app.add_option("--optimizer", f.optimizer, "adamw|adamw8bit|paged_adamw8bit|sgd|adafactor (default adamw)");
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
                 "transformers (HF transformers + PEFT; also torchtune)|litgpt (LitGPT's model code and finetune "
                 "loop under Lightning Fabric) (default transformers)");
  app.add_option("--bnb-version", f.bnb_version,
                 "bitsandbytes version for QLoRA (before 0.43.2 4-bit matmuls keep their inputs); default: "
                 "read from the Python environment");
  app.add_option("--python", f.python, "Python interpreter whose environment holds bitsandbytes (as preflight)");
  app.add_option("--site-packages", f.site_packages, "site-packages directory holding bitsandbytes (repeatable)");
  app.add_flag("--compile", f.compile, "the run uses torch.compile (the peak becomes a range)");
  AddNumber(app, "--budget-gib", f.budget_gib, {0, 1 << 20, true, false, "GiB"},
            "budget in GiB instead of MemAvailable - reserve");
  AddNumber(app, "--reserve-gib", f.reserve_gib, {0, 1 << 20, false, false, "GiB"},
            "GiB kept back from MemAvailable for OS/driver (default 4)");
}

Result<PlanOptions> ToPlanOptions(const PlanFlags& f) {
  PlanOptions o;
  auto method = ParseMethod(f.method);
  if (!method) return std::unexpected(method.error());
  o.method = *method;
  // seq, batch, rank, dropout: range-checked by their flags (AddNumber).
  o.seq = static_cast<uint64_t>(f.seq);
  o.batch = static_cast<uint64_t>(f.batch);
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
  // adapters in bf16; PEFT's: dropout 0, adapters upcast to fp32.
  o.lora_dropout = f.lora_dropout.value_or(litgpt ? 0.05 : 0);
  auto ad = ParseAdapterDtype(f.adapter_dtype.empty() ? (litgpt ? "bf16" : "fp32") : f.adapter_dtype);
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

Result<Plan> PlanFromFlags(Context& ctx, const std::string& model, const PlanFlags& f) {
  auto opts = ToPlanOptions(f);
  if (!opts) return std::unexpected(opts.error());
  ResolveBnbVersion(ctx, f, *opts);
  auto lm = ResolveModel(model);
  if (!lm) return std::unexpected(lm.error());
  auto budget = MakeBudget(ReadMemInfo(ctx.fs), f.budget_gib, f.reserve_gib);
  if (!budget) return std::unexpected(budget.error());
  return MakePlan(*lm, *opts, *budget);
}

}  // namespace sparkops
