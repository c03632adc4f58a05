#include "analysis/causes.h"

#include <climits>

namespace sparkops {

const std::vector<CauseInfo>& Causes() {
  static const std::vector<CauseInfo> kCauses = {
      {"thermal", 0, 5, "#d9480f", "the GPU slowed itself to cool down (thermal reason bit, or the G4 signature)",
       "Classify (classify.cc)", "clock-event reasons, GPU temperature, SM clock, power"},
      {"power_cap", 1, 6, "#b8860b", "the GPU or the firmware held power at a limit (power-cap bit, PL1/SysPL1)",
       "Classify (classify.cc), ClassifyPower (power_causes.cc)",
       "clock-event reasons, power and its limit, SM clock; spbm pl1/syspl1 EWMAs and caps"},
      {"pd_degraded", 4, 4, "#7048e8", "clocks far down while busy with no reason bit: a degraded power state",
       "Classify (classify.cc)", "SM clock, GPU utilization, the sampler's pd_degraded event"},
      {"prochot", -1, -1, "#e03131", "PROCHOT, the hardware brake, came on", "ClassifyPower (power_causes.cc)",
       "spbm prochot column, CPU temperature"},
      {"power_delivery", 1, 1, "#2f9e44", "the power supply is not delivering (DC input far under the SysPL1 cap)",
       "ClassifyPower (power_causes.cc)", "spbm dc_input and syspl1 cap, SM clock, GPU utilization"},
      {"contention", 2, 2, "#c2255c", "an uncapped or near-capacity process started beside the job",
       "Classify (classify.cc)", "events.jsonl process_start and contention records"},
      {"cpu_contention", 2, 3, "#ae3ec9", "other processes took the job's CPUs", "FindHostContention (contention.cc)",
       "others_on_job_cpus, job_cores, job_cpus, other_cores, cpu_pressure_pct, host_contention records"},
      {"job_processes", 2, 2, "#e67700", "the job's own new processes took its CPU (workers, children)",
       "FindHostContention (contention.cc)", "job_procs, job_cores, host_contention job_top records"},
      {"cpu_steal", 2, 2, "#495057", "the hypervisor gave this virtual machine's CPUs to other work (steal time)",
       "FindHostContention (contention.cc)", "cpu_steal_pct"},
      {"io_contention", 2, 2, "#0c8599", "the host's storage was contended (I/O pressure rose)",
       "FindHostContention (contention.cc)", "io_pressure_some_pct, host_contention records"},
      {"memory_pressure", 3, 3, "#1971c2", "the unified memory pool ran short (MemAvailable, swap, memory PSI)",
       "Classify (classify.cc)", "mem_available_gib, swap_used_gib, mem_pressure_some_avg10"},
      {"driver_memory_error", -2, -2, "#5f3dc4",
       "the NVIDIA driver could not get memory from the pool (NVRM NV_ERR_NO_MEMORY): the host may wedge",
       "DriverMemoryEvidence (driver_memory.cc)", "events.jsonl kernel_nvrm_no_memory records and guard stops"},
      {"fragmentation", -2, -2, "#a61e4d",
       "no free 2 MiB block for the driver while the job grew (buddyinfo): its next large allocation may fail",
       "FragmentationEndEvidence (driver_memory.cc)", "the memory guard's fragmentation stop and its buddyinfo line"},
      {"unknown", INT_MAX, INT_MAX, "#5c677d", "none of the above; each cause says why it was ruled out", "Classify",
       "—"},
  };
  return kCauses;
}

const CauseInfo& CauseFor(std::string_view name) {
  for (const CauseInfo& c : Causes())
    if (c.name == name) return c;
  return Causes().back();
}

int CausePriority(std::string_view name, bool weak) {
  const CauseInfo& c = CauseFor(name);
  return weak ? c.weak_priority : c.priority;
}

}  // namespace sparkops
