#pragma once
/// `analyze --step-format 'step {step} loss {loss}'`: a user's template for step lines no built-in
/// parser reads. A template, not a regex: literal text and `{field}` placeholders.
#include <string>
#include <string_view>
#include <vector>

#include "analysis/step_line.h"
#include "base/error.h"

namespace sparkops {

/// A compiled template. Fields: {step} (required, a whole number), {total}, {loss},
/// {time} (seconds per step), {ms} (milliseconds per step), {its} (iterations per second),
/// {throughput} (items per second), {lr} and {_} (a number read and ignored), {*} (any text, up
/// to the next literal). A run of spaces in the template matches one or more spaces or tabs.
struct StepTemplate {
  enum class Part : unsigned char {
    kLiteral,
    kSpace,
    kStep,
    kTotal,
    kLoss,
    kTime,
    kMs,
    kIts,
    kThroughput,
    kIgnore,
    kAny
  };
  struct Piece {
    Part part = Part::kLiteral;
    std::string text;  ///< kLiteral only
  };
  std::vector<Piece> pieces;
  std::string source;
};

/// Compiles `text` (at most 512 bytes). Errors name the flag and the problem: unknown field,
/// unclosed brace, no {step}, two placeholders with nothing between them.
Result<StepTemplate> CompileStepTemplate(std::string_view text);

/// Matches `line` against the template, from its start or from the first place its leading
/// literal occurs (so logging prefixes may come before). True with `r` filled (kind kStep,
/// format "template") when it matches; `r` untouched otherwise.
bool MatchStepTemplate(const StepTemplate& t, std::string_view line, StepLine& r);

}  // namespace sparkops
