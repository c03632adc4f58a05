#pragma once
/// G4's lines from outside NVML (issue 18): PROCHOT, the power-limit level, DC input and the
/// limiters from the optional spbm hwmon driver; CPU/SoC temperatures from it or the thermal zones.
#include <string>
#include <vector>

#include "host/power_rails.h"

namespace sparkops {

/// Pure: evidence lines. `spark`: the GPU is a GB10, where a missing spbm driver earns one line
/// saying what it is and that it is optional and third-party.
std::vector<std::string> G4PowerLines(const PowerReading& p, bool spark);

}  // namespace sparkops
