#include "telemetry/columns.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "telemetry/reasons.h"

namespace sparkops {
namespace {

template <typename T>
std::string Cell(const std::optional<T>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string();
}
std::string Gib(std::optional<uint64_t> v) { return v ? fmt::format("{:.3f}", ToGiB(*v)) : std::string(); }
std::string Count(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : std::string(); }
std::string Int(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string(); }

/// The first GPU's reading when it is good, else an empty one (a lost GPU empties every GPU column).
const GpuReading& Gpu(const Sample& s) {
  static const GpuReading none;
  return s.gpu && s.gpu->error.empty() ? *s.gpu : none;
}
const MemInfo& Mem(const Sample& s) {
  static const MemInfo none;
  return s.mem ? *s.mem : none;
}
const HostPressure& Host(const Sample& s) {
  static const HostPressure none;
  return s.host ? *s.host : none;
}
std::optional<double> PowerOf(const Sample& s, std::optional<double> (*f)(const PowerReading&)) {
  return s.power ? f(*s.power) : std::nullopt;
}

}  // namespace

const std::vector<SampleColumn>& SampleColumns() {
  static const std::vector<SampleColumn> kColumns = {
      {"timestamp", "", "timestamp", "gpu", "wall clock when the row was sampled (UTC, ms)",
       [](const Sample& s) { return FormatUtcMillis(s.time); }, "sparkops_sample_timestamp_seconds", ""},
      {"gpu_temp_c", "degC", "number", "gpu", "NVML / nvidia-smi temperature.gpu",
       [](const Sample& s) { return Cell(Gpu(s).temp_c, "{:g}"); }, "sparkops_gpu_temperature_celsius",
       "GPU temperature"},
      {"power_w", "W", "number", "gpu", "NVML power usage / nvidia-smi power.draw",
       [](const Sample& s) { return Cell(Gpu(s).power_w, "{:.2f}"); }, "sparkops_gpu_power_watts", "GPU power"},
      {"power_limit_w", "W", "number", "gpu", "NVML enforced power limit / nvidia-smi power.limit",
       [](const Sample& s) { return Cell(Gpu(s).power_limit_w, "{:.2f}"); }, "sparkops_gpu_power_limit_watts", ""},
      {"sm_clock_mhz", "MHz", "integer", "gpu", "NVML SM clock / nvidia-smi clocks.sm",
       [](const Sample& s) { return Cell(Gpu(s).sm_clock_mhz, "{}"); }, "sparkops_gpu_sm_clock_hertz", "SM clock"},
      {"clock_event_reasons", "", "hex", "gpu", "NVML clock-event reasons bitmask",
       [](const Sample& s) {
         const auto& r = Gpu(s).clock_event_reasons;
         return r ? FormatReasonMask(*r) : std::string();
       },
       "sparkops_gpu_clock_event_reason", ""},
      {"throttle", "", "text", "gpu", "the throttling reasons among the clock-event bits, \"+\"-joined",
       [](const Sample& s) {
         const auto& r = Gpu(s).clock_event_reasons;
         return r ? Join(ThrottleReasons(*r), "+") : std::string();
       },
       "sparkops_gpu_throttled", ""},
      {"mem_total_gib", "GiB", "number", "memory", "/proc/meminfo MemTotal",
       [](const Sample& s) { return Gib(Mem(s).total); }, "sparkops_memory_total_bytes", ""},
      {"mem_available_gib", "GiB", "number", "memory", "/proc/meminfo MemAvailable",
       [](const Sample& s) { return Gib(Mem(s).available); }, "sparkops_memory_available_bytes",
       "MemAvailable (system memory: the GPU's pool too on GB10)"},
      {"page_cache_gib", "GiB", "number", "memory", "/proc/meminfo Cached + Buffers - Shmem",
       [](const Sample& s) { return Gib(Mem(s).PageCache()); }, "sparkops_memory_page_cache_bytes", ""},
      {"swap_used_gib", "GiB", "number", "memory", "/proc/meminfo SwapTotal - SwapFree",
       [](const Sample& s) { return Gib(Mem(s).SwapUsed()); }, "sparkops_memory_swap_used_bytes", ""},
      {"mem_pressure_some_avg10", "percent", "number", "memory", "/proc/pressure/memory some avg10",
       [](const Sample& s) { return Cell(s.mem_pressure_some_avg10, "{:.2f}"); },
       "sparkops_memory_pressure_some_avg10_ratio", ""},
      {"sm_clock_max_mhz", "MHz", "integer", "gpu", "NVML max SM clock / nvidia-smi clocks.max.sm",
       [](const Sample& s) { return Cell(Gpu(s).sm_clock_max_mhz, "{}"); }, "sparkops_gpu_sm_clock_max_hertz", ""},
      {"gpu_util_pct", "percent", "integer", "gpu", "NVML utilization / nvidia-smi utilization.gpu",
       [](const Sample& s) { return Cell(Gpu(s).util_pct, "{}"); }, "sparkops_gpu_utilization_ratio", ""},
      {"energy_j", "J", "number", "gpu", "NVML total energy consumption (mJ) since the driver loaded",
       [](const Sample& s) {
         const auto& e = Gpu(s).energy_mj;
         return e ? fmt::format("{:.3f}", static_cast<double>(*e) / 1000.0) : std::string();
       },
       "sparkops_gpu_energy_joules_total", ""},
      {"gpu_attributed_gib", "GiB", "number", "gpu", "sum of NVML per-process used GPU memory",
       [](const Sample& s) { return Gib(s.gpu_attributed_bytes); }, "sparkops_gpu_attributed_memory_bytes", ""},
      {"mem_free_gib", "GiB", "number", "memory", "/proc/meminfo MemFree",
       [](const Sample& s) { return Gib(Mem(s).free); }, "sparkops_memory_free_bytes", ""},
      // issue 18: power and temperatures outside NVML (host/power_rails.h), before `event`
      {"cpu_temp_c", "degC", "number", "power", "hottest CPU sensor (spbm, thermal zones)",
       [](const Sample& s) { return Cell(PowerOf(s, [](const PowerReading& p) { return p.cpu_temp_c; }), "{:.1f}"); },
       "sparkops_cpu_temperature_celsius", "CPU temperature"},
      {"soc_temp_c", "degC", "number", "power", "the SoC sensor (spbm, thermal zones)",
       [](const Sample& s) { return Cell(PowerOf(s, [](const PowerReading& p) { return p.soc_temp_c; }), "{:.1f}"); },
       "sparkops_temperature_celsius", ""},
      {"sys_power_w", "W", "number", "power", "spbm sys_total rail",
       [](const Sample& s) {
         return Cell(PowerOf(s, [](const PowerReading& p) { return p.Rail("sys_total"); }), "{:.2f}");
       },
       "sparkops_power_watts", ""},
      {"soc_pkg_power_w", "W", "number", "power", "spbm pkg energy average, else the soc_pkg rail",
       [](const Sample& s) { return Cell(PowerOf(s, [](const PowerReading& p) { return p.SocPkgW(); }), "{:.2f}"); },
       "sparkops_power_watts", "SoC package power (spbm)"},
      {"cpu_power_w", "W", "number", "power", "spbm cpu_p + cpu_e",
       [](const Sample& s) { return Cell(PowerOf(s, [](const PowerReading& p) { return p.CpuW(); }), "{:.2f}"); },
       "sparkops_power_watts", ""},
      {"dc_input_w", "W", "number", "power", "spbm dc_input rail",
       [](const Sample& s) {
         return Cell(PowerOf(s, [](const PowerReading& p) { return p.Rail("dc_input"); }), "{:.2f}");
       },
       "sparkops_power_watts", "DC input (spbm)"},
      {"pl1_w", "W", "number", "power", "spbm PL1 limiter EWMA",
       [](const Sample& s) { return Cell(PowerOf(s, [](const PowerReading& p) { return p.Ewma("pl1"); }), "{:.2f}"); },
       "sparkops_power_limiter_ewma_watts", ""},
      {"pl1_cap_w", "W", "number", "power", "spbm PL1 cap",
       [](const Sample& s) { return Cell(PowerOf(s, [](const PowerReading& p) { return p.Cap("pl1"); }), "{:.2f}"); },
       "sparkops_power_limit_watts", ""},
      {"syspl1_w", "W", "number", "power", "spbm SysPL1 limiter EWMA",
       [](const Sample& s) {
         return Cell(PowerOf(s, [](const PowerReading& p) { return p.Ewma("syspl1"); }), "{:.2f}");
       },
       "sparkops_power_limiter_ewma_watts", ""},
      {"syspl1_cap_w", "W", "number", "power", "spbm SysPL1 cap",
       [](const Sample& s) {
         return Cell(PowerOf(s, [](const PowerReading& p) { return p.Cap("syspl1"); }), "{:.2f}");
       },
       "sparkops_power_limit_watts", ""},
      {"prochot", "", "integer", "power", "spbm prochot (non-zero: the hardware brake is on)",
       [](const Sample& s) { return s.power ? Int(s.power->prochot) : std::string(); }, "sparkops_prochot", ""},
      {"pl_level", "", "integer", "power", "spbm pl_level",
       [](const Sample& s) { return s.power ? Int(s.power->pl_level) : std::string(); }, "sparkops_power_limit_level",
       ""},
      {"event", "", "text", "event", "the sampler's events, \";\"-joined (telemetry/event_schema.h)",
       [](const Sample& s) { return Join(s.events, ";"); }, "", ""},
      // host contention (issue #24), appended after `event`
      {"cpu_pressure_pct", "percent", "number", "host", "/proc/pressure/cpu some avg10, else the runnable estimate",
       [](const Sample& s) { return Cell(Host(s).cpu_some, "{:.2f}"); }, "",
       "CPU pressure (some avg10; runnable estimate without PSI)"},
      {"io_pressure_some_pct", "percent", "number", "host", "/proc/pressure/io some avg10",
       [](const Sample& s) { return Cell(Host(s).io_some, "{:.2f}"); }, "", "I/O pressure (some avg10)"},
      {"io_pressure_full_pct", "percent", "number", "host", "/proc/pressure/io full avg10",
       [](const Sample& s) { return Cell(Host(s).io_full, "{:.2f}"); }, "", ""},
      {"pressure_source", "", "text", "host", "\"psi\" or \"runnable\": what cpu_pressure_pct holds",
       [](const Sample& s) { return Host(s).source; }, "", ""},
      {"job_cores", "cores", "number", "host", "`run`: CPU time of the job's process tree over the wall time",
       [](const Sample& s) { return Cell(s.job_cores, "{:.2f}"); }, "", "The job's CPU share"},
      {"other_cores", "cores", "number", "host", "`run`: CPU time of the rest of the host over the wall time",
       [](const Sample& s) { return Cell(s.other_cores, "{:.2f}"); }, "", "The rest of the host's CPU use"},
      // fragmentation and pinned memory (issue 33), appended
      {"free_2mib_blocks", "", "integer", "memory", "/proc/buddyinfo: free blocks of at least 2 MiB, all zones",
       [](const Sample& s) { return s.uma ? Count(s.uma->free_2m) : std::string(); }, "sparkops_memory_free_blocks",
       ""},
      {"free_4mib_blocks", "", "integer", "memory", "/proc/buddyinfo: free blocks of at least 4 MiB, all zones",
       [](const Sample& s) { return s.uma ? Count(s.uma->free_4m) : std::string(); }, "sparkops_memory_free_blocks",
       ""},
      {"mlocked_gib", "GiB", "number", "memory", "/proc/meminfo Mlocked",
       [](const Sample& s) { return s.uma ? Gib(s.uma->mlocked) : std::string(); }, "sparkops_memory_mlocked_bytes",
       ""},
      {"unevictable_gib", "GiB", "number", "memory", "/proc/meminfo Unevictable",
       [](const Sample& s) { return s.uma ? Gib(s.uma->unevictable) : std::string(); },
       "sparkops_memory_unevictable_bytes", ""},
      {"shmem_gib", "GiB", "number", "memory", "/proc/meminfo Shmem",
       [](const Sample& s) { return s.uma ? Gib(s.uma->shmem) : std::string(); }, "sparkops_memory_shmem_bytes", ""},
      {"dev_shm_gib", "GiB", "number", "memory", "size= of the /dev/shm tmpfs (/proc/self/mounts)",
       [](const Sample& s) { return s.uma ? Gib(s.uma->shm_size) : std::string(); }, "sparkops_dev_shm_size_bytes", ""},
      // who took the job's CPUs (issue 30), appended
      {"job_procs", "", "integer", "host", "`run`: processes in the job's tree (workers and children)",
       [](const Sample& s) { return s.job_procs ? std::to_string(*s.job_procs) : std::string(); }, "", ""},
      {"job_cpus", "", "integer", "host", "`run`: CPUs the job may run on (/proc/PID/status Cpus_allowed_list)",
       [](const Sample& s) { return s.job_cpus ? std::to_string(*s.job_cpus) : std::string(); }, "", ""},
      {"others_on_job_cpus", "cores", "number", "host",
       "`run`: busy time on the job's CPUs (/proc/stat) not used by the job, over the wall time",
       [](const Sample& s) { return Cell(s.others_on_job_cpus, "{:.2f}"); }, "", "Others on the job's CPUs"},
      {"cpu_steal_pct", "percent", "number", "host", "`run`: /proc/stat steal time of all CPUs (virtual machines)",
       [](const Sample& s) { return Cell(s.cpu_steal_pct, "{:.2f}"); }, "", ""},
  };
  return kColumns;
}

const SampleColumn* FindSampleColumn(std::string_view name) {
  for (const SampleColumn& c : SampleColumns())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace sparkops
