#pragma once
/// The exporter's `kernel` collector (issue 33): kernel-log records counted since boot. The log is
/// read from the start of the ring once, then only what was added since (the device stays open), so
/// the counters keep growing after old records are overwritten. Not readable (no root,
/// dmesg_restrict): the collector fails with the reason (logged once) and the counters are absent;
/// no /dev/kmsg at all (a container): success with no counters.
#include <optional>

#include "host/host_view.h"
#include "host/kmsg.h"
#include "report/prometheus.h"

namespace sparkops {

CollectorStatus CollectKernel(const HostView& ctx, std::optional<KernelSignals>& out);

}  // namespace sparkops
