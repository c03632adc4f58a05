#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/strings.h"
#include "checks/check.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "report/preflight.h"

namespace sparkops {

int CmdPreflight(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("preflight",
                    "Check the known DGX Spark failure modes G1..G11, one line each.\n"
                    "Reads files only; never imports a Python package. Exit 1 on any FAIL.");
  PreflightOptions opts;
  std::string only;
  app->add_option("--python", opts.python, "Python interpreter whose sys.path to inspect (run with -S)");
  app->add_option("--site-packages", opts.site_packages, "site-packages directory to inspect (repeatable)");
  app->add_option("--config", opts.configs,
                  "accelerate YAML, DeepSpeed JSON or launch script to check for G10 (repeatable)");
  app->add_flag("--pair", opts.pair,
                "G10: report the Spark-pair link (RDMA endpoints, interfaces, NCCL/UCX variables) even with no "
                "multi-node config or NCCL variable");
  app->add_option("--only", only, "comma list of checks to run, e.g. G1,G3");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;

  std::vector<std::string> wanted;
  for (auto part : Split(only, ',')) {
    std::string id = ToLower(Trim(part));
    if (id.empty()) continue;
    if (id[0] == 'g') id[0] = 'G';
    bool known = false;
    for (const CheckDef& c : AllChecks()) known |= (id == c.id);
    if (!known) {
      ctx.err << "sparkops preflight: --only: unknown check '" << part << "' (use G1..G11)\n";
      return kExitUsage;
    }
    wanted.push_back(id);
  }

  HostFacts facts(ctx, opts);
  bool any_fail = false, input_error = false;
  nlohmann::ordered_json doc = nlohmann::ordered_json::array();
  for (const CheckDef& c : AllChecks()) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), c.id) == wanted.end()) continue;
    CheckResult r = c.run(facts);
    any_fail |= r.status == CheckStatus::kFail;
    input_error |= r.input_error;
    if (ctx.json) doc.push_back(CheckJson(r));
    else ctx.out << CheckLine(r) << "\n";
  }
  if (ctx.json) ctx.out << JsonText(doc) << "\n";
  if (input_error) return kExitUsage;
  return any_fail ? kExitProblem : kExitOk;
}

}  // namespace sparkops
