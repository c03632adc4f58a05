#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/plan_options.h"
#include "memory/calibrate.h"
#include "report/plan.h"

namespace sparkops {

using namespace memory;

int CmdPlan(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("plan", "Will this fine-tune fit the unified-memory pool? Breakdown, verdict, largest seq/batch.");
  std::string model;
  PlanFlags flags;
  std::vector<std::string> calibrate;
  app->add_option("MODEL", model, "catalogue name (sparkops models), a directory with config.json, or a config.json");
  app->add_option("--calibrate", calibrate,
                  "run directories holding plan.json + peak.json: predicted vs measured, residual per component");
  AddPlanFlags(*app, flags);
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
