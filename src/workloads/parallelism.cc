// Command lines, environment and the G10 rule (docs/checks.md, G10).
#include "workloads/parallelism.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "host/proctable.h"
#include "workloads/argv.h"

namespace sparkops {

namespace {

/// A degree or count: a positive integer; torchrun's "MIN:MAX" gives MAX. Else nullopt.
std::optional<int> Count(std::string_view v) {
  size_t colon = v.find(':');
  if (colon != std::string_view::npos) v = v.substr(colon + 1);
  auto n = ParseInt(v);
  if (!n || *n < 1 || *n > 1000000) return std::nullopt;
  return static_cast<int>(*n);
}

void Take(std::optional<int>& slot, const std::optional<std::string>& raw, const std::string& label,
          ParallelLayout& l) {
  if (!raw) return;
  if (auto n = Count(*raw)) {
    slot = *n;
    l.evidence.push_back(fmt::format("{}{}{}", label, EndsWith(label, "=") ? "" : " ", *raw));
  } else {
    l.evidence.push_back(fmt::format("{} '{}' not a number (unresolved?): ignored", label, *raw));
  }
}

std::optional<std::string> Env(const std::map<std::string, std::string>& env, const std::string& k) {
  auto it = env.find(k);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

bool Truthy(const std::optional<std::string>& v) {
  if (!v) return false;
  std::string s = ToLower(*v);
  return s == "1" || s == "true" || s == "yes";
}

/// Launcher variables shared by ranks and shells.
void ApplyEnv(const std::map<std::string, std::string>& env, ParallelLayout& l) {
  auto ws = Env(env, "WORLD_SIZE"), lws = Env(env, "LOCAL_WORLD_SIZE");
  if (ws && lws) {
    auto w = Count(*ws), lw = Count(*lws);
    if (w && lw && !l.nodes) {
      l.nodes = (*w + *lw - 1) / *lw;
      l.evidence.push_back(fmt::format("WORLD_SIZE={} LOCAL_WORLD_SIZE={}", *ws, *lws));
    }
  }
  if (!l.nodes) Take(l.nodes, Env(env, "NNODES"), "NNODES=", l);
  if (!l.tp) Take(l.tp, Env(env, "PARALLELISM_CONFIG_TP_SIZE"), "PARALLELISM_CONFIG_TP_SIZE=", l);
  if (Truthy(Env(env, "ACCELERATE_USE_FSDP"))) {
    l.data_parallel = "FSDP";
    l.evidence.push_back("ACCELERATE_USE_FSDP=true");
  } else if (Truthy(Env(env, "ACCELERATE_USE_DEEPSPEED"))) {
    l.data_parallel = "DeepSpeed";
    l.evidence.push_back("ACCELERATE_USE_DEEPSPEED=true");
  }
}

/// Megatron/NeMo flags and torchtune overrides in a training script's arguments.
void ApplyScriptArgs(const std::vector<std::string>& argv, size_t from, ParallelLayout& l) {
  if (!l.tp) Take(l.tp, FlagValue(argv, {"--tensor-model-parallel-size"}, from), "--tensor-model-parallel-size", l);
  if (!l.pp) Take(l.pp, FlagValue(argv, {"--pipeline-model-parallel-size"}, from), "--pipeline-model-parallel-size", l);
  if (!l.tp) Take(l.tp, KeyValueArg(argv, "tensor_parallel_dim", from), "tensor_parallel_dim=", l);
}

}  // namespace

std::optional<ParallelLayout> LayoutFromArgv(const std::vector<std::string>& argv,
                                             const std::map<std::string, std::string>& env, const std::string& source) {
  if (argv.empty()) return std::nullopt;
  Launch la = ParseLaunch(argv);
  const std::string& prog = la.program;
  const std::string& mod = la.module;
  std::string sub = la.next < argv.size() ? argv[la.next] : "";
  ParallelLayout l;
  l.source = source;
  const size_t n = la.next;
  if (prog == "torchrun" || mod == "torch.distributed.run" || mod == "torch.distributed.launch") {
    l.what = "torchrun";
    if (HasFlag(argv, {"--standalone"}, n)) {
      l.nodes = 1;
      l.evidence.push_back("--standalone");
    }
    Take(l.nodes, FlagValue(argv, {"--nnodes"}, n), "--nnodes", l);
    ApplyScriptArgs(argv, n, l);
  } else if ((prog == "accelerate" && sub == "launch") || mod == "accelerate.commands.launch") {
    l.what = "accelerate launch";
    Take(l.nodes, FlagValue(argv, {"--num_machines"}, n), "--num_machines", l);
    Take(l.tp, FlagValue(argv, {"--parallelism_config_tp_size"}, n), "--parallelism_config_tp_size", l);
    if (!l.tp) Take(l.tp, FlagValue(argv, {"--megatron_lm_tp_degree"}, n), "--megatron_lm_tp_degree", l);
    Take(l.pp, FlagValue(argv, {"--megatron_lm_pp_degree"}, n), "--megatron_lm_pp_degree", l);
    if (HasFlag(argv, {"--use_fsdp"}, n)) l.data_parallel = "FSDP";
    if (HasFlag(argv, {"--use_deepspeed"}, n)) l.data_parallel = "DeepSpeed";
    if (auto cf = FlagValue(argv, {"--config_file"}, n))
      l.evidence.push_back("--config_file " + *cf + " (pass it with --config to check it)");
    ApplyScriptArgs(argv, n, l);
  } else if (prog == "deepspeed" || StartsWith(mod, "deepspeed.launcher")) {
    l.what = "deepspeed";
    Take(l.nodes, FlagValue(argv, {"--num_nodes"}, n), "--num_nodes", l);
    if (auto hf = FlagValue(argv, {"--hostfile"}, n)) l.evidence.push_back("--hostfile " + *hf + " (not read)");
    if (auto ds = FlagValue(argv, {"--deepspeed", "--deepspeed_config"}, n))
      l.evidence.push_back("DeepSpeed config " + *ds + " (pass it with --config to check it)");
    ApplyScriptArgs(argv, n, l);
  } else if (prog == "tune" && sub == "run") {
    l.what = "tune run";
    Take(l.nodes, FlagValue(argv, {"--nnodes"}, n), "--nnodes", l);
    ApplyScriptArgs(argv, n, l);
  } else if (prog == "llamafactory-cli" || prog == "lmf") {
    l.what = "llamafactory-cli";
  } else if ((prog == "vllm" && sub == "serve") || StartsWith(mod, "vllm.entrypoints") ||
             (prog == "trl" && sub == "vllm-serve")) {
    l.what = prog == "trl" ? "trl vllm-serve" : "vLLM";
    l.training = false;
    Take(l.tp, FlagValue(argv, {"-tp", "--tensor-parallel-size"}, n), "--tensor-parallel-size", l);
    Take(l.pp, FlagValue(argv, {"-pp", "--pipeline-parallel-size"}, n), "--pipeline-parallel-size", l);
    Take(l.nodes, FlagValue(argv, {"--nnodes"}, n), "--nnodes", l);
    if (auto b = FlagValue(argv, {"--distributed-executor-backend"}, n); b && *b == "ray")
      l.evidence.push_back("--distributed-executor-backend ray (multi-node through a Ray cluster)");
  } else if ((prog == "sglang" && sub == "serve") || mod == "sglang.launch_server") {
    l.what = "SGLang";
    l.training = false;
    Take(l.tp, FlagValue(argv, {"--tp-size", "--tp"}, n), "--tp-size", l);
    Take(l.pp, FlagValue(argv, {"--pp-size"}, n), "--pp-size", l);
    Take(l.nodes, FlagValue(argv, {"--nnodes"}, n), "--nnodes", l);
  } else if (prog == "text-generation-launcher") {
    l.what = "TGI";
    l.training = false;
    Take(l.tp, FlagValue(argv, {"--num-shard"}, n), "--num-shard", l);
  } else if (la.python &&
             (FlagValue(argv, {"--tensor-model-parallel-size"}, n) || KeyValueArg(argv, "tensor_parallel_dim", n))) {
    l.what = "training script";
    ApplyScriptArgs(argv, n, l);
  } else {
    return std::nullopt;
  }
  ApplyEnv(env, l);
  return l;
}

std::optional<ParallelLayout> LayoutFromEnv(const std::map<std::string, std::string>& env, const std::string& source) {
  ParallelLayout l;
  l.source = source;
  l.what = "launcher variables";
  ApplyEnv(env, l);
  if (l.evidence.empty()) return std::nullopt;
  return l;
}

LayoutJudgement JudgeLayout(const ParallelLayout& l, std::optional<int> job_nodes) {
  std::optional<int> nodes = l.nodes ? l.nodes : job_nodes;
  const int tp = l.tp.value_or(1), pp = l.pp.value_or(1);
  const std::string who = fmt::format("{} ({})", l.source, l.what);
  std::string machines = nodes ? fmt::format("{} machines", *nodes) : "machine count not stated";
  if (tp > 1 && nodes && *nodes >= 2) {
    if (l.training)
      return {LayoutLevel::kFail,
              fmt::format("{}: tensor parallelism TP={} across {} in a training job; TP all-reduces every layer "
                          "over the ConnectX-7 link: use DDP/FSDP across Sparks",
                          who, tp, machines)};
    return {LayoutLevel::kInfo,
            fmt::format("{}: inference TP={} across {}: routine for serving (NVIDIA's vLLM + Ray two-Spark "
                        "playbook); \"never TP\" holds for training",
                        who, tp, machines)};
  }
  if (pp > 1 && nodes && *nodes >= 2)
    return {LayoutLevel::kWarn,
            fmt::format("{}: pipeline parallelism PP={} across {}: works but is slower than data parallelism when "
                        "the model fits on one Spark (unsloth PR #10280: DP 2.05x, PP 1.776x at 9B)",
                        who, pp, machines)};
  if (tp > 1 && nodes && *nodes < 2)
    return {LayoutLevel::kPass,
            fmt::format("{}: TP={} inside one machine (a Spark has one GPU: this needs a multi-GPU box)", who, tp)};
  if (tp > 1) {
    if (!l.training)
      return {LayoutLevel::kInfo,
              fmt::format("{}: inference TP={} ({}); on Sparks (one GPU each) TP>1 spans boxes: routine for serving",
                          who, tp, machines)};
    return {LayoutLevel::kWarn,
            fmt::format("{}: TP={} with the {}: on Sparks (one GPU each) TP>1 means crossing boxes; keep TP on "
                        "one machine, use DDP/FSDP across Sparks",
                        who, tp, machines)};
  }
  if (!l.training)
    return {LayoutLevel::kPass,
            fmt::format("{}: serving with TP=1, PP={}, {}", who, pp, nodes ? machines : "one machine")};
  std::string dp = l.data_parallel.empty() ? "data parallel" : l.data_parallel;
  if (nodes && *nodes >= 2)
    return {LayoutLevel::kPass, fmt::format("{}: {} across {} with TP=1: what two Sparks are for", who, dp, machines)};
  return {LayoutLevel::kPass, fmt::format("{}: {}, TP=1, {}", who, dp, nodes ? machines : "machine count not stated")};
}

}  // namespace sparkops
