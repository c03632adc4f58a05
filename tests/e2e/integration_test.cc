// Cross-module wiring: the same classification, sample record and checks feed every command.
#include <gtest/gtest.h>

#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::RunInProcess;

TEST(Integration, ExporterUsesPsClassification) {
  auto r = RunInProcess({"--root", Fixture("gb10"), "exporter", "--once"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("sparkops_workload_running{kind=\"vllm\",pid=\"2101\",verdict=\"capped\"} 1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("sparkops_collector_success{collector=\"workloads\"} 1"), std::string::npos);
  auto ps = RunInProcess({"--root", Fixture("gb10"), "ps", "--json"});
  EXPECT_NE(ps.out.find("2101"), std::string::npos);
}

TEST(Integration, ExporterLabelsTrainersForTheContentionAlert) {
  auto r = RunInProcess({"--root", Fixture("workloads/contention"), "exporter", "--once"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("kind=\"trainer\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sparkops
