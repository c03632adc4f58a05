// Config files for G10: accelerate / training YAML, DeepSpeed JSON, launch scripts.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <new>
#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/strings.h"
#include "workloads/parallelism.h"

namespace sparkops {

namespace {

constexpr int kMaxDepth = 32;

/// What flattening one YAML file may cost. yaml-cpp shares an aliased node, so a 1 KB file of
/// aliases of aliases loads small but names 10^9 paths; every visit of a key counts (an alias
/// counts each time it is reached), and so do the bytes of each path and value kept.
struct FlattenBudget {
  size_t nodes = 0;
  size_t bytes = 0;
  bool exceeded = false;
};

/// Every scalar of a YAML tree by its key (last wins; depth-bounded). "parent.key" is also kept.
/// Stops, with `budget.exceeded`, past kMaxYamlNodes keys or kMaxYamlFlatBytes of paths and values.
void Flatten(const YAML::Node& n, const std::string& prefix, int depth, std::map<std::string, std::string>& out,
             std::map<std::string, std::string>& full, FlattenBudget& budget) {
  if (depth > kMaxDepth || !n.IsMap()) return;
  for (const auto& kv : n) {
    if (budget.exceeded) return;
    if (++budget.nodes > kMaxYamlNodes) {
      budget.exceeded = true;
      return;
    }
    if (!kv.first.IsScalar()) continue;
    const std::string& key = kv.first.Scalar();
    const std::string& value = kv.second.IsScalar() ? kv.second.Scalar() : std::string();
    budget.bytes += prefix.size() + 1 + key.size() + value.size();
    if (budget.bytes > kMaxYamlFlatBytes) {
      budget.exceeded = true;
      return;
    }
    std::string path = prefix.empty() ? key : prefix + "." + key;
    if (kv.second.IsScalar()) {
      out[key] = value;
      full[path] = value;
    } else if (kv.second.IsMap()) {
      out[key] = "{}";
      Flatten(kv.second, path, depth + 1, out, full, budget);
    }
  }
}

/// An integer field: absent -> nullopt; "auto"/null -> nullopt; else it must be a positive integer.
Result<std::optional<int>> IntField(const std::map<std::string, std::string>& keys, const std::string& key,
                                    const std::string& file) {
  auto it = keys.find(key);
  if (it == keys.end()) return std::optional<int>();
  std::string v = ToLower(Trim(it->second));
  if (v == "auto" || v == "null" || v == "~" || v.empty()) return std::optional<int>();
  auto n = ParseInt(v);
  if (!n || *n < 0 || *n > 1000000)
    return InputError(fmt::format("{}: field {}: expected a whole number, got '{}'", file, key, it->second));
  return std::optional<int>(static_cast<int>(*n));
}

}  // namespace

Result<ParallelLayout> ParseParallelYaml(std::string_view text, const std::string& name) {
  YAML::Node root;
  std::map<std::string, std::string> keys, full;
  FlattenBudget budget;
  try {
    root = YAML::Load(std::string(text));
    if (!root.IsMap()) return InputError(name + ": not a YAML mapping of settings");
    Flatten(root, "", 0, keys, full, budget);
  } catch (const YAML::Exception& e) {
    return InputError(fmt::format("{}: YAML parse error at line {}: {}", name, e.mark.line + 1, e.msg));
  } catch (const std::bad_alloc&) {
    return InputError(fmt::format("{}: too large to read as a YAML settings file ({} bytes)", name, text.size()));
  }
  if (budget.exceeded)
    return InputError(
        fmt::format("{}: more than {} YAML keys or {} MiB of key paths once aliases are expanded; not a settings file",
                    name, kMaxYamlNodes, kMaxYamlFlatBytes >> 20));
  ParallelLayout l;
  l.source = name;
  const bool accelerate = keys.count("distributed_type") || keys.count("compute_environment");
  const bool vllm = keys.count("tensor-parallel-size") || keys.count("gpu-memory-utilization");
  l.what = accelerate ? "accelerate config" : vllm ? "vLLM config" : "training config";
  l.training = !vllm;

  struct Slot {
    std::optional<int>* slot;
    std::vector<std::string> names;
  };
  const std::vector<Slot> slots = {
      {&l.nodes, {"num_machines", "num_nodes", "nnodes"}},
      {&l.tp,
       {"megatron_lm_tp_degree", "parallelism_config_tp_size", "tensor_parallel_size", "tensor_parallel_dim",
        "tensor_model_parallel_size", "tensor-parallel-size"}},
      {&l.pp,
       {"megatron_lm_pp_degree", "pipeline_model_parallel_size", "pipeline_parallel_size", "pipeline-parallel-size"}},
  };
  for (const auto& s : slots)
    for (const auto& k : s.names) {
      auto v = IntField(keys, k, name);
      if (!v) return std::unexpected(v.error());
      if (*v && !*s.slot) {
        *s.slot = **v;
        l.evidence.push_back(fmt::format("{}: {}", k, **v));
      }
    }
  // Data-parallel flavour.
  if (auto dt = keys.find("distributed_type"); dt != keys.end()) {
    l.evidence.push_back("distributed_type: " + dt->second);
    if (dt->second == "FSDP") l.data_parallel = "FSDP";
    else if (dt->second == "DEEPSPEED") l.data_parallel = "DeepSpeed";
    else if (dt->second == "MULTI_GPU") l.data_parallel = "DDP";
    else if (dt->second == "MEGATRON_LM") l.data_parallel = "Megatron-LM";
  }
  if (l.data_parallel.empty() && (keys.count("fsdp_config") || keys.count("fsdp_version"))) l.data_parallel = "FSDP";
  if (auto z = keys.find("zero_stage"); z != keys.end()) {
    l.data_parallel = "DeepSpeed ZeRO-" + z->second;
    l.evidence.push_back("zero_stage: " + z->second);
  } else if (auto ds = keys.find("deepspeed"); ds != keys.end() && ds->second != "{}") {
    l.data_parallel = "DeepSpeed";
    l.evidence.push_back("deepspeed: " + ds->second + " (pass it with --config to check it)");
  }
  auto shard = IntField(keys, "dp_shard_size", name);
  if (!shard) return std::unexpected(shard.error());
  if (*shard && **shard > 1 && l.data_parallel.empty()) l.data_parallel = "FSDP";
  return l;
}

Result<ParallelLayout> ParseDeepSpeedJson(std::string_view text, const std::string& name) {
  auto parsed = ParseJson(text);  // also refuses a number beyond double (1E400)
  if (!parsed) return InputError(fmt::format("{}: {}", name, parsed.error().message));
  nlohmann::json j = std::move(*parsed);
  if (!j.is_object()) return InputError(name + ": not a JSON object of DeepSpeed settings");
  ParallelLayout l;
  l.source = name;
  l.what = "DeepSpeed config";
  auto int_at = [&](const nlohmann::json& obj, const char* key,
                    const std::string& field) -> Result<std::optional<int>> {
    if (!obj.is_object() || !obj.contains(key)) return std::optional<int>();
    const auto& v = obj[key];
    if (v.is_string() && v.get<std::string>() == "auto") return std::optional<int>();
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000)
      return InputError(fmt::format("{}: field {}: expected a whole number, got {}", name, field, v.dump()));
    return std::optional<int>(static_cast<int>(v.get<int64_t>()));
  };
  if (j.contains("zero_optimization")) {
    auto st = int_at(j["zero_optimization"], "stage", "zero_optimization.stage");
    if (!st) return std::unexpected(st.error());
    if (*st) {
      l.data_parallel = fmt::format("DeepSpeed ZeRO-{}", **st);
      l.evidence.push_back(fmt::format("zero_optimization.stage: {}", **st));
    }
  }
  if (j.contains("tensor_parallel")) {
    for (const char* k : {"autotp_size", "tp_size"}) {
      auto v = int_at(j["tensor_parallel"], k, std::string("tensor_parallel.") + k);
      if (!v) return std::unexpected(v.error());
      if (*v && !l.tp) {
        l.tp = **v;
        l.evidence.push_back(fmt::format("tensor_parallel.{}: {}", k, **v));
      }
    }
  }
  auto mp = int_at(j, "mp_size", "mp_size");
  if (!mp) return std::unexpected(mp.error());
  if (*mp && !l.tp) {
    l.tp = **mp;
    l.training = false;  // mp_size is deepspeed.init_inference's
    l.what = "DeepSpeed inference config";
    l.evidence.push_back(fmt::format("mp_size: {}", **mp));
  }
  if (l.data_parallel.empty() && !l.tp) l.data_parallel = "DeepSpeed";
  return l;
}

