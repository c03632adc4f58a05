// run's hold on its job (issue 31): the pure parts. The cgroup and subreaper modes against real
// processes are in run/guard_test.cc (RunHold.*).
#include <gtest/gtest.h>

#include <algorithm>

#include "run/job_cgroup.h"

namespace sparkops {
namespace {

TEST(JobHold, Cgroup2MountFromMountinfo) {
  const char* hybrid =
      "30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
      "42 31 0:39 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
  auto m = ParseCgroup2Mount(hybrid);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->first, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m->second, "/");
  auto c = ParseCgroup2Mount("1 0 0:30 /user.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->second, "/user.slice");
  EXPECT_FALSE(ParseCgroup2Mount("42 31 0:39 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"));
  EXPECT_FALSE(ParseCgroup2Mount("garbage - cgroup2 x\n"));
  EXPECT_FALSE(ParseCgroup2Mount(""));
}

TEST(JobHold, Cgroup2PathFromProcCgroup) {
  EXPECT_EQ(ParseCgroup2Path("0::/user.slice/user-1000.slice/session-3.scope\n"),
            "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_EQ(ParseCgroup2Path("4:memory:/x\n1:cpu:/\n0::/\n"), "/");
  EXPECT_FALSE(ParseCgroup2Path("4:memory:/x\n"));
}

TEST(JobHold, DescendantsSkipRunsOwnHelper) {
  // run 10: job 11 (its child 12, a setsid grandchild 13 re-parented to run), sentinel 20 (child 21).
  std::vector<std::pair<pid_t, pid_t>> links = {{11, 10}, {12, 11}, {13, 10}, {20, 10}, {21, 20}, {30, 1}};
  auto d = Descendants(links, 10, 20);
  std::sort(d.begin(), d.end());
  EXPECT_EQ(d, (std::vector<pid_t>{11, 12, 13}));
  EXPECT_EQ(Descendants(links, 30).size(), 0u);
  std::vector<std::pair<pid_t, pid_t>> cycle = {{5, 6}, {6, 5}};
  EXPECT_LE(Descendants(cycle, 5).size(), 3u) << "a malformed table ends";
}

}  // namespace
}  // namespace sparkops
