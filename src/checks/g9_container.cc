#include "checks/check.h"

namespace sparkops {

// Placeholder until the check is built; SKIP says so plainly.
CheckResult CheckG9(const HostFacts&) {
  return {"G9", CheckStatus::kSkip, "not implemented in this build", {}, ""};
}

}  // namespace sparkops
