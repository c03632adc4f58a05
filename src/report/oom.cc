#include "report/oom.h"

#include <fmt/format.h>

#include "base/json_text.h"
#include "report/plan.h"
#include "report/run_memory.h"

namespace sparkops {

using namespace memory;

nlohmann::json OomJson(const Ladder& ladder, const std::optional<OomSignature>& sig, const std::optional<Plan>& plan) {
  nlohmann::json j;
  j["next_step"] = ladder.next;
  j["why"] = ladder.why_next;
  j["page_cache_gib"] = OrNull(ladder.page_cache_gib);
  j["steps"] = LadderStepsJson(ladder);
  j["oom"] = sig ? OomSignatureJson(*sig) : nlohmann::json();
  j["plan"] = plan ? PlanJson(*plan) : nlohmann::json();
  return j;
}

std::string OomText(const Ladder& ladder, const std::optional<OomSignature>& sig, const std::string& log) {
  std::string out;
  if (sig) {
    if (sig->kind == OomKind::kNone) {
      out += fmt::format("log {}: no OOM message found\n", log);
    } else {
      out += fmt::format("log {}: {} during {}{}\n  {}\n", log, ToString(sig->kind), ToString(sig->phase),
                         sig->bitsandbytes ? " (bitsandbytes frames)" : "", sig->line);
      if (sig->tried_gib)
        out += fmt::format("  tried to allocate {:.2f} GiB{}\n", *sig->tried_gib,
                           sig->free_gib ? fmt::format("; {:.2f} GiB free", *sig->free_gib) : "");
    }
  }
  for (const auto& s : ladder.steps)
    out += fmt::format("{} {}. {}\n     {}\n", s.number == ladder.next ? "->" : "  ", s.number, s.title, s.detail);
  out += fmt::format("next: step {} - {}\n", ladder.next, ladder.why_next);
  return out;
}

}  // namespace sparkops
