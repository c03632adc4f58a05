#include "report/flush.h"

#include <gtest/gtest.h>

namespace sparkops {
namespace {

TEST(FlushReport, AbsentReadingsAreNotReportedInTextAndNullInJson) {
  FlushOutcome dry{.dry_run = true, .page_cache_gib = std::nullopt, .available_before_gib = 12.5};
  EXPECT_EQ(FlushText(dry, "/proc/sys/vm/drop_caches"),
            "would run: sync; echo 3 > /proc/sys/vm/drop_caches\n"
            "reclaimable page cache: not reported (Cached + Buffers - Shmem); MemAvailable now 12.50 GiB\n");
  auto j = FlushJson(dry);
  EXPECT_TRUE(j["reclaimable_page_cache_gib"].is_null());
  EXPECT_DOUBLE_EQ(j["mem_available_gib"].get<double>(), 12.5);
  EXPECT_FALSE(j.contains("freed_gib"));

  FlushOutcome done{.dry_run = false, .available_before_gib = 10, .available_after_gib = 30.25, .freed_gib = 20.25};
  EXPECT_EQ(FlushText(done, "x"), "flushed: MemAvailable 10.00 GiB -> 30.25 GiB; freed 20.25 GiB\n");
  done.available_after_gib.reset();
  done.freed_gib.reset();
  EXPECT_EQ(FlushText(done, "x"), "flushed: MemAvailable 10.00 GiB -> not reported; freed not reported\n");
  j = FlushJson(done);
  EXPECT_TRUE(j["freed_gib"].is_null());
  EXPECT_TRUE(j["mem_available_after_gib"].is_null());
  EXPECT_DOUBLE_EQ(j["mem_available_before_gib"].get<double>(), 10);
  EXPECT_FALSE(j.contains("reclaimable_page_cache_gib"));
}

}  // namespace
}  // namespace sparkops
