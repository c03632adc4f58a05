#include "workloads/caps.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "host/meminfo.h"
#include "workloads/argv.h"

namespace sparkops {

namespace {

std::string Gib(uint64_t b) { return fmt::format("{:.1f} GiB", ToGiB(b)); }

std::optional<std::string> EnvOf(const Workload& w, const std::string& k) {
  auto it = w.env.find(k);
  if (it == w.env.end()) return std::nullopt;
  return it->second;
}

/// A fraction flag/env value: 0 < f <= 1, else an explanatory note and nullopt.
std::optional<double> Fraction(const std::string& raw, const std::string& what, Workload& w) {
  auto f = ParseDouble(raw);
  if (!f || *f <= 0 || *f > 1) {
    w.notes.push_back(fmt::format("{} '{}' is not a fraction in (0, 1]: ignored", what, raw));
    return std::nullopt;
  }
  return *f;
}

void FractionCap(Workload& w, double f, const std::string& source, bool is_default, std::optional<uint64_t> total) {
  w.cap.fraction = f;
  w.cap.is_default = is_default;
  if (total) w.cap.bytes = static_cast<uint64_t>(f * static_cast<double>(*total));
  w.cap.text = is_default ? fmt::format("default {:.2f}", f) : fmt::format("{:.2f} ({})", f, source);
}

void VllmCap(Workload& w, std::optional<uint64_t> total) {
  auto kv = FlagValue(w.argv, {"--kv-cache-memory-bytes"});
  auto gmu = FlagValue(w.argv, {"--gpu-memory-utilization"});
  if (kv) {
    if (auto b = ParseByteSize(*kv)) {
      w.cap.bytes = *b;
      w.cap.text = fmt::format("KV {} (--kv-cache-memory-bytes)", Gib(*b));
      w.notes.push_back("--kv-cache-memory-bytes sizes the KV cache only: the weights come on top");
      if (gmu)
        w.notes.push_back(
            fmt::format("--gpu-memory-utilization {} is ignored when --kv-cache-memory-bytes is set", *gmu));
      return;
    }
    w.notes.push_back(fmt::format("--kv-cache-memory-bytes '{}' is not a byte size: ignored", *kv));
  }
  if (gmu)
    if (auto f = Fraction(*gmu, "--gpu-memory-utilization", w))
      return FractionCap(w, *f, "--gpu-memory-utilization", false, total);
  FractionCap(w, kVllmDefaultFraction, "", true, total);
  w.notes.push_back("no --gpu-memory-utilization: vLLM's default 0.92 per instance applies (0.9 in older releases)");
  if (FlagValue(w.argv, {"--config"}))
    w.notes.push_back("a --config YAML may set gpu-memory-utilization: not read, the default is assumed");
}

void SglangCap(Workload& w, std::optional<uint64_t> total) {
  if (auto v = FlagValue(w.argv, {"--mem-fraction-static"}))
    if (auto f = Fraction(*v, "--mem-fraction-static", w))
      return FractionCap(w, *f, "--mem-fraction-static", false, total);
  w.cap.is_default = true;
  w.cap.text = "default: auto fraction";
  w.notes.push_back("no --mem-fraction-static: SGLang picks the fraction itself from the GPU's memory size");
  if (auto t = FlagValue(w.argv, {"--max-total-tokens"}))
    w.notes.push_back("--max-total-tokens " + *t + " bounds the KV pool in tokens");
}

void TgiCap(Workload& w, std::optional<uint64_t> total) {
  std::optional<std::string> raw = FlagValue(w.argv, {"--cuda-memory-fraction"});
  std::string source = "--cuda-memory-fraction";
  if (!raw) {
    raw = EnvOf(w, "CUDA_MEMORY_FRACTION");
    source = "CUDA_MEMORY_FRACTION";
  }
  if (raw)
    if (auto f = Fraction(*raw, source, w)) return FractionCap(w, *f, source, false, total);
  FractionCap(w, kTgiDefaultFraction, "", true, total);
  w.notes.push_back("no --cuda-memory-fraction: TGI's default 1.0 (all visible memory) applies");
}

void OllamaCap(Workload& w, const std::vector<const ProcessInfo*>& members) {
  for (const char* k : {"OLLAMA_MAX_LOADED_MODELS", "OLLAMA_NUM_PARALLEL", "OLLAMA_KEEP_ALIVE", "OLLAMA_CONTEXT_LENGTH",
                        "OLLAMA_GPU_OVERHEAD", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION"})
    if (auto v = EnvOf(w, k)) w.notes.push_back(fmt::format("{}={}", k, *v));
  if (auto ka = EnvOf(w, "OLLAMA_KEEP_ALIVE"); ka && StartsWith(Trim(*ka), "-"))
    w.notes.push_back("a negative OLLAMA_KEEP_ALIVE keeps loaded models resident until the server stops");
  size_t runners = 0;
  for (const ProcessInfo* p : members) {
    Launch l = ParseLaunch(p->argv);
    bool runner = (l.program == "ollama" && l.next < p->argv.size() && p->argv[l.next] == "runner") ||
                  l.program == "ollama_llama_server";
    if (!runner) continue;
    ++runners;
    std::string line = fmt::format("runner pid {}:", p->pid);
    for (auto flag : {"--ctx-size", "--parallel", "--n-gpu-layers"})
      if (auto v = FlagValue(p->argv, {flag})) line += fmt::format(" {} {}", flag, *v);
    w.notes.push_back(line);
  }
  w.cap.text = runners ? "none (sized by loaded models)" : "none";
  if (runners == 0 && w.main.role == "server") {
    w.verdict = Verdict::kIdle;
    w.reason = "no runner child: no model loaded, no model memory held";
  }
}

void LlamaCppCap(Workload& w, std::optional<uint64_t> total) {
  std::optional<std::string> ctx = FlagValue(w.argv, {"-c", "--ctx-size"});
  if (!ctx) ctx = EnvOf(w, "LLAMA_ARG_CTX_SIZE");
  std::optional<std::string> ngl = FlagValue(w.argv, {"-ngl", "--gpu-layers", "--n-gpu-layers"});
  if (!ngl) ngl = EnvOf(w, "LLAMA_ARG_N_GPU_LAYERS");
  if (ngl) w.notes.push_back(fmt::format("-ngl {}: layers offloaded to the GPU", *ngl));
  auto c = ctx ? ParseUint(*ctx) : std::nullopt;
  if (!c || *c == 0) {
    w.cap.text = ctx ? "none (-c 0)" : "none (no -c)";
    w.notes.push_back("without a non-zero -c the KV cache is sized for the model's trained context (-c 0)");
    return;
  }
  // Fixed size: the model plus KV for -c tokens. Its size is what it holds now.
  w.cap.text = fmt::format("fixed (-c {})", *c);
  auto held = w.PoolBytes();
  if (held) {
    w.cap.bytes = *held;
    w.notes.push_back(fmt::format("fixed footprint: model + KV for {} tokens, about {} now", *c, Gib(*held)));
  } else {
    w.notes.push_back("fixed footprint, but its size is not reported: cannot show it leaves half the pool");
  }
  (void)total;
}

void TrainerCap(Workload& w, const std::vector<const ProcessInfo*>& members) {
  w.cap.text = "none";
  w.notes.push_back("trainers have no cap flag; only torch.cuda.set_per_process_memory_fraction() in code");
  for (const ProcessInfo* p : members) {
    for (const char* k : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING"})
      if (auto it = p->env.find(k); it != p->env.end()) {
        std::string note = fmt::format("{}={} (allocator setting, not a cap)", k, it->second);
        if (std::find(w.notes.begin(), w.notes.end(), note) == w.notes.end()) w.notes.push_back(note);
      }
  }
}

}  // namespace

Verdict JudgeCap(const Cap& cap, std::optional<uint64_t> mem_total, std::string& reason) {
  if (cap.fraction) {
    if (*cap.fraction <= kCappedFraction + 1e-9) {
      reason = fmt::format("fraction {:.2f} <= 0.5 leaves at least half the pool", *cap.fraction);
      return Verdict::kCapped;
    }
    reason =
        fmt::format("{} {:.2f} > 0.5 of the pool", cap.is_default ? "no cap flag: default" : "fraction", *cap.fraction);
    return Verdict::kNearCapacity;
  }
  if (cap.bytes) {
    if (!mem_total) {
      reason = fmt::format("{} cap, MemTotal unknown: cannot show it leaves half the pool", Gib(*cap.bytes));
      return Verdict::kNearCapacity;
    }
    if (*cap.bytes <= *mem_total / 2) {
      reason = fmt::format("{} <= half of MemTotal ({})", Gib(*cap.bytes), Gib(*mem_total / 2));
      return Verdict::kCapped;
    }
    reason = fmt::format("{} > half of MemTotal ({})", Gib(*cap.bytes), Gib(*mem_total / 2));
    return Verdict::kNearCapacity;
  }
  if (cap.is_default) {
    reason = "no cap flag: the server sizes its pool from the whole GPU";
    return Verdict::kNearCapacity;
  }
  reason = "no cap mechanism in use";
  return Verdict::kUncapped;
}

void SetCapAndVerdict(Workload& w, const std::vector<const ProcessInfo*>& members, std::optional<uint64_t> mem_total) {
  w.cap = Cap{};
  switch (w.kind) {
    case WorkloadKind::kVllm: VllmCap(w, mem_total); break;
    case WorkloadKind::kSglang: SglangCap(w, mem_total); break;
    case WorkloadKind::kTgi: TgiCap(w, mem_total); break;
    case WorkloadKind::kOllama:
      OllamaCap(w, members);
      if (w.verdict == Verdict::kIdle) return;
      break;
    case WorkloadKind::kLlamaCpp: LlamaCppCap(w, mem_total); break;
    case WorkloadKind::kOtherGpu:
      w.cap.text = "unknown";
      w.notes.push_back("not a recognised server or trainer: no cap can be read from its command line");
      break;
    default: TrainerCap(w, members); break;
  }
  w.verdict = JudgeCap(w.cap, mem_total, w.reason);
  if (w.kind == WorkloadKind::kLlamaCpp && !w.cap.bytes && w.verdict == Verdict::kUncapped &&
      w.cap.text.starts_with("fixed")) {
    w.verdict = Verdict::kNearCapacity;
    w.reason = "fixed footprint of unknown size";
  }
}

}  // namespace sparkops
