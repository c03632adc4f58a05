#include "report/prometheus.h"
#include "report/guard_metrics.h"
#include "report/kernel_metrics.h"
#include "report/power_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace sparkops {

namespace {
const MetricFamily kCollectionAge = {
    "sparkops_collection_age_seconds", "gauge",
    "Age of the served readings when served, seconds: the time since the collection that produced this body "
    "started (a slow collection runs on while the previous body is served)."};
}  // namespace

std::string CollectionAgeMetric(double seconds) {
  return fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3:.3f}\n", kCollectionAge.name, kCollectionAge.help,
                     kCollectionAge.type, seconds);
}

const std::vector<MetricFamily>& MetricFamilies() {
  static std::vector<MetricFamily> kFamilies = {
      {"sparkops_gpu_info", "gauge", "GPU identity (value 1): name and driver version as labels."},
      {"sparkops_gpu_temperature_celsius", "gauge", "GPU temperature in degrees Celsius."},
      {"sparkops_gpu_power_watts", "gauge", "GPU power draw in watts."},
      {"sparkops_gpu_power_limit_watts", "gauge", "GPU enforced power limit in watts (not reported on GB10)."},
      {"sparkops_gpu_sm_clock_hertz", "gauge", "Current SM clock in hertz."},
      {"sparkops_gpu_sm_clock_max_hertz", "gauge", "Maximum SM clock in hertz."},
      {"sparkops_gpu_utilization_ratio", "gauge", "GPU utilization, 0 to 1."},
      {"sparkops_gpu_energy_joules_total", "counter", "GPU energy consumed since the driver was loaded, joules."},
      {"sparkops_gpu_clock_event_reason", "gauge",
       "1 when the NVML clock-event reason is active, else 0 (one series per reason)."},
      {"sparkops_gpu_throttled", "gauge",
       "1 when a throttling clock-event reason (sw_power_cap, hw_slowdown, sw_thermal, hw_thermal, "
       "hw_power_brake) is active."},
      {"sparkops_gpu_pd_degraded", "gauge",
       "1 when the SM clock is below 1400 MHz at 80% or more utilization with no clock-event reason "
       "(power-delivery degraded suspect)."},
      {"sparkops_gpu_thermal_signature", "gauge",
       "1 when the sampler saw temperature climbing while power stayed flat."},
      {"sparkops_gpu_unified_memory", "gauge", "1 when the GPU reports no memory of its own (GB10 unified pool)."},
      {"sparkops_gpu_memory_total_bytes", "gauge", "Device memory total in bytes (absent on unified-memory GPUs)."},
      {"sparkops_gpu_memory_used_bytes", "gauge", "Device memory used in bytes (absent on unified-memory GPUs)."},
      {"sparkops_gpu_attributed_memory_bytes", "gauge",
       "Sum of the memory NVML attributes to processes on this host's GPUs, bytes."},
      {"sparkops_memory_total_bytes", "gauge", "MemTotal from /proc/meminfo, bytes."},
      {"sparkops_memory_available_bytes", "gauge", "MemAvailable from /proc/meminfo, bytes."},
      {"sparkops_memory_free_bytes", "gauge", "MemFree from /proc/meminfo, bytes."},
      {"sparkops_memory_page_cache_bytes", "gauge", "Reclaimable page cache (Cached + Buffers - Shmem), bytes."},
      {"sparkops_memory_swap_total_bytes", "gauge", "SwapTotal from /proc/meminfo, bytes."},
      {"sparkops_memory_swap_used_bytes", "gauge", "SwapTotal - SwapFree, bytes."},
      {"sparkops_memory_pressure_some_avg10_ratio", "gauge",
       "Memory pressure stall, some tasks, 10 s average (/proc/pressure/memory), 0 to 1."},
      // host contention (issue #24): node_exporter's pressure collector names, sparkops_ prefix
      {"sparkops_pressure_cpu_waiting_seconds_total", "counter",
       "Total time in seconds that processes have waited for CPU time (/proc/pressure/cpu some total)."},
      {"sparkops_pressure_io_waiting_seconds_total", "counter",
       "Total time in seconds that processes have waited due to IO congestion (/proc/pressure/io some total)."},
      {"sparkops_pressure_io_stalled_seconds_total", "counter",
       "Total time in seconds no process could make progress due to IO congestion (/proc/pressure/io full total)."},
      {"sparkops_workload_running", "gauge", "1 for each classified ML process (labels kind, pid, verdict)."},
      {"sparkops_workload_pool_bytes", "gauge", "A classified ML process's use of the memory pool, bytes."},
      {"sparkops_preflight_status", "gauge",
       "1 for the status of each preflight check at its last background run, 0 for the other statuses."},
      {"sparkops_preflight_last_run_timestamp_seconds", "gauge",
       "Unix time when the last background preflight run finished."},
      {"sparkops_sample_timestamp_seconds", "gauge", "Unix time when the served readings were taken."},
      {"sparkops_sampler_events_total", "counter",
       "Events found since the exporter started by the same rules as sample and run (throttle_start, "
       "pd_degraded, thermal_signature, hot, prochot_on, ...), by type; kernel-log records are in "
       "sparkops_kernel_events_total."},
      {"sparkops_collection_truncated", "gauge",
       "1 for the reason (time, bytes) the last collection's read budget ran out (exporter "
       "--collection-budget-ms, --collection-budget-bytes), its remaining processes left unread; 0 otherwise."},
      {"sparkops_collector_success", "gauge", "1 when the collector's last run succeeded, else 0."},
      {"sparkops_collector_duration_seconds", "gauge", "Wall time of the collector's last run, seconds."},
  };
  static const bool power_added = [] {  // issue 18: power rails, limits, PROCHOT, temperatures
    kFamilies.insert(kFamilies.end(), PowerMetricFamilies().begin(), PowerMetricFamilies().end());
    kFamilies.insert(kFamilies.end(), GuardMetricFamilies().begin(), GuardMetricFamilies().end());  // issue 19
    kFamilies.insert(kFamilies.end(), KernelMetricFamilies().begin(), KernelMetricFamilies().end());  // issue 33
    kFamilies.push_back(kCollectionAge);  // issue 29: appended by the live exporter's cache, last
    return true;
  }();
  (void)power_added;
  return kFamilies;
}

