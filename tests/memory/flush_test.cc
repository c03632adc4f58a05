#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "host/command.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::RunInProcess;

/// A writable copy of the lowcache fixture (flush writes drop_caches under --root).
std::string CopyFixture(const testing::TempDir& d) {
  std::filesystem::copy(Fixture("memory/lowcache"), d.path() + "/root", std::filesystem::copy_options::recursive);
  std::filesystem::permissions(d.path(), std::filesystem::perms::all, std::filesystem::perm_options::add);
  return d.path() + "/root";
}

TEST(Flush, DryRunShowsReclaimableCacheAndChangesNothing) {
  testing::TempDir d;
  auto root = CopyFixture(d);
  auto r = RunInProcess({"--json", "flush", "--dry-run", "--root", root});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["reclaimable_page_cache_gib"].get<double>(), (409600.0 + 8192 - 204800) / 1048576, 1e-6);
  EXPECT_EQ(testing::ReadFileOrDie(root + "/proc/sys/vm/drop_caches"), "0\n");
}

TEST(Flush, NotRootIsExit1AndNothingDone) {
  testing::TempDir d;
  auto root = CopyFixture(d);
  // A copy of the binary nobody can execute even when the build tree is under a private home.
  const std::string bin = d.path() + "/sparkops";
  std::filesystem::copy_file(testing::SparkopsBin(), bin);
  std::filesystem::permissions(bin, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                        std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                        std::filesystem::perms::others_exec);
  std::vector<std::string> argv = testing::TargetArgv({bin, "flush", "--root", root});
  if (geteuid() == 0)  // CI runs as root: drop to nobody for this run
    argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  auto r = RunCommand(argv);
  if (!r && r.error().kind == Error::Kind::kNotFound) GTEST_SKIP() << "setpriv (util-linux) not installed";
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 1) << r->err;
  EXPECT_NE(r->err.find("needs root"), std::string::npos) << r->err;
  EXPECT_NE(r->err.find("nothing was done"), std::string::npos);
  EXPECT_EQ(testing::ReadFileOrDie(root + "/proc/sys/vm/drop_caches"), "0\n");
}

TEST(Flush, AsRootWritesThreeUnderRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (CI runs as root)";
  testing::TempDir d;
  auto root = CopyFixture(d);
  auto r = RunInProcess({"--json", "flush", "--root", root});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(testing::ReadFileOrDie(root + "/proc/sys/vm/drop_caches"), "3\n");
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["freed_gib"].get<double>(), 0.0, 1e-9);  // a fixture meminfo does not change
}

// The seed calls flush a between-run reset: with a trainer on the machine (the `ps`
// classification) it refuses without --force and changes nothing.
TEST(Flush, RefusesWhileATrainerRunsUnlessForced) {
  testing::TempDir d;
  auto root = CopyFixture(d);
  std::filesystem::copy(Fixture("workloads/torchrun/proc"), root + "/proc",
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::skip_existing);
  auto r = RunInProcess({"flush", "--root", root});
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("a trainer is running"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("torchrun pid 4101"), std::string::npos) << r.err;
  EXPECT_EQ(testing::ReadFileOrDie(root + "/proc/sys/vm/drop_caches"), "0\n");
  if (geteuid() != 0) return;
  auto forced = RunInProcess({"flush", "--force", "--root", root});
  EXPECT_EQ(forced.rc, 0) << forced.err;
  EXPECT_EQ(testing::ReadFileOrDie(root + "/proc/sys/vm/drop_caches"), "3\n");
}

TEST(Bandwidth, CeilingIsBandwidthOverBytesPerToken) {
  auto r = RunInProcess({"--json", "bandwidth", "--model", "llama-3.1-8b", "--dtype", "bf16"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // Dense 8B in bf16: all 8.03 B weights read once per token (embedding lookup excluded).
  const double bytes = j["bytes_per_token"].get<double>();
  EXPECT_NEAR(bytes, 2.0 * (8030261248.0 - 128256.0 * 4096), 1);
  bool quoted = false, measured = false;
  for (auto& f : j["figures"]) {
    EXPECT_NEAR(f["tokens_per_s_ceiling"].get<double>(), f["gb_per_s"].get<double>() * 1e9 / bytes, 1e-6);
    quoted = quoted || f["label"].get<std::string>().find("quoted") != std::string::npos;
    measured = measured || f["label"].get<std::string>().find("ds4#773") != std::string::npos;
  }
  EXPECT_TRUE(quoted && measured);
  auto moe = nlohmann::json::parse(RunInProcess({"--json", "bandwidth", "--model", "qwen3-30b-a3b"}).out);
  EXPECT_LT(moe["bytes_per_token"].get<double>(), bytes);  // 3.3B active of 30.5B
  EXPECT_EQ(RunInProcess({"bandwidth", "--model", "llama-3.1-8b", "--dtype", "int3"}).rc, 2);
}

TEST(Bandwidth, MeasureSaysCpuSide) {
  auto r = RunInProcess({"bandwidth", "--measure"});
  ASSERT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("CPU"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
