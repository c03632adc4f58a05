#include "memory/train_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "base/strings.h"
#include "host/hostfs.h"
#include "memory/train_config_builder.h"

namespace sparkops::memory {
namespace {

using detail::Bool;
using detail::Builder;
using detail::Flat;

/// Bracket nesting and indentation, before yaml-cpp's recursive parser sees the text. Comments
/// are skipped; a quote is closed at the end of its line (so a stray quote cannot hide brackets).
Result<void> PreScan(std::string_view text, const std::string& file) {
  int depth = 0, max_depth = 0;
  char quote = 0, prev = '\n';
  size_t indent = 0;
  bool line_start = true, comment = false;
  for (char c : text) {
    if (c == '\n') {
      line_start = true, indent = 0, quote = 0, comment = false, prev = c;
      continue;
    }
    if (comment) continue;
    if (!quote && c == '#' && (prev == ' ' || prev == '\t' || prev == '\n')) {
      comment = true;
      continue;
    }
    prev = c;
    if (line_start && c == ' ') {
      if (++indent > 256) return InputError(fmt::format("{}: indentation deeper than 256 columns", file));
      continue;
    }
    line_start = false;
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    if (max_depth > kMaxTrainConfigDepth)
      return InputError(fmt::format("{}: nested deeper than {} levels", file, kMaxTrainConfigDepth));
  }
  return {};
}

Result<void> Walk(const YAML::Node& n, const std::string& path, int depth, size_t& nodes, Flat& out,
                  const std::string& file) {
  if (++nodes > kMaxTrainConfigNodes)
    return InputError(fmt::format("{}: more than {} nodes", file, kMaxTrainConfigNodes));
  if (depth > kMaxTrainConfigDepth)
    return InputError(fmt::format("{}: nested deeper than {} levels", file, kMaxTrainConfigDepth));
  if (n.IsScalar()) {
    out.scalars[path] = n.as<std::string>();
  } else if (n.IsNull()) {
    out.scalars[path] = "null";
  } else if (n.IsSequence()) {
    auto& list = out.lists[path];
    for (const auto& e : n) {
      if (++nodes > kMaxTrainConfigNodes)
        return InputError(fmt::format("{}: more than {} nodes", file, kMaxTrainConfigNodes));
      if (e.IsScalar()) list.push_back(e.as<std::string>());
    }
  } else if (n.IsMap()) {
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) continue;
      const std::string key = kv.first.as<std::string>();
      auto r = Walk(kv.second, path.empty() ? key : path + "." + key, depth + 1, nodes, out, file);
      if (!r) return r;
    }
  }
  return {};
}

/// HF `optim` / axolotl `optimizer` names -> the plan's --optimizer.
std::optional<std::string> HfOptimizer(const std::string& name) {
  static const std::map<std::string, std::string> k = {{"adamw_torch", "adamw"},
                                                       {"adamw_hf", "adamw"},
                                                       {"adamw_torch_fused", "adamw_fused"},
                                                       {"adamw_bnb_8bit", "adamw8bit"},
                                                       {"adamw_8bit", "adamw8bit"},
                                                       {"paged_adamw_8bit", "paged_adamw8bit"},
                                                       {"adafactor", "adafactor"},
                                                       {"sgd", "sgd"},
                                                       {"adamw_torch_4bit", "adamw8bit"}};
  auto it = k.find(ToLower(Trim(name)));
  if (it == k.end()) return std::nullopt;
  return it->second;
}

Result<void> Optimizer(Builder& b, const std::string& key) {
  auto v = b.flat().Get(key);
  if (!v || *v == "null") return {};
  if (auto o = HfOptimizer(*v)) {
    b.Take("--optimizer", *o, key);
  } else if (ToLower(*v).starts_with("paged_adamw_32bit")) {
    b.Take("--optimizer", "adamw_fused", key);
    b.Assume(
        fmt::format("{} {}: bitsandbytes' 32-bit paged AdamW updates in place; its fp32 states are counted "
                    "as visible (paged state is the same pool on a GB10)",
                    key, *v));
  } else b.Assume(fmt::format("{} '{}' is not one sparkops models: planned as adamw", key, *v));
  return {};
}

Result<void> Targets(Builder& b, const std::string& key) {
  auto names = b.Names(key);
  if (!names.empty()) b.Take("--lora-targets", fmt::format("{}", fmt::join(names, ",")), key);
  return {};
}

