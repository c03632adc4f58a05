// The planner against measured peaks (tests/data/memory-validation.csv): every row with a
// `sparkops_args` cell is planned with those flags (the cell beside it gives their source) and
// compared like with like: torch allocated/active figures with `allocated_peak_gib`, reserved
// figures with `reserved_peak_gib`. The targets are issue 20's; the constants of the accounting
// are not fitted to these rows (docs/memory-model.md gives each one's source).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "test_util.h"

namespace sparkops {
namespace {

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out(1);
  bool q = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (q && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') q = !q;
    else if (c == ',' && !q) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

struct Scored {
  std::string id, method, half;  ///< half: "tuned" or "held-out" (never used to change the accounting)
  double err = 0;       ///< (central - measured) / measured
  double err_high = 0;  ///< the high end's (what verdicts use)
};

std::vector<Scored> ScoreRows() {
  std::vector<Scored> out;
  std::ifstream in(std::string(SPARKOPS_TEST_SOURCE_DIR) + "/data/memory-validation.csv");
  EXPECT_TRUE(in);
  std::string line;
  std::getline(in, line);
  auto header = SplitCsvLine(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  while (std::getline(in, line)) {
    auto f = SplitCsvLine(line);
    auto cell = [&](const char* k) { return f.at(col.at(k)); };
    if (cell("sparkops_args").empty()) continue;
    std::vector<std::string> args = {"--json", "plan"};
    const std::string flags = cell("sparkops_args");
    for (auto a : Split(flags, ' '))
      if (!a.empty()) args.emplace_back(a);
    args.insert(args.end(), {"--budget-gib", "1000"});
    auto r = testing::RunInProcess(args);
    EXPECT_EQ(r.rc, 0) << cell("id") << ": " << r.err;
    if (r.rc != 0) continue;
    auto j = nlohmann::json::parse(r.out);
    const bool reserved = cell("what_measured").find("reserved") != std::string::npos;
    const char* key = reserved ? "reserved_peak_gib" : "allocated_peak_gib";
    const double gib_to_gb = 1.073741824, measured = std::stod(cell("measured_peak_gb"));
    Scored s{cell("id"), j["options"]["method"].get<std::string>(), col.count("half") ? cell("half") : "tuned"};
    s.err = j[key].get<double>() * gib_to_gb / measured - 1;
    s.err_high = j["range"][key]["high"].get<double>() * gib_to_gb / measured - 1;
    std::printf("%-6s %-8s %-5s measured %6.2f GB (%s) central %+6.1f%%  high %+6.1f%%\n", s.id.c_str(), s.half.c_str(),
                s.method.c_str(), measured, key, 100 * s.err, 100 * s.err_high);
    out.push_back(s);
  }
  return out;
}

/// Linear-interpolated quantile of `v` (0..1).
double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = size_t(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

TEST(MemoryAccuracy, ValidationRowsMeetIssue20Targets) {
  auto rows = ScoreRows();
  ASSERT_GE(rows.size(), 11u);
  std::vector<double> abs;
  std::map<std::string, std::vector<double>> by_method;
  for (const auto& r : rows) {
    abs.push_back(std::fabs(r.err));
    by_method[r.method].push_back(r.err);
    EXPECT_GE(r.err, -0.20) << r.id << " under-predicted by more than 20 %";
    EXPECT_GE(r.err_high, r.err - 1e-9) << r.id << ": the high end is below the central figure";
  }
  const double median = Quantile(abs, 0.5), p90 = Quantile(abs, 0.9);
  std::printf("median |error| %.1f%%, p90 %.1f%%\n", 100 * median, 100 * p90);
  EXPECT_LE(median, 0.10);
  EXPECT_LE(p90, 0.25);
  for (const auto& [method, errs] : by_method) {
    const double signed_median = Quantile(errs, 0.5);
    std::printf("%-5s signed median %+.1f%% (%zu rows)\n", method.c_str(), 100 * signed_median, errs.size());
    EXPECT_LE(signed_median, 0.15) << method;
    EXPECT_GE(signed_median, -0.05) << method;
  }
  EXPECT_EQ(by_method.size(), 3u);
  // Issue 36: the high end (what verdicts use) under the measurement in at most 10 % of the rows,
  // and the held-out half reported on its own.
  size_t under = 0;
  std::vector<double> held;
  for (const auto& r : rows) {
    under += r.err_high < 0;
    if (r.half == "held-out") held.push_back(std::fabs(r.err));
  }
  std::printf("high end under the measurement: %zu of %zu rows\n", under, rows.size());
  EXPECT_LE(double(under), 0.10 * double(rows.size()));
  ASSERT_FALSE(held.empty());
  std::printf("held-out half: %zu rows, median |error| %.1f%%\n", held.size(), 100 * Quantile(held, 0.5));
}

}  // namespace
}  // namespace sparkops
