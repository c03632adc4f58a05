#include <fmt/format.h>

#include "base/strings.h"
#include "checks/check.h"
#include "checks/g10_pair.h"
#include "workloads/parallelism.h"

namespace sparkops {

namespace {

CheckStatus StatusOf(LayoutLevel l) {
  switch (l) {
    case LayoutLevel::kFail: return CheckStatus::kFail;
    case LayoutLevel::kWarn: return CheckStatus::kWarn;
    case LayoutLevel::kInfo: return CheckStatus::kInfo;
    case LayoutLevel::kPass: return CheckStatus::kPass;
  }
  return CheckStatus::kPass;
}

int Rank(LayoutLevel l) { return static_cast<int>(l); }

}  // namespace

// G10: two Sparks are for DDP/FSDP, not tensor parallelism, with one correction (docs/checks.md, G10):
// TP across boxes is routine for inference (NVIDIA's vLLM + Ray two-Spark playbook: INFO), a FAIL only
// for training.
CheckResult CheckG10(const HostFacts& f) {
  CheckResult r{"G10", CheckStatus::kPass, "", {}, ""};
  std::vector<ParallelLayout> planned;  // --config files and the user's launcher variables: one job
  std::vector<std::string> input_errors;
  for (const auto& path : f.options().configs) {
    auto text = ReadLocalFile(path, 16u << 20);
    if (!text) {
      input_errors.push_back(text.error().message);
      continue;
    }
    auto layouts = ParseParallelConfig(path, *text);
    if (!layouts) {
      input_errors.push_back(layouts.error().message);
      continue;
    }
    for (auto& l : *layouts) planned.push_back(std::move(l));
  }
  std::vector<EnvSetting> script_env;  // NCCL/UCX variables the --config launch scripts set (issue 18)
  for (const auto& l : planned) script_env.insert(script_env.end(), l.comm_env.begin(), l.comm_env.end());
  if (auto l = LayoutFromEnv(f.ctx().env, "environment")) planned.push_back(std::move(*l));

  std::vector<ParallelLayout> running;  // each running launcher or server is its own job
  if (const auto& scan = f.workloads(); scan) {
    for (const auto& w : scan->workloads) {
      auto env = w.env;
      env.insert(w.rank_env.begin(), w.rank_env.end());  // a rank's WORLD_SIZE/LOCAL_WORLD_SIZE
      auto l = LayoutFromArgv(w.argv, env, fmt::format("pid {}", w.main.pid));
      // A single-GPU server says nothing about a two-Spark layout.
      if (l && !l->training && !l->nodes && l->tp.value_or(1) == 1 && l->pp.value_or(1) == 1) continue;
      if (l) running.push_back(std::move(*l));
    }
  }

  if (!input_errors.empty()) {
    r.status = CheckStatus::kFail;
    r.input_error = true;
    r.summary = "cannot check " + Join(input_errors, "; ");
    r.fix = "fix or remove the --config file named above";
  }
  if (planned.empty() && running.empty()) {
    if (input_errors.empty()) {
      r.status = CheckStatus::kSkip;
      r.summary =
          "nothing to read: no --config given, no launcher variables (WORLD_SIZE, NNODES, ...), "
          "no running launcher";
      ApplySparkPair(f, false, script_env, r);  // issue 18: NCCL variables or --pair alone still get the link checked
    }
    return r;
  }

  std::optional<int> job_nodes;
  for (const auto& l : planned)
    if (l.nodes && (!job_nodes || *l.nodes > *job_nodes)) job_nodes = l.nodes;

  LayoutLevel worst = LayoutLevel::kPass;
  std::string worst_line;
  auto judge = [&](const ParallelLayout& l, std::optional<int> nodes) {
    LayoutJudgement j = JudgeLayout(l, nodes);
    r.evidence.push_back(fmt::format("{} {}", StatusName(StatusOf(j.level)), j.line));
    for (const auto& e : l.evidence) r.evidence.push_back("  " + l.source + ": " + e);
    if (worst_line.empty() || Rank(j.level) > Rank(worst)) {
      worst = j.level;
      worst_line = j.line;
    }
  };
  for (const auto& l : planned) judge(l, job_nodes);
  for (const auto& l : running) judge(l, std::nullopt);
  if (!input_errors.empty()) return r;

  r.status = StatusOf(worst);
  size_t n = planned.size() + running.size();
  r.summary = n > 1 ? fmt::format("{} (+{} more layout{} read)", worst_line, n - 1, n > 2 ? "s" : "") : worst_line;
  if (worst == LayoutLevel::kFail || worst == LayoutLevel::kWarn)
    r.fix =
        "across two Sparks use DDP or FSDP (accelerate distributed_type: FSDP, DeepSpeed ZeRO) with TP=1; "
        "keep tensor/pipeline parallelism inside one machine";
  ApplySparkPair(f, job_nodes.value_or(1) > 1, script_env, r);  // issue 18: the Spark-pair link
  return r;
}

}  // namespace sparkops