GpuStates DeriveGpuStates(const GpuReading& g, const std::vector<std::string>& events) {
  auto has_event = [&](std::string_view e) { return std::find(events.begin(), events.end(), e) != events.end(); };
  GpuStates s;
  if (g.clock_event_reasons) {
    uint64_t mask = 0;
    for (const auto& r : ClockEventReasons())
      if (r.throttling) mask |= r.bit;
    s.throttled = (*g.clock_event_reasons & mask) != 0;
    // "No reason bit" means no throttling bit: gpu_idle contradicts >= 80 % util anyway.
    if (g.sm_clock_mhz && g.util_pct)
      s.pd_degraded = *g.sm_clock_mhz < kPdDegradedClockMhz && *g.util_pct >= kPdDegradedMinUtilPct &&
                      (*g.clock_event_reasons & mask) == 0;
  }
  if (has_event("pd_degraded")) s.pd_degraded = true;
  if (has_event("thermal_signature")) s.thermal_signature = true;
  return s;
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

/// Collects series per family; Render() writes them in MetricFamilies() order with HELP/TYPE.
class Builder {
 public:
  void Add(const char* family, const Labels& labels, const std::string& value) {
    std::string line = family;
    if (!labels.empty()) {
      line += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i) line += ',';
        line += fmt::format("{}=\"{}\"", labels[i].first, EscapeLabelValue(labels[i].second));
      }
      line += '}';
    }
    line += ' ';
    line += value;
    line += '\n';
    series_[family] += line;
  }
  /// 15 significant digits: exact for every reading (mJ energy counters too) without binary noise.
  void Add(const char* family, const Labels& labels, double v) { Add(family, labels, fmt::format("{:.15g}", v)); }
  void Add(const char* family, const Labels& labels, uint64_t v) { Add(family, labels, fmt::format("{}", v)); }
  void Add(const char* family, const Labels& labels, bool v) { Add(family, labels, std::string(v ? "1" : "0")); }

  std::string Render() const {
    std::string out;
    for (const MetricFamily& f : MetricFamilies()) {
      auto it = series_.find(f.name);
      if (it == series_.end()) continue;
      out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name, f.type);
      out += it->second;
    }
    return out;
  }

 private:
  std::map<std::string, std::string> series_;
};

