#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/plan_options.h"
#include "cli/serve_options.h"
#include "memory/calibrate.h"
#include "report/plan.h"
#include "report/serve.h"

namespace sparkops {

using namespace memory;

namespace {

/// plan --serve MODEL, or plan MODEL --beside SPEC: the server (and the trainer) against one budget.
int PlanServer(Context& ctx, const std::string& model, const PlanFlags& flags, const ServeFlags& serve) {
  auto fail = [&](const std::string& message) {
    ctx.err << "sparkops plan: " << message << "\n";
    return kExitUsage;
  };
  if (!serve.serve.empty() && !serve.beside.empty()) return fail("--serve and --beside: give one");
  if (!serve.serve.empty() && (!model.empty() || !flags.from.empty()))
    return fail("--serve MODEL sizes a server alone; for a server beside a trainer give MODEL --beside ENGINE:MODEL");
  if (!serve.beside.empty())
    for (const auto& [name, opt] : serve.given)
      if (opt && opt->count() > 0)
        return fail(fmt::format("{} goes inside the --beside spec (key {})", name, name.substr(2)));
  auto spec = serve.serve.empty() ? ParseServeSpec(serve.beside) : ServeSpecFromFlags(serve);
  if (!spec) return fail(spec.error().message);
  std::optional<Plan> trainer;
  if (!serve.beside.empty()) {
    auto plan = PlanFromFlags(ctx, model, flags);
    if (!plan) return fail(plan.error().message);
    trainer = std::move(*plan);
  }
  auto lm = ResolveModel(spec->model);
  if (!lm) return fail(fmt::format("{}: {}", serve.serve.empty() ? "--beside" : "--serve", lm.error().message));
  const auto meminfo = ReadMemInfo(ctx.fs);
  auto budget = MakeBudget(meminfo, flags.budget_gib, flags.reserve_gib);
  if (!budget) return fail(budget.error().message);
  auto p = MakeServePlan(*lm, spec->options, *budget, meminfo ? meminfo->total : std::nullopt, std::move(trainer));
  if (!p) return fail(p.error().message);
  if (ctx.json) ctx.out << JsonText(ServePlanJson(*p, lm->spec)) << "\n";
  else PrintServePlan(ctx.out, *p, lm->spec);
  const bool trainer_alone_nofit = p->trainer && p->trainer->verdict == Verdict::kNoFit;
  return p->verdict == Verdict::kNoFit || trainer_alone_nofit ? kExitProblem : kExitOk;
}

}  // namespace

int CmdPlan(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("plan", "Will this fine-tune fit the unified-memory pool? Breakdown, verdict, largest seq/batch.");
  std::string model;
  PlanFlags flags;
  std::vector<std::string> calibrate;
  app->add_option("MODEL", model, "catalogue name (sparkops models), a directory with config.json, or a config.json");
  app->add_option("--calibrate", calibrate,
                  "run directories holding plan.json + peak.json: predicted vs measured, residual per component");
  AddPlanFlags(*app, flags);
  ServeFlags serve;
  AddServeFlags(*app, serve);
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  if (!calibrate.empty()) {
    std::vector<Calibration> runs;
    for (const auto& dir : calibrate) {
      auto c = ReadCalibration(dir);
      if (!c) {
        ctx.err << "sparkops plan --calibrate: " << c.error().message << "\n";
        return kExitUsage;
      }
      runs.push_back(*c);
    }
    if (ctx.json) {
      ctx.out << JsonText(CalibrationJson(runs)) << "\n";
    } else {
      ctx.out << CalibrationReport(runs);
    }
    return kExitOk;
  }
  if (!serve.serve.empty() || !serve.beside.empty()) return PlanServer(ctx, model, flags, serve);
  for (const auto& [name, opt] : serve.given)
    if (opt && opt->count() > 0) {
      ctx.err << "sparkops plan: " << name << " sizes a server: give it with --serve MODEL\n";
      return kExitUsage;
    }
  if (model.empty() && flags.from.empty()) {
    ctx.err << "sparkops plan: MODEL is required (or --from FILE, or --calibrate RUN_DIR...)\n";
    return kExitUsage;
  }
  auto plan = PlanFromFlags(ctx, model, flags);
  if (!plan) {
    ctx.err << "sparkops plan: " << plan.error().message << "\n";
    return kExitUsage;
  }
  if (ctx.json) ctx.out << JsonText(PlanJson(*plan)) << "\n";
  else PrintPlan(ctx.out, *plan);
  return plan->verdict == Verdict::kNoFit ? kExitProblem : kExitOk;
}

}  // namespace sparkops
