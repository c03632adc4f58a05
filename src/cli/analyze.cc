// sparkops analyze DIR | --log FILE [--thermal FILE] [--html FILE] [--tz ZONE] [--step-format T]
#include <fmt/format.h>
#include <filesystem>
#include <optional>

#include "analysis/analyze.h"
#include "analysis/causes.h"
#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/run_memory.h"
#include "host/write_file.h"
#include "report/analysis.h"
#include "report/html.h"

namespace sparkops {

int CmdAnalyze(Context& ctx, const std::vector<std::string>& args) {
  std::string causes, legend;
  for (const CauseInfo& c : Causes()) {
    causes += (causes.empty() ? "" : c.name == "unknown" ? " or " : ", ") + std::string(c.name);
    legend += fmt::format("\n  {:<16}{}", c.name, c.help);
  }
  auto app = NewApp("analyze", "Find sustained step-time slowdowns in a training log and say why (" + causes + ").");
  app->footer("Causes:" + legend + "\n\n" + app->get_footer());
  std::string dir, log, thermal, html, tz, step_format;
  app->add_option("dir", dir, "run directory written by `sparkops run`");
  app->add_option("--log", log, "a training log (train.log or any framework's output)");
  app->add_option("--thermal", thermal, "thermal CSV (`sparkops sample` or nvidia-smi --query-gpu ... --format=csv)");
  app->add_option("--html", html, "also write the report as one self-contained HTML file");
  app->add_option("--tz", tz, "zone of zone-less timestamps (default: TZ), e.g. UTC, +02:00, Europe/Berlin");
  app->add_option("--step-format", step_format,
                  "template for step lines no built-in parser reads, e.g. 'step {step} loss {loss}' "
                  "(fields: step total loss time ms its throughput lr _ *)")
      ->check(NonEmpty());
  std::optional<double> price_kwh;
  AddNumber(*app, "--price-kwh", price_kwh, {0, 1e6, false, false, "per kWh"},
            "price of a kWh: the run's energy is also shown as a cost (in that currency)");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  if (dir.empty() == log.empty()) {
    ctx.err << "sparkops analyze: give a run directory or --log FILE (exactly one)\n";
    return kExitUsage;
  }
  auto zone = LocalZone::Make(tz.empty() ? ctx.Getenv("TZ") : tz, ctx.fs);
  if (!zone) {
    ctx.err << "sparkops analyze: " << zone.error().message << "\n";
    return kExitUsage;
  }
  AnalyzeInputs in;
  if (!dir.empty()) {
    auto r = RunDirInputs(dir);
    if (!r) {
      ctx.err << "sparkops analyze: " << r.error().message << "\n";
      return kExitUsage;
    }
    in = *r;
  } else {
    in.log = log;
  }
  if (!thermal.empty()) in.thermal = thermal;
  if (!step_format.empty()) {
    auto t = CompileStepTemplate(step_format);
    if (!t) {
      ctx.err << "sparkops analyze: " << t.error().message << "\n";
      return kExitUsage;
    }
    in.step_format = std::move(*t);
  }
  std::optional<OutDir> html_dir;  // opened before the work: as root, refused unless root owns it
  if (!html.empty()) {
    if (auto same = RefuseOutputOverInput("--html", html, {in.log, in.thermal, in.events, in.meta}); !same) {
      ctx.err << "sparkops analyze: " << same.error().message << "\n";
      return kExitUsage;
    }
    auto d = OutDir::ForFile("--html", html);
    if (!d) {
      ctx.err << "sparkops analyze: " << d.error().message << "\n";
      return d.error().kind == Error::Kind::kInput ? kExitUsage : kExitProblem;
    }
    html_dir.emplace(std::move(*d));
  }
  auto result = Analyze(in, *zone, ctx.fs);
  if (!result) {
    ctx.err << "sparkops analyze: " << result.error().message << "\n";
    return kExitUsage;
  }
  result->price_kwh = price_kwh;
  const std::optional<RunMemory> memory = RunMemoryOf(ctx, *result);
  const RunMemory* mem = memory ? &*memory : nullptr;
  if (!html.empty()) {
    const std::string name = std::filesystem::path(html).filename().string();
    if (auto w = html_dir->WriteAtomically(name, RenderHtmlReport(*result, mem)); !w) {
      ctx.err << "sparkops analyze: --html: " << w.error().message << "\n";
      return kExitProblem;
    }
  }
  if (ctx.json) {
    nlohmann::json j = RenderAnalysisJson(*result);
    j["memory"] = mem ? RunMemoryJson(*mem) : nlohmann::json();
    ctx.out << JsonText(j) << "\n";
  } else {
    ctx.out << RenderAnalysisText(*result);
    if (mem) ctx.out << RunMemoryText(*mem);
    if (!html.empty()) ctx.out << "\nreport   " << html << "\n";
  }
  return kExitOk;
}

}  // namespace sparkops
