#include "report/prometheus.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <regex>
#include <set>
#include <sstream>

#include "host/meminfo.h"
#include "host/pressure.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::CheckGolden;
using testing::Fixture;
using testing::ReadFileOrDie;

/// A GB10-like reading (figures within the ranges in research gb10-nvml-behaviour.md: ~38 W at
/// ~96 % util, SW thermal slowdown 0x20 active, no power limit, no device memory).
GpuReading Gb10Reading() {
  GpuReading g;
  g.index = 0;
  g.name = "NVIDIA GB10";
  g.uuid = "GPU-5f1e2d3c-0000-4a5b-9c8d-0123456789ab";
  g.driver_version = "580.95.05";
  g.temp_c = 87;
  g.power_w = 38.25;
  g.sm_clock_mhz = 2405;
  g.sm_clock_max_mhz = 3003;
  g.util_pct = 96;
  g.clock_event_reasons = 0x20;
  g.energy_mj = 123456789;
  g.unified_memory = true;
  g.processes = {{4242, uint64_t{21474836480}}, {5151, std::nullopt}};
  return g;
}

/// A discrete GPU that reports memory and a power limit but no temperature.
GpuReading DiscreteReading() {
  GpuReading g;
  g.index = 1;
  g.name = "NVIDIA RTX \"6000\"";
  g.uuid = "GPU-aaaa";
  g.power_w = 71.5;
  g.power_limit_w = 300;
  g.mem_total_bytes = uint64_t{51527024640};
  g.mem_used_bytes = uint64_t{1048576};
  g.clock_event_reasons = 0x1;
  return g;
}

ExporterInputs FullInputs() {
  ExporterInputs in;
  in.gpus = {Gb10Reading(), DiscreteReading()};
  Sample s;
  s.time = FromUnixMillis(1795957349123);  // 2026-11-29T13:02:29.123Z
  s.gpu = in.gpus[0];
  auto mem = ParseMemInfo(ReadFileOrDie(Fixture("gb10") + "/proc/meminfo"));
  EXPECT_TRUE(mem.has_value());
  s.mem = *mem;
  s.mem_pressure_some_avg10 = 1.53;
  s.host = HostPressure{};
  s.host->source = "psi";
  s.host->cpu_some_total_s = 12.5;
  s.host->io_some_total_s = 3.25;
  s.host->io_full_total_s = 1.0;
  s.gpu_attributed_bytes = uint64_t{21474836480};
  s.events = {"thermal_signature"};
  in.event_counts = {{"hot", 0}, {"thermal_signature", 3}, {"throttle_start", 2}};
  s.power = ReadPowerReading(HostFs(Fixture("power/spbm_ewma")));  // issue 18: every power family
  // issue 33: fragmentation and pinned memory, and kernel-log counts since boot
  UmaPressure u;
  u.free_2m = 0;
  u.free_4m = 0;
  u.mlocked = uint64_t{66035122176};
  u.unevictable = uint64_t{66035122176};
  u.shmem = uint64_t{68719476736};
  u.shm_size = uint64_t{68719476736};
  s.uma = u;
  KernelSignals k;
  for (const char* t :
       {"NVRM: Out of memory [NV_ERR_NO_MEMORY]", "NVRM: Xid (PCI:000f:01:00): 31, pid=7, name=x, Ch 1"}) {
    KmsgRecord r;
    r.text = t;
    k.Add(r);
  }
  in.kernel = k;
  in.sample = s;
  in.workloads = {{"vllm", 4242, "uncapped", uint64_t{68719476736}}, {"trainer", 5151, "idle", std::nullopt}};
  PreflightSnapshot pf;
  pf.finished = FromUnixMillis(1795957300000);
  pf.results = {{"G1", CheckStatus::kFail, "cudart 12 in a CUDA 13 env", {}, "", false},
                {"G4", CheckStatus::kPass, "no throttling", {}, "", false}};
  in.preflight = pf;
  in.collectors = {{"gpu", true, 0.0125, ""}, {"memory", true, 0.0001, ""}, {"workloads", false, 0.5, "boom", "time"}};
  guard::Ledger g;  // a running `sparkops guard` that stopped one process
  g.pid = 4242, g.mode = "host", g.min_available_bytes = 6442450944, g.max_pressure = 40;
  g.actions[{"terminate", "min_available"}] = 1;
  in.guards = {{g, true}};
  return in;
}