Result<void> FromHf(Builder& b) {
  const Flat& f = b.flat();
  b.Model("model_name_or_path");
  const bool peft = Bool(f.Get("use_peft").value_or("")).value_or(false) || f.Has("lora_r");
  const bool four = Bool(f.Get("load_in_4bit").value_or("")).value_or(false);
  if (four && peft) b.Take("--method", "qlora", "load_in_4bit");
  else if (peft) b.Take("--method", "lora", f.Has("use_peft") ? "use_peft" : "lora_r");
  else {
    b.Take("--method", "full", "use_peft (absent)");
    b.Assume("no use_peft / lora_r: a full fine-tune");
  }
  SPARKOPS_TRY(b.Count("lora_r", "--lora-rank"));
  SPARKOPS_TRY(b.Fraction("lora_dropout", "--lora-dropout"));
  SPARKOPS_TRY(Targets(b, "lora_target_modules"));
  if (auto m = b.Names("lora_modules_to_save"); !m.empty())
    b.Take("--modules-to-save", fmt::format("{}", fmt::join(m, ",")), "lora_modules_to_save");
  bool seq = false;
  for (const char* k : {"max_length", "max_seq_length"})
    if (!seq) {
      auto r = b.Count(k, "--seq");
      if (!r) return std::unexpected(r.error());
      seq = *r;
    }
  if (!seq) b.Assume("max_length not set: the plan's --seq (default 2048; TRL's SFTConfig default is 1024)");
  auto batch = b.Count("per_device_train_batch_size", "--batch");
  if (!batch) return std::unexpected(batch.error());
  if (!*batch) {
    b.Take("--batch", "8", "per_device_train_batch_size (TrainingArguments default)");
    b.Assume("per_device_train_batch_size not set: TrainingArguments' default 8");
  }
  SPARKOPS_TRY(b.Count("gradient_accumulation_steps", "--grad-accum"));
  auto ckpt = b.Flag("gradient_checkpointing");
  if (!ckpt) return std::unexpected(ckpt.error());
  if (*ckpt) b.Take("--grad-ckpt", **ckpt ? "on" : "off", "gradient_checkpointing");
  else b.Assume("gradient_checkpointing not set: on (TRL's SFTConfig default; TrainingArguments' is off)");
  const std::string dtype = ToLower(f.Get("torch_dtype").value_or(f.Get("dtype").value_or("")));
  auto bf16 = b.Flag("bf16");
  if (!bf16) return std::unexpected(bf16.error());
  if (dtype == "float32" && bf16->value_or(false)) b.Take("--precision", "mixed", "torch_dtype + bf16");
  else if (dtype == "float32") b.Take("--precision", "fp32", "torch_dtype");
  else if (dtype == "bfloat16" || dtype == "auto")
    b.Take("--precision", "bf16", f.Has("torch_dtype") ? "torch_dtype" : "dtype");
  else b.Assume("model dtype not set: bf16 weights (the checkpoint's dtype)");
  SPARKOPS_TRY(Optimizer(b, "optim"));
  if (!b.Took("--optimizer") && !f.Has("optim")) b.Assume("optim not set: adamw_torch (foreach AdamW)");
  if (auto a = f.Get("attn_implementation"); a && *a != "null") {
    const std::string l = ToLower(*a);
    b.Take("--attention", l == "eager" ? "eager" : l.starts_with("flash") ? "flash" : "sdpa", "attn_implementation");
  }
  SPARKOPS_TRY(b.OnOff("bnb_4bit_use_double_quant", "--double-quant"));
  if (Bool(f.Get("use_dora").value_or("")).value_or(false)) b.Take("--dora", "on", "use_dora");
  return {};
}

