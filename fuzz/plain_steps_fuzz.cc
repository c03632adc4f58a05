// ParsePlainStep / ParseRichBar (hand-written loops' step lines, Rich bars) and --step-format
// templates: the first line of the input is compiled as a template and matched against the rest.
// No crash; a parsed step is non-negative; a template that compiles has a {step}; a match sets a
// step and the template format.
#include "analysis/plain_steps.h"
#include "analysis/step_template.h"
#include "base/strings.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  size_t nl = text.find('\n');
  std::string_view first = text.substr(0, nl);
  auto tmpl = sparkops::CompileStepTemplate(first);
  for (std::string_view line : sparkops::SplitLines(text)) {
    sparkops::StepLine a;
    if (sparkops::ParsePlainStep(line, a)) {
      FUZZ_CHECK(a.step && *a.step >= 0);
      FUZZ_CHECK(a.kind != sparkops::StepLine::Kind::kNone);
    }
    sparkops::StepLine b;
    if (sparkops::ParseRichBar(line, b)) FUZZ_CHECK(b.step && *b.step >= 0);
    if (tmpl) {
      sparkops::StepLine c;
      if (sparkops::MatchStepTemplate(*tmpl, line, c)) {
        FUZZ_CHECK(c.step && *c.step >= 0);
        FUZZ_CHECK(c.kind == sparkops::StepLine::Kind::kStep);
      }
    }
  }
  return 0;
}