TEST(Prometheus, GoldenFullInputs) { EXPECT_EQ(CheckGolden("exporter_metrics.prom", RenderMetrics(FullInputs())), ""); }

TEST(Prometheus, AbsentReadingsAreOmittedNeverZero) {
  ExporterInputs in;
  GpuReading g;  // nothing reported but identity
  g.uuid = "GPU-x";
  in.gpus = {g};
  Sample s;
  MemInfo m;
  m.total = 1024;  // MemAvailable not printed by this kernel
  s.mem = m;
  in.sample = s;
  std::string out = RenderMetrics(in);
  for (const char* absent :
       {"sparkops_gpu_temperature_celsius", "sparkops_gpu_power_watts", "sparkops_gpu_power_limit_watts",
        "sparkops_gpu_sm_clock_hertz", "sparkops_gpu_utilization_ratio", "sparkops_gpu_energy_joules_total",
        "sparkops_gpu_clock_event_reason", "sparkops_gpu_throttled", "sparkops_gpu_pd_degraded",
        "sparkops_gpu_memory_total_bytes", "sparkops_memory_available_bytes", "sparkops_memory_page_cache_bytes",
        "sparkops_memory_pressure_some_avg10_ratio", "sparkops_gpu_attributed_memory_bytes",
        "sparkops_preflight_status"})
    EXPECT_EQ(out.find(absent), std::string::npos) << absent << "\n" << out;
  EXPECT_NE(out.find("sparkops_memory_total_bytes 1024\n"), std::string::npos) << out;
  EXPECT_NE(out.find("sparkops_gpu_info{gpu=\"0\",uuid=\"GPU-x\",name=\"\"} 1\n"), std::string::npos) << out;
}

TEST(Prometheus, UnitsAreBaseUnits) {
  std::string out = RenderMetrics(FullInputs());
  const std::string id = "{gpu=\"0\",uuid=\"GPU-5f1e2d3c-0000-4a5b-9c8d-0123456789ab\"}";
  EXPECT_NE(out.find("sparkops_gpu_sm_clock_hertz" + id + " 2405000000\n"), std::string::npos);
  EXPECT_NE(out.find("sparkops_gpu_utilization_ratio" + id + " 0.96\n"), std::string::npos);
  EXPECT_NE(out.find("sparkops_gpu_energy_joules_total" + id + " 123456.789\n"), std::string::npos);
  EXPECT_NE(out.find("sparkops_memory_total_bytes 130663165952\n"), std::string::npos);  // 127600748 kB
  EXPECT_NE(out.find("sparkops_memory_pressure_some_avg10_ratio 0.0153\n"), std::string::npos);
}

TEST(Prometheus, OneSeriesPerClockEventReason) {
  std::string out = RenderMetrics(FullInputs());
  for (const auto& r : ClockEventReasons()) {
    std::string want = fmt::format(
        "sparkops_gpu_clock_event_reason{{gpu=\"0\",uuid=\"GPU-5f1e2d3c-0000-4a5b-9c8d-0123456789ab\",reason=\"{}\"}} "
        "{}\n",
        r.name, r.bit == 0x20 ? 1 : 0);
    EXPECT_NE(out.find(want), std::string::npos) << want;
  }
}

