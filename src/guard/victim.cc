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

StopChoice ChooseStop(const Candidate& victim, const std::set<std::string>& protected_cgroups,
                      const VictimRules& rules) {
  const std::string_view cg = victim.cgroup;
  const size_t slash = cg.rfind('/');
  const std::string_view leaf = slash == std::string_view::npos ? cg : cg.substr(slash + 1);
  if (!leaf.ends_with(".service") && !leaf.ends_with(".scope"))
    return {"", "", "its cgroup is not a systemd service or scope"};
  // Every component above the unit is a slice: a unit nested in another unit (user@1000.service's
  // app.slice) or in a delegated tree is the owner's to manage, and then its processes are stopped
  // one by one.
  const std::string_view above = cg.substr(0, slash);
  if (!above.starts_with("/system.slice") && !above.starts_with("/user.slice"))
    return {"", "", "its unit is not under system.slice or user.slice"};
  for (std::string_view rest = above.substr(1); !rest.empty();) {
    const size_t next = rest.find('/');
    if (!rest.substr(0, next).ends_with(".slice")) return {"", "", "its unit is inside another unit"};
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
  }
  const std::string unit(leaf);
  if (rules.avoid_units.count(unit)) return {"", "", "--avoid-unit " + unit};
  for (const std::string& p : protected_cgroups)
    if (p == cg || (p.size() > cg.size() && p.starts_with(cg) && p[cg.size()] == '/'))
      return {"", "", "the guard, an ancestor of it or PID 1 is in " + unit};
  return {unit, std::string(cg), ""};
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
