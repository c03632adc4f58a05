// Which process is which workload, and how processes group (docs/checks.md, G6: what `ps` recognises).
#include <set>
#include <unordered_map>

#include "base/strings.h"
#include "workloads/argv.h"
#include "workloads/caps.h"
#include "workloads/workload.h"

namespace sparkops {

namespace {

struct Match {
  WorkloadKind kind;
  std::string role;
  bool training = false;
};

bool Contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

bool ScriptImportsUnsloth(std::string_view head) {
  return Contains(head, "import unsloth") || Contains(head, "from unsloth");
}

std::optional<Match> MatchProcess(const ProcessInfo& p, bool holds_gpu, std::optional<uint64_t> gpu_bytes) {
  if (p.argv.empty()) return std::nullopt;
  const std::string& a0 = p.argv[0];
  // Titles set with setproctitle (workers of vLLM, Ray, SGLang).
  if (StartsWith(a0, "VLLM::") || StartsWith(p.name, "VLLM::")) return Match{WorkloadKind::kVllm, "worker"};
  if (StartsWith(a0, "ray::RayWorkerWrapper")) return Match{WorkloadKind::kVllm, "ray worker"};
  if (StartsWith(a0, "sglang::")) return Match{WorkloadKind::kSglang, "worker"};

  Launch l = ParseLaunch(p.argv);
  const std::string& prog = l.program;
  const std::string& mod = l.module;
  std::string sub = l.next < p.argv.size() ? p.argv[l.next] : "";
  using K = WorkloadKind;

  if ((prog == "vllm" && sub == "serve") || StartsWith(mod, "vllm.entrypoints")) return Match{K::kVllm, "server"};
  if ((prog == "trl" && sub == "vllm-serve") || mod == "trl.scripts.vllm_serve")
    return Match{K::kVllm, "server (trl vllm-serve)"};
  if ((prog == "sglang" && sub == "serve") || mod == "sglang.launch_server") return Match{K::kSglang, "server"};
  if (prog == "ollama" && sub == "serve") return Match{K::kOllama, "server"};
  if ((prog == "ollama" && sub == "runner") || prog == "ollama_llama_server") return Match{K::kOllama, "runner"};
  if (prog == "llama-server" || prog == "llama-cli") return Match{K::kLlamaCpp, "server"};
  if (prog == "text-generation-launcher") return Match{K::kTgi, "launcher"};
  if (prog == "text-generation-server") return Match{K::kTgi, "shard"};

  if (prog == "torchrun" || mod == "torch.distributed.run" || mod == "torch.distributed.launch")
    return Match{K::kTorchrun, "launcher", true};
  if ((prog == "accelerate" && sub == "launch") || mod == "accelerate.commands.launch")
    return Match{K::kAccelerate, "launcher", true};
  if (prog == "deepspeed" || StartsWith(mod, "deepspeed.launcher")) return Match{K::kDeepspeed, "launcher", true};
  if (prog == "tune" && sub == "run") return Match{K::kTorchtune, "launcher", true};
  if (prog == "trl" || StartsWith(mod, "trl.")) return Match{K::kTrl, "trainer", true};
  if (prog == "axolotl" || StartsWith(mod, "axolotl.cli")) return Match{K::kAxolotl, "trainer", true};
  if (prog == "llamafactory-cli" || prog == "lmf" || StartsWith(mod, "llamafactory"))
    return Match{K::kLlamaFactory, "trainer", true};
  if (Contains(prog, "unsloth") || StartsWith(mod, "unsloth") || Contains(BaseName(l.script), "unsloth") ||
      (l.python && ScriptImportsUnsloth(p.script_head)))
    return Match{K::kUnsloth, "trainer", true};
  if (l.python && holds_gpu) return Match{K::kPython, "script", true};
  if (gpu_bytes && *gpu_bytes >= kOtherGpuMinBytes) return Match{K::kOtherGpu, "process"};
  return std::nullopt;
}

/// What a launcher runs: the first `.py` word, else `-m MODULE`, else "".
std::string LaunchedWhat(const std::vector<std::string>& argv, size_t from) {
  for (size_t i = from; i < argv.size(); ++i)
    if (EndsWith(argv[i], ".py")) return std::string(BaseName(argv[i]));
  for (size_t i = from; i + 1 < argv.size(); ++i)
    if (argv[i] == "-m" || argv[i] == "--module") return "-m " + argv[i + 1];
  return "";
}

std::string ModelOf(const ProcessInfo& p, const Launch& l) {
  if (auto m = FlagValue(p.argv, {"--model", "--model-path", "--model-id", "--model_name_or_path"})) {
    // Ollama runners name a content-addressed blob: keep its short hash.
    if (m->find("/blobs/") != std::string::npos) {
      std::string blob(BaseName(*m));
      return "blob " + (blob.size() > 19 ? blob.substr(0, 19) + "..." : blob);
    }
    return *m;
  }
  if (l.program == "llama-server" || l.program == "llama-cli")
    if (auto m = FlagValue(p.argv, {"-m"})) return *m;
  // `vllm serve MODEL ...`
  if (l.program == "vllm" && l.next + 1 < p.argv.size() && !StartsWith(p.argv[l.next + 1], "-"))
    return p.argv[l.next + 1];
  return "";
}

WorkloadProcess MakeProc(const ProcessInfo& p, const std::string& role, const GpuMemByPid& gpu) {
  WorkloadProcess w;
  w.pid = p.pid;
  w.role = role;
  w.rss_bytes = p.rss_bytes;
  if (auto it = gpu.find(p.pid); it != gpu.end()) {
    w.gpu_listed = true;
    w.gpu_bytes = it->second;
  }
  w.command = ShortCommand(p.argv);
  return w;
}

}  // namespace

std::vector<Workload> ClassifyProcesses(const std::vector<ProcessInfo>& procs, const GpuMemByPid& gpu,
                                        std::optional<uint64_t> mem_total) {
  std::unordered_map<uint32_t, size_t> index;
  for (size_t i = 0; i < procs.size(); ++i) index[procs[i].pid] = i;
  std::vector<std::optional<Match>> match(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) {
    auto it = gpu.find(procs[i].pid);
    match[i] =
        MatchProcess(procs[i], it != gpu.end() || procs[i].nvidia_fd, it != gpu.end() ? it->second : std::nullopt);
  }

  // The top-most matched ancestor of process i (itself when none above it is matched).
  auto top_of = [&](size_t i) -> std::optional<size_t> {
    std::optional<size_t> top = match[i] ? std::optional<size_t>(i) : std::nullopt;
    std::set<uint32_t> seen{procs[i].pid};
    uint32_t pp = procs[i].ppid;
    for (int depth = 0; depth < 256 && pp > 1 && !seen.count(pp); ++depth) {
      seen.insert(pp);
      auto it = index.find(pp);
      if (it == index.end()) break;
      if (match[it->second]) top = it->second;
      pp = procs[it->second].ppid;
    }
    return top;
  };

  std::vector<std::optional<size_t>> top(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) top[i] = top_of(i);

  // Pass 1: one workload per matched process with no matched ancestor (PID order via the map).
  std::map<uint32_t, Workload> by_top;
  std::map<uint32_t, std::vector<const ProcessInfo*>> members;
  for (size_t i = 0; i < procs.size(); ++i) {
    if (top[i] != i) continue;
    const ProcessInfo& p = procs[i];
    Workload w;
    w.kind = match[i]->kind;
    w.training = match[i]->training;
    w.main = MakeProc(p, match[i]->role, gpu);
    w.argv = p.argv;
    w.env = p.env;
    Launch l = ParseLaunch(p.argv);
    w.model = ModelOf(p, l);
    if (w.training) w.detail = LaunchedWhat(p.argv, l.next);
    by_top.emplace(p.pid, std::move(w));
    members[p.pid].push_back(&p);
  }

  // Pass 2: descendants, grouped under their top when matched, holding GPU memory, or Python.
  for (size_t i = 0; i < procs.size(); ++i) {
    if (!top[i] || *top[i] == i) continue;
    const ProcessInfo& p = procs[i];
    bool holds = gpu.count(p.pid) > 0 || p.nvidia_fd;
    bool python = !p.argv.empty() && IsPythonInterpreter(p.argv[0]);
    if (!match[i] && !holds && !python) continue;
    std::string role = match[i] ? match[i]->role : "worker";
    if (auto r = p.env.find("RANK"); r != p.env.end()) role = "rank " + r->second;
    else if (auto lr = p.env.find("LOCAL_RANK"); lr != p.env.end()) role = "local rank " + lr->second;
    const uint32_t tpid = procs[*top[i]].pid;
    Workload& w = by_top.at(tpid);
    w.children.push_back(MakeProc(p, role, gpu));
    members[tpid].push_back(&p);
    if (w.rank_env.empty() && p.env.count("WORLD_SIZE")) w.rank_env = p.env;
    // A launcher running a known framework names it ("accelerate" running axolotl).
    if (match[i] && w.training && match[i]->kind != w.kind && !IsServerKind(match[i]->kind) &&
        match[i]->kind != WorkloadKind::kPython && w.detail.find(KindName(match[i]->kind)) == std::string::npos)
      w.detail = w.detail.empty() ? KindName(match[i]->kind) : w.detail + " (" + KindName(match[i]->kind) + ")";
    if (w.model.empty()) w.model = ModelOf(p, ParseLaunch(p.argv));
  }

  std::vector<Workload> out;
  for (auto& [pid, w] : by_top) {
    SetCapAndVerdict(w, members[pid], mem_total);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace sparkops
