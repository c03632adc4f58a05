#include "checks/check.h"

namespace sparkops {

// Placeholder until the check is built; SKIP says so plainly.
CheckResult CheckG7(const HostFacts&) {
  return {"G7", CheckStatus::kSkip, "not implemented in this build", {}, ""};
}

}  // namespace sparkops
