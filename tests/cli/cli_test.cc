#include <gtest/gtest.h>

#include "cli/dispatch.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::RunInProcess;

TEST(Cli, HelpListsEveryCommand) {
  auto r = RunInProcess({"help"});
  EXPECT_EQ(r.rc, 0);
  for (const char* c : {"preflight", "explain", "plan", "models", "oom", "flush", "sample", "ps", "run", "analyze",
                        "exporter", "bandwidth"})
    EXPECT_NE(r.out.find(std::string("  ") + c + " "), std::string::npos) << c;
}

TEST(Cli, NoCommandIsUsageError) { EXPECT_EQ(RunInProcess({}).rc, 2); }

TEST(Cli, UnknownCommandSuggestsNearest) {
  auto r = RunInProcess({"prefligth"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("did you mean 'preflight'"), std::string::npos) << r.err;
  auto far = RunInProcess({"zzzzzzzzzz"});
  EXPECT_EQ(far.rc, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos);
}

TEST(Cli, BadFlagIsExit2NotCli11Code) {
  auto r = RunInProcess({"preflight", "--no-such-flag"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no-such-flag"), std::string::npos);
}

TEST(Cli, VersionNamesRevisionArchAndCompiler) {
  auto r = RunInProcess({"--version"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("sparkops "), std::string::npos);
  EXPECT_NE(r.out.find("git "), std::string::npos);
}

TEST(GlobalOptions, BeforeOrAfterCommand) {
  GlobalOptions a, b;
  auto ra = ExtractGlobalOptions({"--root", "/x", "preflight", "--json"}, {}, a);
  auto rb = ExtractGlobalOptions({"preflight", "--json", "--root=/x"}, {}, b);
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(*ra, std::vector<std::string>{"preflight"});
  EXPECT_EQ(*rb, std::vector<std::string>{"preflight"});
  EXPECT_EQ(a.root, "/x");
  EXPECT_TRUE(a.json && b.json);
}

TEST(GlobalOptions, RootImpliesNoGpuUnlessGiven) {
  GlobalOptions a, b;
  ASSERT_TRUE(ExtractGlobalOptions({"--root", "/x", "ps"}, {}, a));
  EXPECT_EQ(a.nvml, "none");
  EXPECT_EQ(a.nvidia_smi, "none");
  ASSERT_TRUE(ExtractGlobalOptions({"ps", "--nvml", "/lib/stub.so"}, {{"SPARKOPS_ROOT", "/x"}}, b));
  EXPECT_EQ(b.nvml, "/lib/stub.so");
  EXPECT_EQ(b.nvidia_smi, "none");
  EXPECT_EQ(b.root, "/x");
}

TEST(GlobalOptions, StopsAtDoubleDash) {
  GlobalOptions o;
  auto r = ExtractGlobalOptions({"run", "--", "python", "--json"}, {}, o);
  ASSERT_TRUE(r);
  EXPECT_FALSE(o.json);
  EXPECT_EQ(r->back(), "--json");
}

TEST(GlobalOptions, MissingValueIsError) {
  GlobalOptions o;
  EXPECT_FALSE(ExtractGlobalOptions({"ps", "--root"}, {}, o));
  EXPECT_EQ(RunInProcess({"ps", "--nvml"}).rc, 2);
}

}  // namespace
}  // namespace sparkops
