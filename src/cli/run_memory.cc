#include "cli/run_memory.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/strings.h"
#include "cli/plan_options.h"
#include "host/hostfs.h"

namespace sparkops {

namespace {

/// `plan` run on the recorded plan args, at plan.json's budget unless the args give their own.
Result<memory::Plan> RebuildPlan(Context& ctx, const std::string& dir, const std::string& plan_args) {
  std::vector<std::string> args;
  for (auto a : Split(plan_args, ' '))
    if (!a.empty()) args.emplace_back(a);
  if (std::find(args.begin(), args.end(), "--budget-gib") == args.end()) {
    auto text = ReadLocalFile(dir + "/plan.json", 1u << 20);
    if (!text) return InputError(text.error().message);
    auto j = ParseJsonOrDiscarded(*text);
    auto b = j.is_object() ? j.find("budget_gib") : j.end();
    if (!j.is_object() || b == j.end() || !b->is_number() || !(b->get<double>() > 0))
      return InputError(dir + "/plan.json: no positive number in field `budget_gib`");
    args.insert(args.end(), {"--budget-gib", fmt::format("{}", b->get<double>())});
  }
  auto app = NewApp("plan", "");
  std::string model;
  PlanFlags flags;
  app->add_option("MODEL", model);
  AddPlanFlags(*app, flags);
  std::ostringstream out, err;
  GlobalOptions o{ctx.opts};
  Context pctx{o, ctx.fs, ctx.env, out, err};
  if (ParseFlags(*app, args, pctx)) return InputError("--plan-args: " + std::string(Trim(err.str())));
  return PlanFromFlags(pctx, model, flags);
}

}  // namespace

std::optional<RunMemory> RunMemoryOf(Context& ctx, const AnalysisResult& r) {
  bool cut = false;
  auto tail = ReadLocalFileTail(r.in.log, kOomTailBytes, &cut);
  const OomSignature oom = tail ? ParseOomSignature(*tail) : OomSignature{};
  std::optional<memory::Plan> plan;
  std::string note;
  if (!r.in.dir.empty() && r.meta && !r.meta->plan_args.empty()) {
    if (auto p = RebuildPlan(ctx, r.in.dir, r.meta->plan_args)) plan = std::move(*p);
    else note = "the run's plan (--plan-args) could not be rebuilt: " + p.error().message;
  }
  auto m = DescribeRunMemory(r, oom, plan);
  if (m) m->plan_note = note;
  return m;
}

}  // namespace sparkops
