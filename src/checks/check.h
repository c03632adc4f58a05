#pragma once
/// Preflight checks (the table AllChecks(): G1..GN): each is a function of host facts returning a CheckResult
/// (gpud style: status + reason + evidence + fix; "cannot run here" is SKIP, never a fake PASS).
#include <string>
#include <vector>

#include "checks/facts.h"

namespace sparkops {

enum class CheckStatus { kPass, kFail, kWarn, kSkip, kInfo };

/// "PASS", "FAIL", "WARN", "SKIP", "INFO".
const char* StatusName(CheckStatus s);

struct CheckResult {
  std::string id;                     ///< its row's id in AllChecks() ("G1"), stamped by RunCheck
  CheckStatus status = CheckStatus::kSkip;
  std::string summary;                ///< the one-line reason or reading
  std::vector<std::string> evidence;  ///< what was read, one fact per string
  std::string fix;                    ///< what to do; empty when nothing to do
  /// A file named on the command line (e.g. --config) could not be read or parsed: exit 2.
  bool input_error = false;
};

struct CheckDef {
  const char* id;     ///< "G1"
  const char* title;  ///< "CUDA 12/13 ABI mismatch"
  CheckResult (*run)(const HostFacts& facts);
};

/// The one explicit table of checks, G1..GN in order (src/checks/table.cc). A new check is a row
/// here, its function and its `explain` entry (docs/architecture.md, "How to add a check").
const std::vector<CheckDef>& AllChecks();
/// Runs one check; the result's id is the row's, whatever the function wrote.
CheckResult RunCheck(const CheckDef& def, const HostFacts& facts);
/// "G1..GN": the first and last ids of the table.
std::string CheckIdRange();
/// How many checks there are, as a word for prose ("ten"; digits past twenty).
std::string CheckCountWord();

// One file per check.
CheckResult CheckG1(const HostFacts& f);
CheckResult CheckG2(const HostFacts& f);
CheckResult CheckG3(const HostFacts& f);
CheckResult CheckG4(const HostFacts& f);
CheckResult CheckG5(const HostFacts& f);
CheckResult CheckG6(const HostFacts& f);
CheckResult CheckG7(const HostFacts& f);
CheckResult CheckG8(const HostFacts& f);
CheckResult CheckG9(const HostFacts& f);
CheckResult CheckG10(const HostFacts& f);

}  // namespace sparkops
