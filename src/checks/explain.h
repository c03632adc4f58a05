#pragma once
/// The text behind `sparkops explain`: for each gotcha (and the OOM ladder) the symptom, the cause,
/// how sparkops checks it, the fix, and and common advice checked against the public sources.
#include <string>
#include <vector>

namespace sparkops {

struct Explanation {
  const char* id;       ///< a check's id (AllChecks()) or "ladder"
  const char* title;
  const char* symptom;
  const char* cause;
  const char* check;    ///< what sparkops reads and how it decides
  const char* fix;
  std::vector<const char*> corrections;  ///< common advice the sources contradict or do not confirm
  std::vector<const char*> notes;        ///< extra lists (known broken playbooks, ladder steps)
};

/// All explanations: one per check of AllChecks(), in its order, then "ladder" (a test checks it).
const std::vector<Explanation>& Explanations();

}  // namespace sparkops
