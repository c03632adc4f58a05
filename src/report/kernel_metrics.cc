#include "report/kernel_metrics.h"

#include "report/prometheus.h"

namespace sparkops {

const std::vector<MetricFamily>& KernelMetricFamilies() {
  static const std::vector<MetricFamily> f = {
      {"sparkops_kernel_log_readable", "gauge",
       "1 when the exporter reads the kernel log (/dev/kmsg: root or kernel.dmesg_restrict=0), else 0."},
      {"sparkops_kernel_events_total", "counter",
       "Kernel log records since boot by kind: nvrm_no_memory (the NVIDIA driver failed an allocation, the GB10 "
       "host-wedge precursor), xid, oom_kill, hung_task, lockup."},
      {"sparkops_memory_free_blocks", "gauge",
       "Free physically contiguous blocks of a size (2MiB, 4MiB) in /proc/buddyinfo, all zones."},
      {"sparkops_memory_mlocked_bytes", "gauge", "Mlocked memory (/proc/meminfo), bytes."},
      {"sparkops_memory_unevictable_bytes", "gauge", "Unevictable memory (/proc/meminfo), bytes."},
      {"sparkops_memory_shmem_bytes", "gauge", "Shared memory: tmpfs, /dev/shm, shared anonymous (Shmem), bytes."},
      {"sparkops_dev_shm_size_bytes", "gauge", "Size limit of the /dev/shm tmpfs (its size= option), bytes."},
  };
  return f;
}

std::vector<MetricPoint> KernelMetricPoints(const std::optional<KernelSignals>& kernel,
                                            const std::optional<UmaPressure>& uma) {
  std::vector<MetricPoint> out;
  out.push_back({"sparkops_kernel_log_readable", {}, kernel ? 1.0 : 0.0});
  if (kernel)
    for (const KernelSignDef& d : KernelSignTable())
      out.push_back({"sparkops_kernel_events_total", {{"kind", d.name}}, static_cast<double>(kernel->count(d.kind))});
  if (!uma) return out;
  if (uma->free_2m)
    out.push_back({"sparkops_memory_free_blocks", {{"size", "2MiB"}}, static_cast<double>(*uma->free_2m)});
  if (uma->free_4m)
    out.push_back({"sparkops_memory_free_blocks", {{"size", "4MiB"}}, static_cast<double>(*uma->free_4m)});
  if (uma->mlocked) out.push_back({"sparkops_memory_mlocked_bytes", {}, static_cast<double>(*uma->mlocked)});
  if (uma->unevictable)
    out.push_back({"sparkops_memory_unevictable_bytes", {}, static_cast<double>(*uma->unevictable)});
  if (uma->shmem) out.push_back({"sparkops_memory_shmem_bytes", {}, static_cast<double>(*uma->shmem)});
  if (uma->shm_size) out.push_back({"sparkops_dev_shm_size_bytes", {}, static_cast<double>(*uma->shm_size)});
  return out;
}

}  // namespace sparkops
