#include "checks/check.h"

namespace sparkops {

inline constexpr const char* kPlaybookIssues = "https://github.com/NVIDIA/dgx-spark-playbooks/issues";

// G8: upstream playbook breakage cannot be checked offline; say so and point at the tracker.
CheckResult CheckG8(const HostFacts&) {
  return {"G8",
          CheckStatus::kSkip,
          std::string("cannot check upstream playbooks offline; read ") + kPlaybookIssues +
              " before an expensive run (`sparkops explain G8` lists known broken recipes)",
          {std::string("tracker: ") + kPlaybookIssues},
          std::string("check the playbook's open issues before trusting a recipe: ") + kPlaybookIssues};
}

}  // namespace sparkops
