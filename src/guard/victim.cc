#include "guard/victim.h"

namespace sparkops::guard {

std::optional<size_t> PickVictim(std::span<const Candidate> c, const VictimRules& rules) {
  auto matches = [](const std::optional<std::regex>& re, const Candidate& k) {
    return re && std::regex_search(k.cmdline.empty() ? k.name : k.cmdline, *re);
  };
  std::optional<size_t> best, best_preferred;
  auto better = [&](const std::optional<size_t>& cur, size_t i) {
    return !cur || c[i].Score() > c[*cur].Score() || (c[i].Score() == c[*cur].Score() && c[i].pid < c[*cur].pid);
  };
  for (size_t i = 0; i < c.size(); ++i) {
    const Candidate& k = c[i];
    if (k.pid <= 1 || k.pid == rules.self || k.cmdline.empty() || !k.rss) continue;
    if (rules.only && !matches(rules.only, k)) continue;
    if (matches(rules.avoid, k)) continue;
    if (better(best, i)) best = i;
    if (matches(rules.prefer, k) && better(best_preferred, i)) best_preferred = i;
  }
  return best_preferred ? best_preferred : best;
}

}  // namespace sparkops::guard
