#pragma once
/// The exporter's `power` collector (issue 18): ReadPowerReading under --root. A host with no
/// source (no spbm driver, no thermal zone) is success with no value.
#include <optional>

#include "host/host_view.h"
#include "host/power_rails.h"
#include "report/prometheus.h"

namespace sparkops {

CollectorStatus CollectPower(const HostView& ctx, std::optional<PowerReading>& out);

}  // namespace sparkops