double UnixSeconds(SysTime t) { return static_cast<double>(ToUnixMillis(t)) / 1000.0; }

void AddGpu(Builder& b, const GpuReading& g, const std::vector<std::string>& events) {
  const Labels id = {{"gpu", std::to_string(g.index)}, {"uuid", g.uuid}};
  Labels info = id;
  info.emplace_back("name", g.name);
  if (g.driver_version) info.emplace_back("driver_version", *g.driver_version);
  b.Add("sparkops_gpu_info", info, true);
  if (g.temp_c) b.Add("sparkops_gpu_temperature_celsius", id, *g.temp_c);
  if (g.power_w) b.Add("sparkops_gpu_power_watts", id, *g.power_w);
  if (g.power_limit_w) b.Add("sparkops_gpu_power_limit_watts", id, *g.power_limit_w);
  if (g.sm_clock_mhz) b.Add("sparkops_gpu_sm_clock_hertz", id, uint64_t{*g.sm_clock_mhz} * 1000000);
  if (g.sm_clock_max_mhz) b.Add("sparkops_gpu_sm_clock_max_hertz", id, uint64_t{*g.sm_clock_max_mhz} * 1000000);
  if (g.util_pct) b.Add("sparkops_gpu_utilization_ratio", id, *g.util_pct / 100.0);
  if (g.energy_mj) b.Add("sparkops_gpu_energy_joules_total", id, static_cast<double>(*g.energy_mj) / 1000.0);
  if (g.clock_event_reasons) {
    for (const auto& r : ClockEventReasons()) {
      Labels l = id;
      l.emplace_back("reason", r.name);
      b.Add("sparkops_gpu_clock_event_reason", l, (*g.clock_event_reasons & r.bit) != 0);
    }
  }
  GpuStates s = DeriveGpuStates(g, events);
  if (s.throttled) b.Add("sparkops_gpu_throttled", id, *s.throttled);
  if (s.pd_degraded) b.Add("sparkops_gpu_pd_degraded", id, *s.pd_degraded);
  if (s.thermal_signature) b.Add("sparkops_gpu_thermal_signature", id, *s.thermal_signature);
  b.Add("sparkops_gpu_unified_memory", id, g.unified_memory);
  if (g.mem_total_bytes) b.Add("sparkops_gpu_memory_total_bytes", id, *g.mem_total_bytes);
  if (g.mem_used_bytes) b.Add("sparkops_gpu_memory_used_bytes", id, *g.mem_used_bytes);
}

void AddMemory(Builder& b, const MemInfo& m) {
  if (m.total) b.Add("sparkops_memory_total_bytes", {}, *m.total);
  if (m.available) b.Add("sparkops_memory_available_bytes", {}, *m.available);
  if (m.free) b.Add("sparkops_memory_free_bytes", {}, *m.free);
  if (auto pc = m.PageCache()) b.Add("sparkops_memory_page_cache_bytes", {}, *pc);
  if (m.swap_total) b.Add("sparkops_memory_swap_total_bytes", {}, *m.swap_total);
  if (auto su = m.SwapUsed()) b.Add("sparkops_memory_swap_used_bytes", {}, *su);
}

}  // namespace

