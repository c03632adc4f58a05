// The registry of sample columns (telemetry/columns.h): it is the CSV header, every row is
// described and documented, and each Prometheus family it names is one the exporter serves.
#include <gtest/gtest.h>

#include <set>

#include "report/power_metrics.h"
#include "report/prometheus.h"
#include "telemetry/columns.h"
#include "telemetry/csv.h"
#include "telemetry/power_csv.h"
#include "test_util.h"

namespace sparkops {
namespace {

TEST(SampleColumns, TheRegistryIsTheHeader) {
  std::vector<std::string> names;
  for (const SampleColumn& c : SampleColumns()) names.emplace_back(c.name);
  EXPECT_EQ(names, CsvColumns());
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "a name listed twice";
  EXPECT_EQ(FindSampleColumn("gpu_temp_c")->unit, "degC");
  EXPECT_EQ(FindSampleColumn("no_such_column"), nullptr);
  EXPECT_EQ(PowerCsvColumns().size(), 12u);
}

TEST(SampleColumns, EveryColumnIsDescribedDocumentedAndItsFamilyServed) {
  std::set<std::string> families;
  for (const auto& f : MetricFamilies()) families.insert(f.name);
  for (const auto& f : PowerMetricFamilies()) families.insert(f.name);
  const std::string doc = testing::ReadFileOrDie(std::string(SPARKOPS_TEST_SOURCE_DIR) + "/../docs/telemetry.md");
  const std::set<std::string> types = {"timestamp", "number", "integer", "hex", "text"};
  Sample empty;
  for (const SampleColumn& c : SampleColumns()) {
    const std::string n(c.name);
    SCOPED_TRACE(n);
    EXPECT_TRUE(types.count(std::string(c.type))) << c.type;
    EXPECT_FALSE(c.group.empty());
    EXPECT_FALSE(c.source.empty());
    ASSERT_NE(c.cell, nullptr);
    if (n != "timestamp") {
      EXPECT_EQ(c.cell(empty), "") << "an absent reading is an empty cell, never 0";
    }
    if (!c.prometheus.empty()) {
      EXPECT_TRUE(families.count(std::string(c.prometheus))) << c.prometheus;
    }
    EXPECT_TRUE(doc.find("`" + n + "`") != std::string::npos) << "no docs/telemetry.md row";
  }
}

}  // namespace
}  // namespace sparkops
