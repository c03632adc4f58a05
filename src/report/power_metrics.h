#pragma once
/// The exporter's power/thermal families (issue 18): rails, limits, energy counters, PROCHOT and
/// the power-limit level from the optional spbm hwmon driver; temperatures from it, the thermal
/// zones and other hwmon devices. A reading not made is no series (never 0).
#include <string>
#include <utility>
#include <vector>

#include "host/power_rails.h"

namespace sparkops {

struct MetricFamily;

/// One series: family name, labels, value in base units.
struct MetricPoint {
  const char* family;
  std::vector<std::pair<std::string, std::string>> labels;
  double value;
};

/// The families below, in output order (appended to MetricFamilies()).
const std::vector<MetricFamily>& PowerMetricFamilies();
/// Pure: the series for one reading.
std::vector<MetricPoint> PowerMetricPoints(const PowerReading& p);

}  // namespace sparkops
