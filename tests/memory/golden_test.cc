// Golden files for the text and JSON formats of plan / oom / models (tests/golden/memory/).
// Regenerate after an intended change: SPARKOPS_UPDATE_GOLDEN=1 build/tests/sparkops_tests
#include <gtest/gtest.h>

#include "test_util.h"

namespace sparkops {
namespace {

using testing::CheckGolden;
using testing::Fixture;
using testing::RunInProcess;

TEST(MemoryGolden, PlanTextAndJson) {
  auto qlora = RunInProcess({"plan", "llama-3.3-70b", "--method", "qlora", "--seq", "4096", "--root", Fixture("gb10")});
  EXPECT_EQ(qlora.rc, 0);
  EXPECT_EQ(CheckGolden("memory/plan_llama-3.3-70b_qlora.txt", qlora.out), "");
  auto full = RunInProcess({"--json", "plan", "gemma-2-9b", "--method", "full", "--root", Fixture("gb10")});
  EXPECT_EQ(full.rc, 0);
  EXPECT_EQ(CheckGolden("memory/plan_gemma-2-9b_full.json", full.out), "");
  auto nofit = RunInProcess({"plan", "llama-3.3-70b", "--method", "full", "--root", Fixture("gb10")});
  EXPECT_EQ(nofit.rc, 1);
  EXPECT_EQ(CheckGolden("memory/plan_llama-3.3-70b_full_nofit.txt", nofit.out), "");
}

TEST(MemoryGolden, OomLadderAndModels) {
  auto oom = RunInProcess({"oom", "llama-3.1-8b", "--method", "full", "--root", Fixture("memory/lowcache")});
  EXPECT_EQ(oom.rc, 0);
  EXPECT_EQ(CheckGolden("memory/oom_llama-3.1-8b_full_lowcache.txt", oom.out), "");
  auto models = RunInProcess({"models"});
  EXPECT_EQ(CheckGolden("memory/models.txt", models.out), "");
}

}  // namespace
}  // namespace sparkops
