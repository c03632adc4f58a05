// The exporter's collection uses the one Sampler and EventDetector of `sample` and `run`: the same
// stub-NVML scenario gives the exporter's event counter the events `sample` writes, and the
// sampler's sources are collector statuses.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "exporter/collectors.h"
#include "report/prometheus.h"
#include "telemetry/event_schema.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::Fixture;
using testing::ScopedEnv;

HostView StubGb10() {
  HostOptions o{Fixture("gb10"), BuildArtifact("libnvidia-ml-stub.so"), "none"};
  return HostView{o, HostFs(o.root), {}};
}

TEST(ExporterCollector, CountsTheSamplersEventsAcrossCollections) {
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO",
               std::string(SPARKOPS_TEST_SOURCE_DIR) + "/stub_nvml/scenarios/gb10_load.txt");
  const HostView ctx = StubGb10();
  Collector c(ctx);
  Collection last;
  for (int i = 0; i < 11; ++i) last = c.Collect();  // sample --count 11 over the same scenario
  const auto& n = last.inputs.event_counts;
  // sample's golden run of this scenario (SampleCmd.GoldenGb10LoadScenario) has exactly these
  const std::map<std::string, uint64_t> want = {
      {"thermal_signature", 1}, {"throttle_start", 2}, {"hot", 1}, {"throttle_end", 1}, {"pd_degraded", 1}};
  for (const auto& [type, count] : want) EXPECT_EQ(n.count(type) ? n.at(type) : 0, count) << type;
  // every type the detector emits is there from 0, and nothing else (loop and kernel types are not)
  for (const EventType& t : SampleEventTypes())
    EXPECT_EQ(n.count(std::string(t.name)), t.source == EventSource::kDetector ? 1u : 0u) << t.name;
  const std::string body = RenderMetrics(last.inputs);
  EXPECT_NE(body.find("sparkops_sampler_events_total{event=\"throttle_start\"} 2\n"), std::string::npos) << body;
  EXPECT_NE(body.find("sparkops_sampler_events_total{event=\"prochot_on\"} 0\n"), std::string::npos) << body;
}

TEST(ExporterCollector, TheSamplersSourcesAreCollectorStatuses) {
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO",
               std::string(SPARKOPS_TEST_SOURCE_DIR) + "/stub_nvml/scenarios/gb10_load.txt");
  const HostView ctx = StubGb10();
  Collection c = Collector(ctx).Collect();
  std::map<std::string, bool> ok;
  for (const CollectorStatus& s : c.inputs.collectors) ok[s.name] = s.success;
  for (const char* name : {"gpu", "memory", "pressure", "power", "workloads", "guard", "kernel"})
    EXPECT_TRUE(ok.count(name)) << name;
  EXPECT_TRUE(ok["gpu"]);
  EXPECT_TRUE(ok["memory"]);
  ASSERT_FALSE(c.gpu.gpus.empty());
  ASSERT_TRUE(c.inputs.sample && c.inputs.sample->gpu);
  EXPECT_EQ(c.inputs.sample->gpu->uuid, c.gpu.gpus.front().uuid);
  EXPECT_TRUE(c.mem.has_value());
  // no GPU: the gpu collector fails with the sampler's reason; memory still reads
  HostOptions o{Fixture("laptop"), "none", "none"};
  const HostView none{o, HostFs(o.root), {}};
  Collection n = Collector(none).Collect();
  for (const CollectorStatus& s : n.inputs.collectors)
    if (s.name == "gpu") {
      EXPECT_FALSE(s.success);
      EXPECT_NE(s.error.find("NVML"), std::string::npos) << s.error;
    }
  EXPECT_TRUE(n.mem.has_value());
}

}  // namespace
}  // namespace sparkops
