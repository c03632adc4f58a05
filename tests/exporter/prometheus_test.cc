// Integration: a real Prometheus (Debian `prometheus`) on loopback scrapes a real exporter, and
// the series Prometheus stores equal the exporter's input.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "exporter_child.h"
#include "http_client.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Child;

std::optional<std::string> FindPrometheus() {
  for (const char* p : {"/usr/bin/prometheus", "/usr/local/bin/prometheus"})
    if (std::filesystem::exists(p)) return std::string(p);
  return std::nullopt;
}

/// Runs an instant query; returns the result array (empty on any failure).
nlohmann::json Query(int port, const std::string& promql) {
  std::string query;
  for (unsigned char ch : promql) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') query += static_cast<char>(ch);
    else query += fmt::format("%{:02X}", ch);
  }
  testing::HttpClient c(port);
  c.set_read_timeout(2);
  auto res = c.Get("/api/v1/query?query=" + query);
  if (!res || res->status != 200) return nlohmann::json::array();
  auto doc = nlohmann::json::parse(res->body, nullptr, false);
  if (doc.is_discarded() || doc.value("status", "") != "success") return nlohmann::json::array();
  return doc["data"]["result"];
}

TEST(ExporterPrometheus, RealPrometheusScrapesFixtureMemory) {
  auto prom = FindPrometheus();
  if (!prom) GTEST_SKIP() << "prometheus not installed (Debian package `prometheus`, see scripts/setup.sh)";

  // The GPU through the stub NVML (GB10 mode: 41 degC idle), so a GPU series can be checked end to end.
  Child exporter(testing::TargetArgv({testing::SparkopsBin(), "--root", testing::Fixture("gb10"), "--nvml",
                                      testing::BuildArtifact("libnvidia-ml-stub.so"), "exporter", "--listen",
                                      "127.0.0.1:0", "--preflight-interval", "0"}));
  auto line = exporter.ReadLine(10000);
  ASSERT_TRUE(line.has_value());
  std::string target = line->substr(line->find("127.0.0.1:"));
  target = target.substr(0, target.find('/'));

  testing::TempDir dir;
  dir.Write("prometheus.yml",
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: sparkops\n    static_configs:\n"
            "      - targets: ['" +
                target + "']\n");
  int port = testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  Child prometheus({*prom, "--config.file=" + dir.path() + "/prometheus.yml",
                    "--storage.tsdb.path=" + dir.path() + "/data",
                    "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=error"},
                   dir.path() + "/prometheus.log");
  ASSERT_TRUE(prometheus.started());

  // Up to 25 s for Prometheus to start and scrape twice; typically 2-3 s.
  nlohmann::json up, total;
  for (int i = 0; i < 100; ++i) {
    up = Query(port, "up{job=\"sparkops\"}");
    total = Query(port, "sparkops_memory_total_bytes");
    if (!up.empty() && up[0]["value"][1] == "1" && !total.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_EQ(up.size(), 1u) << "no scrape recorded; prometheus log: " << dir.path() << "/prometheus.log";
  EXPECT_EQ(up[0]["value"][1], "1");
  EXPECT_EQ(up[0]["metric"]["instance"], target);
  ASSERT_EQ(total.size(), 1u);
  EXPECT_EQ(total[0]["value"][1], std::to_string(uint64_t{127600748} * 1024));  // MemTotal (kB) x 1024
  auto gpu_ok = Query(port, "sparkops_collector_success{collector=\"gpu\"}");
  ASSERT_EQ(gpu_ok.size(), 1u);
  EXPECT_EQ(gpu_ok[0]["value"][1], "1");
  auto temp = Query(port, "sparkops_gpu_temperature_celsius");
  ASSERT_EQ(temp.size(), 1u);
  EXPECT_EQ(temp[0]["value"][1], "41");  // the stub's GB10 reading
  EXPECT_EQ(temp[0]["metric"]["gpu"], "0");
  EXPECT_TRUE(Query(port, "sparkops_gpu_power_limit_watts").empty());  // GB10 reports none: omitted, not 0

  EXPECT_TRUE(prometheus.Stop(SIGTERM, 10000).has_value());
  auto st = exporter.Stop(SIGTERM, 5000);
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0);
}

}  // namespace
}  // namespace sparkops