TEST(Prometheus, RendererEmitsExactlyTheFamilyTable) {
  // The live exporter's cache appends the collection's age to each body it serves.
  std::string out = RenderMetrics(FullInputs()) + CollectionAgeMetric(0.25);
  std::set<std::string> emitted, table;
  std::regex type_line("^# TYPE ([a-z0-9_]+) (gauge|counter)$");
  std::istringstream ss(out);
  for (std::string line; std::getline(ss, line);) {
    std::smatch m;
    if (std::regex_match(line, m, type_line)) emitted.insert(m[1]);
  }
  for (const MetricFamily& f : MetricFamilies()) {
    EXPECT_TRUE(table.insert(f.name).second) << "duplicate " << f.name;
    EXPECT_TRUE(std::regex_match(f.name, std::regex("sparkops_[a-z0-9_]+"))) << f.name;
    EXPECT_EQ(std::string(f.type) == "counter", std::string(f.name).ends_with("_total")) << f.name;
  }
  EXPECT_EQ(emitted, table);  // every family in the table is reachable from inputs, and nothing else
}

TEST(Prometheus, PreflightIsAStateSetPerCheck) {
  std::string out = RenderMetrics(FullInputs());
  EXPECT_NE(out.find("sparkops_preflight_status{check=\"G1\",status=\"FAIL\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("sparkops_preflight_status{check=\"G1\",status=\"PASS\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find("sparkops_preflight_status{check=\"G4\",status=\"PASS\"} 1\n"), std::string::npos);
}

TEST(Prometheus, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_NE(RenderMetrics(FullInputs()).find("name=\"NVIDIA RTX \\\"6000\\\"\""), std::string::npos);
}

TEST(Prometheus, DerivedStates) {
  struct Case {
    std::optional<uint64_t> reasons;
    std::optional<unsigned> clock, util;
    std::optional<bool> throttled, pd;
  } cases[] = {
      {0x20, 2400, 96, true, false},              // SW thermal slowdown
      {0x4, 2400, 96, true, false},               // SW power cap
      {0x1, 500, 0, false, false},                // idle, low clock: not degraded
      {0x0, 507, 95, false, true},                // hoesing's throttled row: 507 MHz, no reason bit
      {0x0, 1400, 95, false, false},              // at the threshold: not below
      {0x0, 858, 79, false, false},               // below 80 % util: cannot tell, not flagged
      {0x20, 600, 95, true, false},               // a reason bit explains the low clock
      {0x10, 600, 95, false, true},               // sync boost is not throttling
      {std::nullopt, 500, 95, std::nullopt, std::nullopt},  // no bitmask: cannot tell
      {0x0, std::nullopt, 95, false, std::nullopt},
  };
  for (const Case& c : cases) {
    GpuReading g;
    g.clock_event_reasons = c.reasons;
    g.sm_clock_mhz = c.clock;
    g.util_pct = c.util;
    GpuStates s = DeriveGpuStates(g, {});
    EXPECT_EQ(s.throttled, c.throttled) << (c.reasons ? *c.reasons : 999);
    EXPECT_EQ(s.pd_degraded, c.pd) << (c.clock ? *c.clock : 0);
    EXPECT_FALSE(s.thermal_signature.has_value());
  }
  GpuReading none;
  GpuStates ev = DeriveGpuStates(none, {"pd_degraded", "thermal_signature"});
  EXPECT_EQ(ev.pd_degraded, true);
  EXPECT_EQ(ev.thermal_signature, true);
}

TEST(Prometheus, CollectionTruncatedIsAStateSetOnlyOnceABudgetWasUsed) {
  ExporterInputs in;
  in.collectors = {{"gpu", true, 0.1, ""}};
  EXPECT_EQ(RenderMetrics(in).find("sparkops_collection_truncated"), std::string::npos);  // no budget: absent
  in.collectors.push_back({"workloads", true, 0.1, "", ""});
  std::string fit = RenderMetrics(in);
  EXPECT_NE(fit.find("sparkops_collection_truncated{reason=\"time\"} 0\n"), std::string::npos) << fit;
  EXPECT_NE(fit.find("sparkops_collection_truncated{reason=\"bytes\"} 0\n"), std::string::npos);
  in.collectors.back().truncated = "bytes";
  std::string cut = RenderMetrics(in);
  EXPECT_NE(cut.find("sparkops_collection_truncated{reason=\"time\"} 0\n"), std::string::npos) << cut;
  EXPECT_NE(cut.find("sparkops_collection_truncated{reason=\"bytes\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
