#pragma once
/// The memory guard's families: actions since boot and the floors in force, from the guards'
/// ledgers under /run (guard/ledger.h). No ledger: no series.
#include <vector>

#include "guard/ledger.h"
#include "report/power_metrics.h"

namespace sparkops {

/// One guard's ledger and whether that guard still runs.
struct GuardStatus {
  guard::Ledger ledger;
  bool live = false;
};

/// The families below, in output order (appended to MetricFamilies()).
const std::vector<MetricFamily>& GuardMetricFamilies();
/// Pure. Counters sum every ledger (a guard that exited keeps its count until reboot); each mode
/// seen gets its flush/terminate/kill x min_available/pressure series from 0, so that increase()
/// sees the first action. Floors are those of live guards only.
std::vector<MetricPoint> GuardMetricPoints(const std::vector<GuardStatus>& guards);

}  // namespace sparkops