Result<void> FromAxolotl(Builder& b) {
  const Flat& f = b.flat();
  b.Model("base_model");
  const std::string adapter = ToLower(f.Get("adapter").value_or(""));
  const bool four = Bool(f.Get("load_in_4bit").value_or("")).value_or(false);
  if (adapter == "qlora" || (adapter == "lora" && four)) b.Take("--method", "qlora", "adapter");
  else if (adapter == "lora") b.Take("--method", "lora", "adapter");
  else if (adapter.empty() || adapter == "null") b.Take("--method", "full", "adapter (absent)");
  else return InputError(fmt::format("{}: field 'adapter': '{}' is not lora or qlora", b.file(), adapter));
  SPARKOPS_TRY(b.Count("lora_r", "--lora-rank"));
  SPARKOPS_TRY(b.Fraction("lora_dropout", "--lora-dropout"));
  auto linear = b.Flag("lora_target_linear");
  if (!linear) return std::unexpected(linear.error());
  if (linear->value_or(false)) b.Take("--lora-targets", "all", "lora_target_linear");
  else SPARKOPS_TRY(Targets(b, "lora_target_modules"));
  if (auto m = b.Names("lora_modules_to_save"); !m.empty())
    b.Take("--modules-to-save", fmt::format("{}", fmt::join(m, ",")), "lora_modules_to_save");
  auto seq = b.Count("sequence_len", "--seq");
  if (!seq) return std::unexpected(seq.error());
  if (!*seq) b.Take("--seq", "512", "sequence_len (axolotl's default)");
  SPARKOPS_TRY(b.Count("micro_batch_size", "--batch"));
  SPARKOPS_TRY(b.Count("gradient_accumulation_steps", "--grad-accum"));
  if (auto g = f.Get("gradient_checkpointing")) {
    auto on = Bool(*g);
    b.Take("--grad-ckpt", on.value_or(true) ? "on" : "off", "gradient_checkpointing");  // "unsloth", "offload": on
  }
  if (auto v = f.Get("bf16"); v && (ToLower(*v) == "auto" || Bool(*v).value_or(false)))
    b.Take("--precision", "bf16", "bf16");
  SPARKOPS_TRY(Optimizer(b, "optimizer"));
  if (Bool(f.Get("flash_attention").value_or("")).value_or(false)) b.Take("--attention", "flash", "flash_attention");
  else if (Bool(f.Get("sdp_attention").value_or("")).value_or(false)) b.Take("--attention", "sdpa", "sdp_attention");
  SPARKOPS_TRY(b.OnOff("bnb_4bit_use_double_quant", "--double-quant"));
  if (Bool(f.Get("peft_use_dora").value_or("")).value_or(false)) b.Take("--dora", "on", "peft_use_dora");
  if (Bool(f.Get("gptq").value_or("")).value_or(false)) {
    b.Take("--quant", "gptq4", "gptq");
    b.Assume("gptq: true names no bit width or group size: planned as 4-bit, group size 128");
  }
  return {};
}

/// "torchtune.models.llama3_2.lora_llama3_2_3b" -> method, and "llama-3.2-3b" as a model candidate
/// after the checkpoint directory (family + version digits joined by '.', the size after '-').
Result<void> FromTorchtune(Builder& b) {
  const Flat& f = b.flat();
  const std::string comp = f.Get("model._component_").value_or("");
  std::string builder = comp.substr(comp.rfind('.') + 1);
  std::string method = "full";
  for (std::string p : {"qlora_", "lora_"})
    if (builder.starts_with(p)) {
      method = p.substr(0, p.size() - 1);
      builder.erase(0, p.size());
      break;
    }
  b.Take("--method", method, "model._component_");
  b.Take("--framework", "torchtune", "model._component_");
  b.Model("checkpointer.checkpoint_dir");
  std::string name;
  for (auto part : Split(builder, '_')) {
    const std::string t(part);
    if (name.empty()) {
      const size_t d = t.find_first_of("0123456789");
      name = d == std::string::npos || d == 0 ? t : t.substr(0, d) + "-" + t.substr(d);
    } else {
      name += (t.find_first_not_of("0123456789") == std::string::npos ? "." : "-") + t;
    }
  }
  if (!name.empty()) b.AddModel(name, "model._component_");
  SPARKOPS_TRY(b.Count("model.lora_rank", "--lora-rank"));
  SPARKOPS_TRY(b.Fraction("model.lora_dropout", "--lora-dropout"));
  if (method != "full") {
    std::vector<std::string> t = b.Names("model.lora_attn_modules");
    if (Bool(f.Get("model.apply_lora_to_mlp").value_or("")).value_or(false)) t.insert(t.end(), {"gate", "up", "down"});
    if (Bool(f.Get("model.apply_lora_to_output").value_or("")).value_or(false)) t.push_back("head");
    if (!t.empty()) b.Take("--lora-targets", fmt::format("{}", fmt::join(t, ",")), "model.lora_attn_modules");
    b.Take("--adapter-dtype", "bf16", "torchtune (LoRA parameters in the model dtype)");
    if (Bool(f.Get("model.use_dora").value_or("")).value_or(false)) b.Take("--dora", "on", "model.use_dora");
  }
  auto seq = b.Count("tokenizer.max_seq_len", "--seq");
  if (!seq) return std::unexpected(seq.error());
  if (!*seq) b.Assume("tokenizer.max_seq_len null: batches pad to their longest sample; the plan's --seq is the bound");
  SPARKOPS_TRY(b.Count("batch_size", "--batch"));
  SPARKOPS_TRY(b.Count("gradient_accumulation_steps", "--grad-accum"));
  SPARKOPS_TRY(b.OnOff("enable_activation_checkpointing", "--grad-ckpt"));
  if (auto d = f.Get("dtype")) {
    const std::string l = ToLower(*d);
    if (l == "bf16" || l == "fp32") b.Take("--precision", l, "dtype");
  }
  const std::string opt = f.Get("optimizer._component_").value_or("");
  if (opt.ends_with("PagedAdamW8bit")) b.Take("--optimizer", "paged_adamw8bit", "optimizer._component_");
  else if (opt.ends_with("AdamW8bit")) b.Take("--optimizer", "adamw8bit", "optimizer._component_");
  else if (opt.ends_with("AdamW"))
    b.Take("--optimizer", Bool(f.Get("optimizer.fused").value_or("")).value_or(false) ? "adamw_fused" : "adamw",
           "optimizer._component_");
  if (Bool(f.Get("optimizer_in_bwd").value_or("")).value_or(false))
    b.Assume("optimizer_in_bwd: True steps each parameter during backward; not modelled (the plan is an upper bound)");
  if (const std::string loss = f.Get("loss._component_").value_or("");
      loss.find("Chunked") != std::string::npos || loss.find("LinearCrossEntropy") != std::string::npos)
    b.Take("--loss", "chunked", "loss._component_");
  if (Bool(f.Get("compile").value_or("")).value_or(false)) b.Take("--compile", "", "compile");
  return {};
}

