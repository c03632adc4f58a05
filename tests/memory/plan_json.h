#pragma once
/// `sparkops --json plan ARGS... --budget-gib 1000` run in process, its document parsed (null, and a
/// test failure, when it exits non-zero). A budget that fits anything, so a test reads components.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace sparkops::testing {

inline nlohmann::json PlanJson(std::vector<std::string> args) {
  args.insert(args.begin(), {"--json", "plan"});
  args.insert(args.end(), {"--budget-gib", "1000"});
  auto r = RunInProcess(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.rc == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

}  // namespace sparkops::testing
