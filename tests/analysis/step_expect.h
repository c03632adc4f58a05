#pragma once
// The check the step-line parser tables share (step_line_test, plain_steps_test): a table row
// (any struct with kind, format, step, step_time_s, throughput, loss) against a parsed line.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "analysis/step_line.h"

namespace sparkops::testing {

/// Both absent, or both present and within 1e-4 relative.
inline void ExpectNearOpt(const std::optional<double>& got, const std::optional<double>& want, const char* what,
                          const char* name) {
  ASSERT_EQ(got.has_value(), want.has_value()) << name << ": " << what;
  if (want) {
    EXPECT_NEAR(*got, *want, std::fabs(*want) * 1e-4 + 1e-9) << name << ": " << what;
  }
}

template <class Row>
void ExpectStepLine(const StepLine& l, const Row& c, const char* name) {
  EXPECT_EQ(l.kind, c.kind) << name;
  if (c.kind != StepLine::Kind::kNone) {
    EXPECT_STREQ(l.format, c.format) << name;
  }
  EXPECT_EQ(l.step, c.step) << name;
  ExpectNearOpt(l.step_time_s, c.step_time_s, "step_time_s", name);
  ExpectNearOpt(l.throughput, c.throughput, "throughput", name);
  ExpectNearOpt(l.loss, c.loss, "loss", name);
}

}  // namespace sparkops::testing