/// LitGPT finetune YAML (config_hub/finetune/*/lora.yaml): checkpoint_dir, precision, quantize,
/// lora_* switches, train.micro_batch_size / max_seq_length, optimizer.
Result<void> FromLitgpt(Builder& b) {
  const Flat& f = b.flat();
  b.Take("--framework", "litgpt", "checkpoint_dir (LitGPT)");
  if (auto dir = f.Get("checkpoint_dir"); dir && *dir != "null") {
    std::string d(Trim(*dir));
    b.AddModel(d, "checkpoint_dir");
    if (d.starts_with("checkpoints/")) b.AddModel(d.substr(12), "checkpoint_dir");  // the HF id it was downloaded as
  }
  const std::string q = ToLower(f.Get("quantize").value_or(""));
  const bool lora = f.Has("lora_r");
  if (q.starts_with("bnb.nf4")) {
    b.Take("--method", "qlora", "quantize");
    b.Take("--double-quant", q == "bnb.nf4-dq" ? "on" : "off", "quantize");
  } else if (!q.empty() && q != "null") {
    return InputError(fmt::format("{}: field 'quantize': '{}' is not bnb.nf4 or bnb.nf4-dq", b.file(), q));
  } else {
    b.Take("--method", lora ? "lora" : "full", lora ? "lora_r" : "lora_r (absent)");
  }
  SPARKOPS_TRY(b.Count("lora_r", "--lora-rank"));
  SPARKOPS_TRY(b.Fraction("lora_dropout", "--lora-dropout"));
  if (lora) {
    std::vector<std::string> t;
    for (auto [key, names] : {std::pair{"lora_query", "q"},
                              {"lora_key", "k"},
                              {"lora_value", "v"},
                              {"lora_projection", "o"},
                              {"lora_mlp", "gate,up,down"},
                              {"lora_head", "head"}})
      if (Bool(f.Get(key).value_or("")).value_or(false)) t.emplace_back(names);
    if (!t.empty()) b.Take("--lora-targets", fmt::format("{}", fmt::join(t, ",")), "lora_query..lora_head");
  }
  const std::string prec = ToLower(f.Get("precision").value_or(""));
  if (prec == "bf16-true") b.Take("--precision", "bf16", "precision");
  else if (prec == "bf16-mixed") b.Take("--precision", "mixed", "precision");
  else if (prec == "32-true") b.Take("--precision", "fp32", "precision");
  else if (prec.empty() || prec == "null") b.Assume("precision not set: LitGPT picks bf16-true on a GPU with bf16");
  SPARKOPS_TRY(b.Count("train.micro_batch_size", "--batch"));
  // litgpt/args.py TrainArgs.gradient_accumulation_iters: global_batch_size // (devices * micro_batch_size)
  if (auto g = f.Get("train.global_batch_size"), m = f.Get("train.micro_batch_size"); g && m) {
    auto gn = ParseInt(Trim(*g)), mn = ParseInt(Trim(*m));
    if (gn && mn && *mn >= 1 && *gn >= *mn && *gn <= (1 << 24))
      b.Take("--grad-accum", std::to_string(*gn / *mn),
             "train.global_batch_size / train.micro_batch_size (one device)");
  }
  auto seq = b.Count("train.max_seq_length", "--seq");
  if (!seq) return std::unexpected(seq.error());
  if (!*seq) b.Assume("train.max_seq_length not set: LitGPT pads to the longest sample; the plan's --seq is the bound");
  b.Take("--grad-ckpt", "off", "LitGPT finetune (no activation checkpointing)");
  std::string opt = f.Get("optimizer").value_or(f.Get("optimizer.class_path").value_or(""));
  if (opt.find("PagedAdamW8bit") != std::string::npos || opt.find("PagedAdamW") != std::string::npos)
    b.Take("--optimizer", "paged_adamw8bit", "optimizer");
  else if (opt.find("AdamW8bit") != std::string::npos) b.Take("--optimizer", "adamw8bit", "optimizer");
  else if (opt.find("AdamW") != std::string::npos) b.Take("--optimizer", "adamw", "optimizer");
  return {};
}

}  // namespace

