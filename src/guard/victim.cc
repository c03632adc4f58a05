#include "guard/victim.h"

namespace sparkops::guard {

std::string UnitOf(std::string_view cgroup) {
  while (!cgroup.empty()) {
    size_t slash = cgroup.rfind('/');
    std::string_view last = slash == std::string_view::npos ? cgroup : cgroup.substr(slash + 1);
    if (last.ends_with(".service") || last.ends_with(".scope")) return std::string(last);
    if (slash == std::string_view::npos) break;
    cgroup = cgroup.substr(0, slash);
  }
  return "";
}

std::optional<size_t> PickVictim(std::span<const Candidate> c, const VictimRules& rules) {
  auto exe_or_cmd = [](const std::optional<Pattern>& p, const Candidate& k) {
    return p && (p->Search(k.exe) || p->Search(k.cmdline));
  };
  auto avoided = [&](const Candidate& k) {
    if (rules.avoid &&
        ((!k.exe.empty() && rules.avoid->Search(k.exe)) || (!k.cgroup.empty() && rules.avoid->Search(k.cgroup))))
      return true;
    if (k.uid && rules.avoid_uids.count(*k.uid)) return true;
    return !rules.avoid_units.empty() && rules.avoid_units.count(UnitOf(k.cgroup)) > 0;
  };
  auto better = [&](const std::optional<size_t>& cur, size_t i) {
    if (!cur) return true;
    const Candidate &a = c[i], &b = c[*cur];
    if (a.Score() != b.Score()) return a.Score() > b.Score();
    if (a.oom_score.value_or(-1) != b.oom_score.value_or(-1))
      return a.oom_score.value_or(-1) > b.oom_score.value_or(-1);
    return a.pid < b.pid;
  };
  std::optional<size_t> best, best_preferred;
  for (size_t i = 0; i < c.size(); ++i) {
    const Candidate& k = c[i];
    if (k.pid <= 1 || rules.protect.count(k.pid) || k.kthread || k.oom_score_adj <= -1000 || !k.rss) continue;
    if (rules.only && !exe_or_cmd(rules.only, k)) continue;
    if (avoided(k)) continue;
    if (better(best, i)) best = i;
    if (exe_or_cmd(rules.prefer, k) && better(best_preferred, i)) best_preferred = i;
  }
  return best_preferred ? best_preferred : best;
}

}  // namespace sparkops::guard
