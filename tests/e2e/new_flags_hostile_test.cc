// The flags and input files this round of issues added, each given hostile values: an unknown or
// empty choice, NaN, a number past any real version, a FIFO and /dev/zero where a file is expected.
// Each must be an input error (exit 2) that names the flag or file, never a crash or a hang.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::RunInProcess;
using testing::TempDir;

struct Case {
  std::vector<std::string> args;
  int rc;
  std::string err;  ///< a piece the error must hold ("" when it must succeed)
};

void Check(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::vector<std::string> args{"--root", Fixture("gb10")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = RunInProcess(args);
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    EXPECT_EQ(r.rc, c.rc) << line << "\n" << r.err;
    EXPECT_NE(r.err.find(c.err), std::string::npos) << line << "\n" << r.err;
  }
}

TEST(NewFlagsHostile, ChoicesAndVersions) {
  Check({
      {{"preflight", "--gpu", "gb11"}, 2, "--gpu"},
      {{"preflight", "--gpu", ""}, 2, "--gpu"},
      {{"--machine", "riscv64", "preflight"}, 2, "riscv64"},
      {{"plan", "llama-3.2-1b", "--double-quant", "maybe"}, 2, "--double-quant"},
      {{"plan", "llama-3.2-1b", "--kbit-prep", "2"}, 2, "--kbit-prep"},
      {{"plan", "llama-3.2-1b", "--framework-version", "nan"}, 2, "--framework-version"},
      {{"plan", "llama-3.2-1b", "--framework-version", ""}, 0, ""},  // empty: not given, read or assumed
      // A version past any release is judged as the current one (no overflow, no refusal).
      {{"plan", "llama-3.2-1b", "--framework-version", "99999999999999999999.1"}, 0, ""},
      {{"plan", "llama-3.2-1b", "--modules-to-save", ""}, 0, ""},
      {{"plan", "llama-3.2-1b", "--quant", ""}, 2, "--quant"},
      {{"plan", "llama-3.2-1b", "--quant", "GPTQ4"}, 2, "--quant"},
      {{"plan", "llama-3.2-1b", "--quant", "awq4", "--method", "full"}, 2, "--quant"},
      {{"plan", "llama-3.2-1b", "--dora", "--method", "full"}, 2, "--dora"},
      {{"plan", "llama-3.2-1b", "--framework", "torchtune", "--framework-version", "0..1"}, 2, "--framework-version"},
      {{"plan", "llama-3.2-1b", "--framework", "torchtune", "--framework-version", "99999999999999999999.1"}, 0, ""},
      {{"plan", "llama-3.2-1b", "--grad-accum", "0"}, 2, "--grad-accum"},
      {{"plan", "llama-3.2-1b", "--grad-accum", "-1"}, 2, "--grad-accum"},
      {{"plan", "llama-3.2-1b", "--grad-accum", "nan"}, 2, "--grad-accum"},
      {{"plan", "llama-3.2-1b", "--grad-accum", "inf"}, 2, "--grad-accum"},
      {{"plan", "llama-3.2-1b", "--grad-accum", "1.5"}, 2, "--grad-accum"},
      {{"plan", "llama-3.2-1b", "--grad-accum", "1e30"}, 2, "--grad-accum"},
      {{"plan", "llama-3.2-1b", "--grad-accum", "1048576"}, 0, ""},
      {{"guard", "--dry-run", "--avoid-user", ""}, 2, "--avoid-user"},
      {{"guard", "--dry-run", "--avoid-user", "no_such_user_sparkops"}, 2, "no such user"},
      {{"guard", "--dry-run", "--avoid-unit", "../../etc"}, 2, "--avoid-unit"},
      {{"guard", "--dry-run", "--avoid-unit", ""}, 2, "--avoid-unit"},
  });
}

TEST(NewFlagsHostile, TrainingConfigThatIsNotAFile) {
  TempDir d;
  const std::string fifo = d.path() + "/cfg.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Check({
      {{"plan", "--from", fifo}, 2, "a FIFO, not a regular file"},
      {{"plan", "--from", "/dev/zero"}, 2, "not a regular file"},
      {{"plan", "--from", d.path()}, 2, "not a regular file"},
      {{"run", "--plan-from", "/dev/zero", "--", "true"}, 2, "not a regular file"},
  });
}

}  // namespace
}  // namespace sparkops
