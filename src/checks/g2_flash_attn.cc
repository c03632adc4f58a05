#include "checks/check.h"

namespace sparkops {

// Placeholder until the check is built; SKIP says so plainly.
CheckResult CheckG2(const HostFacts&) {
  return {"G2", CheckStatus::kSkip, "not implemented in this build", {}, ""};
}

}  // namespace sparkops