Result<TrainConfig> ParseTrainConfig(std::string_view text, const std::string& file) {
  if (text.size() > kMaxTrainConfigBytes) return InputError(fmt::format("{}: larger than 1 MiB", file));
  if (auto r = PreScan(text, file); !r) return std::unexpected(r.error());
  YAML::Node root;
  Flat f;
  try {
    root = YAML::Load(std::string(text));  // JSON is read as YAML's flow style
    if (!root.IsMap()) return InputError(fmt::format("{}: not a mapping of settings", file));
    size_t nodes = 0;
    if (auto r = Walk(root, "", 0, nodes, f, file); !r) return std::unexpected(r.error());
  } catch (const YAML::Exception& e) {
    return InputError(fmt::format("{}: parse error at line {}: {}", file, e.mark.line + 1, e.msg));
  }
  TrainConfig c;
  Builder b(f, file, c);
  Result<void> r;
  if (f.Get("model._component_").value_or("").starts_with("torchtune.")) {
    c.format = "torchtune recipe";
    r = FromTorchtune(b);
  } else if (f.Has("checkpoint_dir") && (f.Has("train.micro_batch_size") || f.Has("precision") || f.Has("lora_r"))) {
    c.format = "LitGPT finetune";
    r = FromLitgpt(b);
  } else if (f.Has("base_model")) {
    c.format = "axolotl";
    r = FromAxolotl(b);
  } else if (f.Has("per_device_train_batch_size") || f.Has("model_name_or_path") || f.Has("output_dir") ||
             f.Has("max_seq_length") || f.Has("max_length")) {
    c.format = "HF TrainingArguments/TRL";
    r = FromHf(b);
  } else if (f.Has("compute_environment") && f.Has("distributed_type")) {
    c.format = "accelerate config";
    r = detail::FromAccelerate(b);
  } else {
    return InputError(fmt::format(
        "{}: not a training config sparkops reads (expected HF TrainingArguments/TRL SFTConfig, axolotl, torchtune "
        "recipe, LitGPT finetune or accelerate config keys)",
        file));
  }
  if (!r) return std::unexpected(r.error());
  if (c.models.empty()) c.assumed.push_back("the file names no model: give MODEL");
  return c;
}

}  // namespace sparkops::memory

namespace sparkops::memory {

Result<TrainConfig> ReadTrainConfig(const std::string& path) {
  uint64_t size = 0;
  auto fd = OpenRegularFile(path, &size);
  if (!fd) return std::unexpected(fd.error());
  if (size > kMaxTrainConfigBytes) {
    ::close(*fd);
    return InputError(fmt::format("{}: larger than 1 MiB", path));
  }
  std::string text(kMaxTrainConfigBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(*fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  ::close(*fd);
  text.resize(got);
  return ParseTrainConfig(text, path);
}

}  // namespace sparkops::memory
