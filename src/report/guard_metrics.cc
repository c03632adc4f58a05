#include "report/guard_metrics.h"

#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "guard/policy.h"
#include "report/prometheus.h"

namespace sparkops {

namespace {
constexpr const char* kActions = "sparkops_memory_guard_actions_total";

std::string ActionsHelp() {
  std::string names;
  for (const guard::ReasonInfo& r : guard::Reasons()) names += (names.empty() ? "" : ", ") + std::string(r.name);
  return "Memory guard actions since boot (flush, terminate, kill; would_terminate in a dry run), by guard mode "
         "(host: sparkops guard, run: the guard of sparkops run) and reason (" +
         names + ").";
}

}  // namespace

const std::vector<MetricFamily>& GuardMetricFamilies() {
  static const std::string help = ActionsHelp();  // the reasons from the one table
  static const std::vector<MetricFamily> f = {
      {kActions, "counter", help.c_str()},
      {"sparkops_memory_guard_min_available_bytes", "gauge",
       "A running memory guard's floor on MemAvailable, bytes (labels mode, pid)."},
      {"sparkops_memory_guard_max_pressure_ratio", "gauge",
       "A running memory guard's limit on memory pressure (PSI full avg10), 0 to 1 (labels mode, pid)."},
  };
  return f;
}

std::vector<MetricPoint> GuardMetricPoints(const std::vector<GuardStatus>& guards) {
  std::map<std::tuple<std::string, std::string, std::string>, double> counts;  // mode, action, reason
  for (const GuardStatus& g : guards) {
    for (const guard::ReasonInfo& r : guard::Reasons())
      for (const char* action : {"flush", "terminate", "kill"})
        if (r.flush_series || std::string_view(action) != "flush")
          counts.emplace(std::tuple(g.ledger.mode, action, r.name), 0);
    for (const auto& [k, n] : g.ledger.actions) counts[{g.ledger.mode, k.first, k.second}] += static_cast<double>(n);
  }
  std::vector<MetricPoint> out;
  for (const auto& [k, n] : counts)
    out.push_back({kActions, {{"mode", std::get<0>(k)}, {"action", std::get<1>(k)}, {"reason", std::get<2>(k)}}, n});
  for (const GuardStatus& g : guards) {
    if (!g.live) continue;
    const std::vector<std::pair<std::string, std::string>> l = {{"mode", g.ledger.mode},
                                                                {"pid", std::to_string(g.ledger.pid)}};
    out.push_back({"sparkops_memory_guard_min_available_bytes", l, static_cast<double>(g.ledger.min_available_bytes)});
    if (g.ledger.max_pressure)
      out.push_back({"sparkops_memory_guard_max_pressure_ratio", l, *g.ledger.max_pressure / 100.0});
  }
  return out;
}

}  // namespace sparkops
