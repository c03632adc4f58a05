#include "checks/check.h"

namespace sparkops {

// Placeholder until the check is built; SKIP says so plainly.
CheckResult CheckG10(const HostFacts&) {
  return {"G10", CheckStatus::kSkip, "not implemented in this build", {}, ""};
}

}  // namespace sparkops
