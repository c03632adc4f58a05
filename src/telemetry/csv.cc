#include "telemetry/csv.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "telemetry/power_csv.h"
#include "telemetry/reasons.h"
#include "telemetry/uma_csv.h"

namespace sparkops {
namespace {

template <typename T>
std::string Cell(const std::optional<T>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string();
}
std::string Gib(std::optional<uint64_t> v) { return v ? fmt::format("{:.3f}", ToGiB(*v)) : std::string(); }

}  // namespace

const std::vector<std::string>& CsvColumns() {
  static std::vector<std::string> c = {"timestamp", "gpu_temp_c", "power_w", "power_limit_w", "sm_clock_mhz",
                                       "clock_event_reasons", "throttle", "mem_total_gib", "mem_available_gib",
                                       "page_cache_gib", "swap_used_gib", "mem_pressure_some_avg10", "sm_clock_max_mhz",
                                       "gpu_util_pct", "energy_j", "gpu_attributed_gib", "mem_free_gib", "event",
      // host contention (issue #24), appended
                                       "cpu_pressure_pct", "io_pressure_some_pct", "io_pressure_full_pct",
                                       "pressure_source", "job_cores", "other_cores"};
  static const bool power_added = [] {  // issue 18: the power columns, before `event`
    c.insert(std::find(c.begin(), c.end(), "event"), PowerCsvColumns().begin(), PowerCsvColumns().end());
    return true;
  }();
  (void)power_added;
  static const bool uma_added = [] {  // issue 33: fragmentation and pinned memory, appended
    c.insert(c.end(), UmaCsvColumns().begin(), UmaCsvColumns().end());
    return true;
  }();
  (void)uma_added;
  return c;
}

std::string CsvHeader() { return Join(CsvColumns(), ",") + "\n"; }

std::string CsvRow(const Sample& s) {
  GpuReading none;
  const GpuReading& g = s.gpu && s.gpu->error.empty() ? *s.gpu : none;
  MemInfo no_mem;
  const MemInfo& m = s.mem ? *s.mem : no_mem;
  std::optional<double> energy_j;
  if (g.energy_mj) energy_j = static_cast<double>(*g.energy_mj) / 1000.0;
  std::string reasons, throttle;
  if (g.clock_event_reasons) {
    reasons = FormatReasonMask(*g.clock_event_reasons);
    throttle = Join(ThrottleReasons(*g.clock_event_reasons), "+");
  }
  std::vector<std::string> cells = {
      FormatUtcMillis(s.time),
      Cell(g.temp_c, "{:g}"),
      Cell(g.power_w, "{:.2f}"),
      Cell(g.power_limit_w, "{:.2f}"),
      Cell(g.sm_clock_mhz, "{}"),
      reasons,
      throttle,
      Gib(m.total),
      Gib(m.available),
      Gib(m.PageCache()),
      Gib(m.SwapUsed()),
      Cell(s.mem_pressure_some_avg10, "{:.2f}"),
      Cell(g.sm_clock_max_mhz, "{}"),
      Cell(g.util_pct, "{}"),
      Cell(energy_j, "{:.3f}"),
      Gib(s.gpu_attributed_bytes),
      Gib(m.free),
      Join(s.events, ";"),
  };
  auto power = PowerCsvCells(s.power ? &*s.power : nullptr);  // issue 18, before `event`
  cells.insert(cells.end() - 1, power.begin(), power.end());
  // host contention (issue #24), appended
  const HostPressure no_host;
  const HostPressure& h = s.host ? *s.host : no_host;
  for (std::string c : {Cell(h.cpu_some, "{:.2f}"), Cell(h.io_some, "{:.2f}"), Cell(h.io_full, "{:.2f}"), h.source,
                        Cell(s.job_cores, "{:.2f}"), Cell(s.other_cores, "{:.2f}")})
    cells.push_back(std::move(c));
  for (std::string& c : UmaCsvCells(s)) cells.push_back(std::move(c));  // issue 33, appended
  return Join(cells, ",") + "\n";
}

}  // namespace sparkops
