#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/strings.h"
#include "checks/explain.h"
#include "cli/commands.h"
#include "cli/flags.h"

namespace sparkops {

namespace {

void RenderText(std::ostream& out, const Explanation& e) {
  out << fmt::format("{}: {}\n", e.id, e.title);
  out << fmt::format("  Symptom: {}\n  Cause:   {}\n  Check:   {}\n  Fix:     {}\n", e.symptom, e.cause, e.check,
                     e.fix);
  if (!e.notes.empty()) {
    out << (std::string(e.id) == "ladder" ? "  Steps:\n" : "  Known broken recipes (issue, date):\n");
    for (const char* n : e.notes) out << "    " << n << "\n";
  }
  if (!e.corrections.empty()) {
    out << "  Common advice, checked against the sources:\n";
    for (const char* c : e.corrections) out << "    - " << c << "\n";
  }
}

nlohmann::ordered_json ToJson(const Explanation& e) {
  return {{"id", e.id},       {"title", e.title}, {"symptom", e.symptom}, {"cause", e.cause},
          {"check", e.check}, {"fix", e.fix},     {"notes", e.notes},     {"corrections", e.corrections}};
}

}  // namespace

int CmdExplain(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("explain",
                    "Symptom, cause, how sparkops checks it, and the fix, for G1..G11 or the OOM "
                    "ladder. Without an argument, all of them.");
  std::string topic;
  app->add_option("topic", topic, "G1..G11 or ladder");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;

  std::string want = ToLower(topic);
  std::vector<const Explanation*> chosen;
  for (const Explanation& e : Explanations())
    if (want.empty() || want == ToLower(e.id)) chosen.push_back(&e);
  if (chosen.empty()) {
    ctx.err << "sparkops explain: unknown topic '" << topic << "' (use G1..G11 or ladder)\n";
    return kExitUsage;
  }
  if (ctx.json) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::array();
    for (const auto* e : chosen) doc.push_back(ToJson(*e));
    ctx.out << (chosen.size() == 1 ? JsonText(doc[0]) : JsonText(doc)) << "\n";
    return kExitOk;
  }
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (i) ctx.out << "\n";
    RenderText(ctx.out, *chosen[i]);
  }
  return kExitOk;
}

}  // namespace sparkops
