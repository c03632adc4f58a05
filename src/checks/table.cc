#include "checks/check.h"
#include "checks/g11_platform.h"

namespace sparkops {

const char* StatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "PASS";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kWarn: return "WARN";
    case CheckStatus::kSkip: return "SKIP";
    case CheckStatus::kInfo: return "INFO";
  }
  return "SKIP";
}

const std::vector<CheckDef>& AllChecks() {
  static const std::vector<CheckDef> kChecks = {
      {"G1", "CUDA 12/13 ABI mismatch", &CheckG1},
      {"G2", "flash-attn build and Unsloth auto-detect", &CheckG2},
      {"G3", "UMA OOM below 128 GB", &CheckG3},
      {"G4", "thermal throttling", &CheckG4},
      {"G5", "bandwidth ceiling", &CheckG5},
      {"G6", "global UMA contention", &CheckG6},
      {"G7", "NVFP4 needs sm_121a kernels", &CheckG7},
      {"G8", "stale official playbooks", &CheckG8},
      {"G9", "container vs bare pip", &CheckG9},
      {"G10", "two-Spark parallelism", &CheckG10},
      {"G11", "platform: driver, kernel, kernel log, pstore", &CheckG11},
  };
  return kChecks;
}

CheckResult RunCheck(const CheckDef& def, const HostFacts& facts) {
  CheckResult r = def.run(facts);
  r.id = def.id;
  return r;
}

std::string CheckIdRange() { return std::string(AllChecks().front().id) + ".." + AllChecks().back().id; }

std::string CheckCountWord() {
  static const char* const kWords[] = {"zero",     "one",      "two",      "three",   "four",    "five",
                                       "six",      "seven",    "eight",    "nine",    "ten",     "eleven",
                                       "twelve",   "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
                                       "eighteen", "nineteen", "twenty"};
  const size_t n = AllChecks().size();
  return n < std::size(kWords) ? kWords[n] : std::to_string(n);
}

}  // namespace sparkops
