// issue 33: the advice after a driver-side stop (memory/ladder.h BuildDriverErrorLadder), table-tested.
#include <gtest/gtest.h>

#include "memory/ladder.h"

namespace sparkops::memory {
namespace {

struct Case {
  const char* name;
  LadderKind kind;
  std::optional<double> cache_gib;
  std::optional<double> lowest_gib;
  const char* step1_has;  ///< in step 1's detail
  const char* step4_has;  ///< in step 4's detail
  const char* step4_lacks;
};

TEST(DriverErrorLadder, SaveAndStopFirstAndFlushOnlyWhenItLiftsMemAvailable) {
  const Case cases[] = {
      {"no-memory record, much cache", LadderKind::kDriverNoMemory, 12.0, 3.5, "NV_ERR_NO_MEMORY",
       "a flush would lift MemAvailable (MemAvailable at its lowest 3.5 GiB -> about 15.5 GiB)", "skip it"},
      {"no-memory record, little cache", LadderKind::kDriverNoMemory, 0.4, 3.5, "whole-host wedge",
       "would not lift MemAvailable, skip it", "sparkops flush"},
      {"no-memory record, cache not reported", LadderKind::kDriverNoMemory, std::nullopt, std::nullopt, "#1358",
       "page cache not reported", "skip it"},
      {"fragmentation, much cache", LadderKind::kFragmentation, 6.0, std::nullopt, "free 2 MiB blocks",
       "compact_memory", "skip it"},
      {"fragmentation, little cache", LadderKind::kFragmentation, 0.2, 1.0, "free 2 MiB blocks",
       "skip it; `echo 1 | sudo tee /proc/sys/vm/compact_memory`", "sparkops flush"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PageCacheReading cache;
    cache.gib = c.cache_gib;
    cache.when = "at the run's start";
    DriverStopFacts f;
    f.kind = c.kind;
    f.lowest_available_gib = c.lowest_gib;
    const Ladder l = BuildDriverErrorLadder(cache, f, std::nullopt);
    EXPECT_EQ(l.kind, c.kind);
    ASSERT_EQ(l.steps.size(), 4u);
    EXPECT_EQ(l.next, 1);
    EXPECT_EQ(l.steps[0].title, "save and stop: the host may wedge");
    EXPECT_NE(l.steps[0].detail.find(c.step1_has), std::string::npos) << l.steps[0].detail;
    EXPECT_EQ(l.steps[1].title, "reboot before the next run if the kernel log repeats the record");
    EXPECT_EQ(l.steps[2].title, "reduce the job's memory");
    EXPECT_NE(l.steps[2].detail.find("--plan-args"), std::string::npos) << l.steps[2].detail;
    EXPECT_EQ(l.steps[3].title, "flush the page cache only if it would lift MemAvailable");
    EXPECT_NE(l.steps[3].detail.find(c.step4_has), std::string::npos) << l.steps[3].detail;
    EXPECT_EQ(l.steps[3].detail.find(c.step4_lacks), std::string::npos) << l.steps[3].detail;
    EXPECT_NE(l.why_next.find("may wedge"), std::string::npos) << l.why_next;
    for (const auto& s : l.steps) EXPECT_NE(s.title, "flush the page cache") << "the OOM ladder's first step";
  }
  EXPECT_STREQ(ToString(LadderKind::kOom), "oom");
  EXPECT_STREQ(ToString(LadderKind::kDriverNoMemory), "driver_error");
  EXPECT_STREQ(ToString(LadderKind::kFragmentation), "fragmentation");
}

}  // namespace
}  // namespace sparkops::memory
