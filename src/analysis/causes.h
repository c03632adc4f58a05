#pragma once
/// The one table of slowdown causes: every reader of causes (Classify's priorities, the HTML
/// report's colours and legend, `analyze --help`, the docs check) iterates it. A new cause is a
/// row here plus the finder that reports it (docs/architecture.md, "How to add a cause").
#include <string_view>
#include <vector>

namespace sparkops {

struct CauseInfo {
  std::string_view name;      ///< as printed and in JSON ("thermal")
  int priority;               ///< lower wins when several causes are found in one span
  int weak_priority;          ///< the priority when only indirect evidence was found (== priority if none)
  std::string_view colour;    ///< the HTML report's tag and band colour (#rrggbb)
  std::string_view help;      ///< one line for `analyze --help` and the report's legend
  std::string_view finder;    ///< the function that reports it (analysis/)
  std::string_view evidence;  ///< the inputs it needs
};

/// Every cause, in the order they are listed to users; `unknown` last.
const std::vector<CauseInfo>& Causes();
/// The row for `name`; `unknown`'s row for a name not in the table.
const CauseInfo& CauseFor(std::string_view name);
/// Priority of a finding of `name` (weak: from indirect evidence only).
int CausePriority(std::string_view name, bool weak = false);

}  // namespace sparkops
