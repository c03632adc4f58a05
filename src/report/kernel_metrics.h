#pragma once
/// The exporter's kernel-log and fragmentation families (issue 33): kernel records counted since
/// boot per kind (host/kmsg.h's table), free 2 MiB / 4 MiB blocks, Mlocked, Unevictable, Shmem and
/// the /dev/shm size. A reading not made is no series (never 0).
#include <optional>
#include <vector>

#include "host/buddyinfo.h"
#include "host/kmsg.h"
#include "report/power_metrics.h"

namespace sparkops {

/// The families below, in output order (appended to MetricFamilies()).
const std::vector<MetricFamily>& KernelMetricFamilies();
/// Pure: the series. `kernel` absent: the log was not readable (sparkops_kernel_log_readable 0).
std::vector<MetricPoint> KernelMetricPoints(const std::optional<KernelSignals>& kernel,
                                            const std::optional<UmaPressure>& uma);

}  // namespace sparkops
