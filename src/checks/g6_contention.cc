#include "checks/check.h"

namespace sparkops {

// Placeholder until the check is built; SKIP says so plainly.
CheckResult CheckG6(const HostFacts&) {
  return {"G6", CheckStatus::kSkip, "not implemented in this build", {}, ""};
}

}  // namespace sparkops
