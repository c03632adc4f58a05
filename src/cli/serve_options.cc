#include "cli/serve_options.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace sparkops {

using namespace memory;

namespace {

constexpr NumberRange kLenRange{1, 1 << 24, false, true, "tokens"};
constexpr NumberRange kSeqsRange{1, 65536, false, true, ""};

}  // namespace

void AddServeFlags(CLI::App& app, ServeFlags& f) {
  app.add_option("--serve", f.serve,
                 "size an inference server for this model instead of a fine-tune: weights, KV cache, profile peak, "
                 "CUDA graphs, and the engine flag that fits the budget");
  app.add_option("--beside", f.beside,
                 "a server running beside the trainer: ENGINE:MODEL[,max-model-len=N][,max-num-seqs=N][,kv-dtype=D]"
                 "[,weights-dtype=D]; both against one budget");
  app.add_option("--engine", f.engine, "--serve: vllm|sglang|llamacpp (default vllm)");
  AddNumber(app, "--max-model-len", f.max_model_len, kLenRange,
            "--serve: context length per sequence (default: the model's max_position_embeddings; llama.cpp 4096)");
  AddNumber(app, "--max-num-seqs", f.max_num_seqs, kSeqsRange,
            "--serve: sequences of --max-model-len the KV cache holds at once (default 1)");
  app.add_option("--kv-dtype", f.kv_dtype, "--serve: KV cache type auto|fp8|bf16|fp16 (default auto: 16-bit)");
  app.add_option("--weights-dtype", f.weights_dtype,
                 "--serve: bf16|fp16|fp8|int8|int4|nvfp4 (vLLM/SGLang, default bf16) or "
                 "f16|q8_0|q6_k|q5_k_m|q4_k_m|q4_0 (llama.cpp GGUF, default q4_k_m)");
  for (const char* name : {"--engine", "--max-model-len", "--max-num-seqs", "--kv-dtype", "--weights-dtype"})
    f.given[name] = app.get_option(name);
}

Result<ServeSpec> ParseServeSpec(std::string_view spec) {
  const std::string s(spec);
  auto bad = [&](const std::string& why) { return InputError(fmt::format("--beside '{}': {}", s, why)); };
  const auto colon = s.find(':');
  if (colon == std::string::npos) return bad("expected ENGINE:MODEL[,key=value...]");
  auto engine = ParseEngine(s.substr(0, colon), "--beside engine");
  if (!engine) return bad(fmt::format("engine '{}': expected vllm|sglang|llamacpp", s.substr(0, colon)));
  ServeSpec out;
  out.options.engine = *engine;
  auto parts = Split(std::string_view(s).substr(colon + 1), ',');
  out.model = std::string(Trim(parts.empty() ? std::string_view() : parts[0]));
  if (out.model.empty()) return bad("no MODEL after the engine");
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string kv(Trim(parts[i]));
    const auto eq = kv.find('=');
    if (eq == std::string::npos) return bad(fmt::format("'{}': expected key=value", kv));
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key == "max-model-len" || key == "max-num-seqs") {
      const bool len = key == "max-model-len";
      auto n = ParseNumberFlag("--beside " + key, value, len ? kLenRange : kSeqsRange);
      if (!n) return std::unexpected(n.error());
      if (len) out.options.max_model_len = uint64_t(*n);
      else out.options.max_num_seqs = uint64_t(*n);
    } else if (key == "kv-dtype") {
      auto d = ParseKvDtype(value, "--beside kv-dtype");
      if (!d) return std::unexpected(d.error());
      out.options.kv_dtype = *d;
    } else if (key == "weights-dtype") {
      auto w = ParseWeightsDtype(value, *engine, "--beside weights-dtype");
      if (!w) return std::unexpected(w.error());
      out.options.weights_dtype = value;
    } else {
      return bad(fmt::format("unknown key '{}' (max-model-len, max-num-seqs, kv-dtype, weights-dtype)", key));
    }
  }
  return out;
}

Result<ServeSpec> ServeSpecFromFlags(const ServeFlags& f) {
  ServeSpec out;
  out.model = f.serve;
  auto engine = ParseEngine(f.engine);
  if (!engine) return std::unexpected(engine.error());
  out.options.engine = *engine;
  if (f.max_model_len > 0) out.options.max_model_len = uint64_t(f.max_model_len);
  out.options.max_num_seqs = uint64_t(f.max_num_seqs);  // range-checked by its flag
  auto kv = ParseKvDtype(f.kv_dtype);
  if (!kv) return std::unexpected(kv.error());
  out.options.kv_dtype = *kv;
  auto w = ParseWeightsDtype(f.weights_dtype, *engine);
  if (!w) return std::unexpected(w.error());
  out.options.weights_dtype = f.weights_dtype;
  return out;
}

}  // namespace sparkops