std::string RenderMetrics(const ExporterInputs& in) {
  Builder b;
  static const std::vector<std::string> kNoEvents;
  for (size_t i = 0; i < in.gpus.size(); ++i)
    AddGpu(b, in.gpus[i], i == 0 && in.sample ? in.sample->events : kNoEvents);
  if (in.sample) {
    const Sample& s = *in.sample;
    if (s.gpu_attributed_bytes) b.Add("sparkops_gpu_attributed_memory_bytes", {}, *s.gpu_attributed_bytes);
    if (s.mem) AddMemory(b, *s.mem);
    if (s.mem_pressure_some_avg10)
      b.Add("sparkops_memory_pressure_some_avg10_ratio", {}, *s.mem_pressure_some_avg10 / 100.0);
    if (s.host) {  // host contention (issue #24): PSI only, never the runnable estimate
      if (s.host->cpu_some_total_s) b.Add("sparkops_pressure_cpu_waiting_seconds_total", {}, *s.host->cpu_some_total_s);
      if (s.host->io_some_total_s) b.Add("sparkops_pressure_io_waiting_seconds_total", {}, *s.host->io_some_total_s);
      if (s.host->io_full_total_s) b.Add("sparkops_pressure_io_stalled_seconds_total", {}, *s.host->io_full_total_s);
    }
    b.Add("sparkops_sample_timestamp_seconds", {}, UnixSeconds(s.time));
    if (s.power)  // issue 18 (report/power_metrics.h)
      for (const MetricPoint& m : PowerMetricPoints(*s.power)) b.Add(m.family, m.labels, m.value);
  }
  for (const auto& [type, n] : in.event_counts) b.Add("sparkops_sampler_events_total", {{"event", type}}, n);
  if (in.sample || in.kernel)  // issue 33 (report/kernel_metrics.h)
    for (const MetricPoint& m : KernelMetricPoints(in.kernel, in.sample ? in.sample->uma : std::nullopt))
      b.Add(m.family, m.labels, m.value);
  for (const WorkloadInfo& w : in.workloads) {
    const Labels l = {{"kind", w.kind}, {"pid", std::to_string(w.pid)}, {"verdict", w.verdict}};
    b.Add("sparkops_workload_running", l, true);
    if (w.pool_bytes) b.Add("sparkops_workload_pool_bytes", l, *w.pool_bytes);
  }
  if (in.preflight) {
    static const CheckStatus kAll[] = {CheckStatus::kPass, CheckStatus::kFail, CheckStatus::kWarn, CheckStatus::kSkip,
                                       CheckStatus::kInfo};
    for (const CheckResult& r : in.preflight->results)
      for (CheckStatus st : kAll)
        b.Add("sparkops_preflight_status", {{"check", r.id}, {"status", StatusName(st)}}, r.status == st);
    b.Add("sparkops_preflight_last_run_timestamp_seconds", {}, UnixSeconds(in.preflight->finished));
  }
  for (const MetricPoint& m : GuardMetricPoints(in.guards)) b.Add(m.family, m.labels, m.value);
  std::optional<std::string> truncated;  // issue 29: a state set over the reasons, once a budget was used
  for (const CollectorStatus& c : in.collectors)
    if (c.truncated && (!truncated || truncated->empty())) truncated = c.truncated;
  if (truncated)
    for (const char* reason : {"time", "bytes"})
      b.Add("sparkops_collection_truncated", {{"reason", reason}}, *truncated == reason);
  for (const CollectorStatus& c : in.collectors) {
    b.Add("sparkops_collector_success", {{"collector", c.name}}, c.success);
    b.Add("sparkops_collector_duration_seconds", {{"collector", c.name}}, c.duration_s);
  }
  return b.Render();
}

}  // namespace sparkops
