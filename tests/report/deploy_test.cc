// deploy/: the Grafana dashboard and the Prometheus rules may only query metrics the exporter's
// renderer emits (the list comes from MetricFamilies(), the table RenderMetrics writes from).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "base/strings.h"
#include "report/prometheus.h"
#include "test_util.h"

namespace sparkops {
namespace {

std::string Deploy(const std::string& rel) { return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/../deploy/" + rel; }

/// Metric names a PromQL expression selects: strings, label matchers, ranges and grouping
/// clauses are removed; identifiers followed by '(' are functions; keywords are skipped.
std::set<std::string> MetricNames(std::string expr) {
  expr = std::regex_replace(expr, std::regex(R"("([^"\\]|\\.)*")"), " ");
  expr = std::regex_replace(expr, std::regex(R"(\{[^}]*\})"), " ");
  expr = std::regex_replace(expr, std::regex(R"(\[[^\]]*\])"), " ");
  expr = std::regex_replace(expr, std::regex(R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))"), " ");
  static const std::set<std::string> kKeywords = {"and",         "or",      "unless", "bool",     "offset",
                                                  "by",          "without", "on",     "ignoring", "group_left",
                                                  "group_right", "inf",     "nan"};
  std::set<std::string> names;
  std::regex ident(R"([A-Za-z_:][A-Za-z0-9_:]*)");
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), ident); it != std::sregex_iterator(); ++it) {
    size_t end = static_cast<size_t>(it->position() + it->length());
    if (it->position() > 0 &&
        (std::isdigit(static_cast<unsigned char>(expr[it->position() - 1])) || expr[it->position() - 1] == '.'))
      continue;  // the tail of a number or duration (1e3, 5m)
    size_t next = expr.find_first_not_of(" \t\n", end);
    if (next != std::string::npos && expr[next] == '(') continue;  // a function
    if (kKeywords.count(ToLower(it->str()))) continue;
    names.insert(it->str());
  }
  return names;
}

std::set<std::string> Exported() {
  std::set<std::string> s;
  for (const MetricFamily& f : MetricFamilies()) s.insert(f.name);
  return s;
}

TEST(DeployPromql, MetricNameExtraction) {
  EXPECT_EQ(MetricNames(R"(sum by (instance) (rate(foo_total{a="b c"}[5m])) > 0.5 and on(instance) bar)"),
            (std::set<std::string>{"foo_total", "bar"}));
  EXPECT_EQ(MetricNames("max(x) == 1e3 unless y offset 5m"), (std::set<std::string>{"x", "y"}));
}

TEST(DeployGrafana, DashboardQueriesOnlyExportedMetrics) {
  auto doc = nlohmann::json::parse(testing::ReadFileOrDie(Deploy("grafana/dashboard.json")));  // throws if invalid
  ASSERT_TRUE(doc.contains("panels"));
  const auto exported = Exported();
  std::set<std::string> used;
  int queries = 0;
  for (const auto& panel : doc["panels"]) {
    ASSERT_TRUE(panel.contains("targets")) << panel.value("title", "?");
    for (const auto& t : panel["targets"]) {
      std::string expr = t.at("expr");
      auto names = MetricNames(expr);
      EXPECT_FALSE(names.empty()) << expr;
      for (const auto& n : names) {
        EXPECT_TRUE(exported.count(n)) << "panel '" << panel.value("title", "?") << "' queries " << n
                                       << ", which the exporter does not export";
        used.insert(n);
      }
      ++queries;
    }
  }
  EXPECT_GE(queries, 10);
  // The fleet view covers what the issue asks for: temperature, power, SM clock, memory, throttle
  // reasons, workloads.
  for (const char* want :
       {"sparkops_gpu_temperature_celsius", "sparkops_gpu_power_watts", "sparkops_gpu_sm_clock_hertz",
        "sparkops_memory_available_bytes", "sparkops_gpu_clock_event_reason", "sparkops_workload_pool_bytes"})
    EXPECT_TRUE(used.count(want)) << want;
  for (const auto& v : doc["templating"]["list"]) {
    if (!v.contains("definition")) continue;
    std::smatch m;
    std::string def = v["definition"];
    ASSERT_TRUE(std::regex_search(def, m, std::regex(R"(label_values\((\w+),)"))) << def;
    EXPECT_TRUE(exported.count(m[1])) << def;
  }
}

TEST(DeployPrometheus, RulesQueryOnlyExportedMetrics) {
  YAML::Node rules = YAML::LoadFile(Deploy("prometheus/sparkops-rules.yml"));
  auto allowed = Exported();
  allowed.insert("up");  // Prometheus's own scrape-health series
  int n = 0;
  for (const auto& group : rules["groups"])
    for (const auto& rule : group["rules"]) {
      std::string expr = rule["expr"].as<std::string>();
      auto names = MetricNames(expr);
      EXPECT_FALSE(names.empty()) << expr;
      for (const auto& name : names)
        EXPECT_TRUE(allowed.count(name)) << rule["alert"].as<std::string>() << ": " << name;
      ++n;
    }
  EXPECT_GE(n, 6);
}

}  // namespace
}  // namespace sparkops
