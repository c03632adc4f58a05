#pragma once
/// G11 platform (issue 33): the NVIDIA kernel module's version (and NVML's where it differs), the
/// kernel release, this boot's NVRM/Xid/OOM-kill/hung-task/lockup records (/dev/kmsg), the CMA size
/// when a Spark pair is configured, and pstore records a crashed boot left. A known precursor of the
/// GB10 host wedge is WARN or FAIL, never PASS/INFO.
#include "checks/check.h"

namespace sparkops {

CheckResult CheckG11(const HostFacts& f);

}  // namespace sparkops