std::vector<ParallelLayout> ParseLaunchScript(std::string_view text, const std::string& name) {
  // Join continuation lines.
  std::vector<std::string> lines;
  std::vector<int> starts;  // physical line number where each joined line starts
  std::string cur;
  int physical = 0, start = 1;
  for (auto raw : SplitLines(text)) {
    ++physical;
    if (cur.empty()) start = physical;
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.back() == '\\') {
      cur += std::string(line.substr(0, line.size() - 1)) + " ";
      continue;
    }
    cur += std::string(line);
    lines.push_back(cur);
    starts.push_back(start);
    cur.clear();
  }
  if (!cur.empty()) {
    lines.push_back(cur);
    starts.push_back(start);
  }

  std::map<std::string, std::string> env;
  std::map<std::string, std::pair<std::string, int>> comm;  // exported NCCL/UCX variables: value, line
  auto settings = [&name](const std::map<std::string, std::pair<std::string, int>>& m) {
    std::vector<EnvSetting> v;
    for (const auto& [k, val] : m) v.push_back({k, val.first, fmt::format("{} line {}", name, val.second)});
    return v;
  };
  std::vector<ParallelLayout> out;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string& line = lines[li];
    const int lineno = starts[li];
    // Shell words: blanks split, quotes group, '#' at a word start ends the line.
    std::vector<std::string> words;
    std::string w;
    bool in_word = false;
    char quote = 0;
    for (char c : line) {
      if (quote) {
        if (c == quote) quote = 0;
        else w += c;
        continue;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        in_word = true;
      } else if (c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|') {
        if (in_word) words.push_back(w);
        w.clear();
        in_word = false;
      } else if (c == '#' && !in_word) {
        break;
      } else {
        w += c;
        in_word = true;
      }
    }
    if (in_word) words.push_back(w);
    // Expand $VAR / ${VAR} from what the script exported.
    for (auto& word : words) {
      if (word.size() > 1 && word[0] == '$') {
        std::string var = word.substr(1);
        if (var.size() > 2 && var.front() == '{' && var.back() == '}') var = var.substr(1, var.size() - 2);
        if (auto it = env.find(var); it != env.end()) word = it->second;
      } else if (size_t eq = word.find("=$"); eq != std::string::npos && StartsWith(word, "--")) {
        std::string var = word.substr(eq + 2);
        if (var.size() > 2 && var.front() == '{' && var.back() == '}') var = var.substr(1, var.size() - 2);
        if (auto it = env.find(var); it != env.end()) word = word.substr(0, eq + 1) + it->second;
      }
    }
    size_t i = 0;
    std::map<std::string, std::string> cmd_env = env;
    auto cmd_comm = comm;
    bool exported = false;
    while (i < words.size()) {
      const std::string& word = words[i];
      if (word == "export" || word == "env" || word == "exec" || word == "nohup" || word == "sudo" || word == "srun") {
        exported |= word == "export";
        ++i;
        continue;
      }
      size_t eq = word.find('=');
      if (eq != std::string::npos && eq > 0 && !StartsWith(word, "-") && word.find('/') > eq) {
        std::string key = word.substr(0, eq), value = word.substr(eq + 1);
        cmd_env[key] = value;
        if (IsCommVar(key)) cmd_comm[key] = {value, lineno};
        if (exported || i + 1 == words.size()) {
          env[key] = value;
          if (IsCommVar(key)) comm[key] = {value, lineno};
        }
        ++i;
        continue;
      }
      break;
    }
    if (i >= words.size()) continue;
    std::vector<std::string> argv(words.begin() + static_cast<long>(i), words.end());
    if (auto l = LayoutFromArgv(argv, cmd_env, fmt::format("{} line {}", name, lineno))) {
      l->comm_env = settings(cmd_comm);
      out.push_back(std::move(*l));
    }
  }
  if (out.empty())
    if (auto l = LayoutFromEnv(env, name)) {
      l->comm_env = settings(comm);
      out.push_back(std::move(*l));
    }
  return out;
}

Result<std::vector<ParallelLayout>> ParseParallelConfig(const std::string& name, std::string_view text) {
  std::string lower = ToLower(name);
  std::string_view body = Trim(text);
  if (EndsWith(lower, ".json") || (!body.empty() && body[0] == '{')) {
    auto l = ParseDeepSpeedJson(text, name);
    if (!l) return std::unexpected(l.error());
    return std::vector<ParallelLayout>{*l};
  }
  if (EndsWith(lower, ".yaml") || EndsWith(lower, ".yml")) {
    auto l = ParseParallelYaml(text, name);
    if (!l) return std::unexpected(l.error());
    return std::vector<ParallelLayout>{*l};
  }
  auto ls = ParseLaunchScript(text, name);
  if (ls.empty())
    return InputError(name +
                      ": no launcher found (torchrun, accelerate launch, deepspeed, tune run, vllm serve, "
                      "sglang, text-generation-launcher) and no launcher variables");
  return ls;
}

}  // namespace sparkops
