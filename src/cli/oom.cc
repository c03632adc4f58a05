#include <fmt/format.h>

#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/plan_options.h"
#include "memory/ladder.h"
#include "report/oom.h"

namespace sparkops {

using namespace memory;

/// How much of a long log `oom --log` reads: its end, where an OOM is reported.
constexpr size_t kOomLogTailBytes = 32u << 20;

int CmdOom(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("oom", "Work an OOM down the ladder: flush, pack/batch, method, then model/Sparks.");
  std::string model, log;
  PlanFlags flags;
  app->add_option("MODEL", model, "as for `plan` (optional: without it only step 1 has numbers)");
  app->add_option("--log", log, "training log holding the OOM message (tells load-time from step-time)");
  AddPlanFlags(*app, flags);
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  std::optional<OomSignature> sig;
  if (!log.empty()) {
    bool cut = false;
    auto text = ReadLocalFileTail(log, kOomLogTailBytes, &cut);
    if (!text) {
      ctx.err << "sparkops oom: " << text.error().message << "\n";
      return kExitUsage;
    }
    if (cut)
      ctx.err << fmt::format("sparkops oom: {} is over {} MiB: read its last {} MiB (where the OOM is)\n", log,
                             kOomLogTailBytes >> 20, kOomLogTailBytes >> 20);
    sig = ParseOomSignature(*text);
  }
  std::optional<Plan> plan;
  if (!model.empty()) {
    auto p = PlanFromFlags(ctx, model, flags);
    if (!p) {
      ctx.err << "sparkops oom: " << p.error().message << "\n";
      return kExitUsage;
    }
    plan = *p;
  } else if (auto o = ToPlanOptions(flags); !o) {
    ctx.err << "sparkops oom: " << o.error().message << "\n";
    return kExitUsage;
  }
  auto ladder = BuildLadder(ReadMemInfo(ctx.fs), plan, sig);
  if (ctx.json) ctx.out << JsonText(OomJson(ladder, sig, plan)) << "\n";
  else ctx.out << OomText(ladder, sig, log);
  return kExitOk;
}

}  // namespace sparkops
