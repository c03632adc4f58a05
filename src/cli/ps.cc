#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "host/gpu.h"
#include "report/workloads.h"
#include "workloads/workload.h"

namespace sparkops {

/// `sparkops ps [--json]`: the ML workloads on the pool with their caps and verdicts.
/// Exit 0 whatever it finds; 2 on a bad flag; 1 only when /proc cannot be read.
int CmdPs(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("ps",
                    "List the GPU-resident and memory-heavy ML processes (vLLM, SGLang, Ollama, llama.cpp, TGI, "
                    "trainers) with RSS, GPU memory, their cap from flags/environment, and a verdict: "
                    "capped / near-capacity / uncapped / idle.");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  GpuSnapshot gpu = ReadGpuSnapshot(ctx);
  auto scan = ListWorkloads(ctx, gpu);
  if (!scan) {
    ctx.err << "sparkops ps: " << scan.error().message << "\n";
    return kExitProblem;
  }
  if (ctx.json) ctx.out << JsonText(WorkloadsToJson(*scan)) << "\n";
  else ctx.out << RenderWorkloadsText(*scan);
  return kExitOk;
}

}  // namespace sparkops
