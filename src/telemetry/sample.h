#pragma once
/// One sample record: the GPU and the memory pool at one moment. The same record feeds `sample`
/// (CSV rows), `run` (thermal.csv), `analyze` (reads the CSV back) and `exporter` (metrics).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/timefmt.h"
#include "host/buddyinfo.h"
#include "host/cpu_pressure.h"
#include "host/gpu.h"
#include "host/kmsg.h"
#include "host/meminfo.h"
#include "host/power_rails.h"

namespace sparkops {

struct Sample {
  SysTime time{};                              ///< wall clock when the sample was taken
  std::optional<GpuReading> gpu;               ///< the first GPU; absent when none is readable
  std::optional<MemInfo> mem;                  ///< /proc/meminfo
  std::optional<double> mem_pressure_some_avg10;  ///< /proc/pressure/memory "some avg10", percent
  std::optional<uint64_t> gpu_attributed_bytes;   ///< sum of per-process NVML used memory
  std::vector<std::string> events;             ///< throttle_start:..., throttle_end, pd_degraded, ...
  std::string gpu_source;                      ///< "nvml", "nvidia-smi", "nvml+nvidia-smi", "none"
  /// Why the GPU columns are empty: no GPU readable, or the GPU was lost mid-run ("" otherwise).
  std::string gpu_note;
  /// Power rails, limits, PROCHOT, CPU/SoC temperatures (spbm hwmon, thermal zones); absent when
  /// nothing was readable.
  std::optional<PowerReading> power;
  // Host contention (issue #24; host/cpu_pressure.h, telemetry/job_tree.h), appended.
  std::optional<HostPressure> host;   ///< CPU / I/O pressure; absent when neither PSI nor /proc/stat reads
  std::optional<double> job_cores;    ///< `run`: CPU cores the job's process tree used since the last sample
  std::optional<double> other_cores;  ///< `run`: CPU cores the rest of the host used over the same time
  // Who took the job's CPUs (issue 30; host/cpu_times.h), appended: `run` only.
  std::optional<size_t> job_procs;             ///< processes in the job's tree
  std::optional<unsigned> job_cpus;            ///< CPUs the job's main process may run on
  std::optional<double> others_on_job_cpus;    ///< busy cores on those CPUs not used by the job
  std::optional<double> cpu_steal_pct;         ///< steal time of all CPUs since the last sample, percent
  // Kernel log and fragmentation (issue 33; host/kmsg.h, host/buddyinfo.h), appended.
  std::vector<KernelSign> kernel;   ///< NVRM/Xid/OOM-kill/hung-task/lockup records since the last sample
  std::optional<UmaPressure> uma;   ///< free 2/4 MiB blocks, Mlocked, Unevictable, Shmem, /dev/shm size
};

}  // namespace sparkops
