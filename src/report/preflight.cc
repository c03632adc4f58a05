#include "report/preflight.h"

#include <fmt/format.h>

namespace sparkops {

std::string CheckLine(const CheckResult& r) {
  if (r.status == CheckStatus::kInfo) return fmt::format("{} INFO: {}", r.id, r.summary);
  return fmt::format("{} {} {}", r.id, StatusName(r.status), r.summary);
}

nlohmann::ordered_json CheckJson(const CheckResult& r) {
  return {
      {"id", r.id}, {"status", StatusName(r.status)}, {"summary", r.summary}, {"evidence", r.evidence}, {"fix", r.fix}};
}

}  // namespace sparkops
