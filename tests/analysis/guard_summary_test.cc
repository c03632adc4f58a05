// analyze's words for the memory guard's interventions (DescribeGuard) and the plot labels.
#include <gtest/gtest.h>

#include "analysis/guard_summary.h"

namespace sparkops {
namespace {

RunEvent Ev(const char* type, nlohmann::json rec) {
  RunEvent e;
  e.type = type;
  rec["type"] = type;
  e.record = std::move(rec);
  return e;
}

TEST(DescribeGuard, Table) {
  const uint64_t gib = 1ull << 30;
  EXPECT_FALSE(DescribeGuard({}));
  EXPECT_FALSE(DescribeGuard({Ev("exit", {{"code", 0}})}));
  auto term = Ev("memory_guard", {{"action", "terminate"},
                                  {"reason", "min_available"},
                                  {"mem_available_bytes", 2 * gib},
                                  {"min_available_bytes", 8 * gib},
                                  {"job_rss_bytes", 3 * gib}});
  EXPECT_EQ(*DescribeGuard({term}),
            "the memory guard stopped the job (SIGTERM): MemAvailable 2.0 GiB under the 8.0 GiB floor; the job held "
            "3.0 GiB resident");
  auto kill = Ev("memory_guard", {{"action", "kill"}, {"reason", "min_available"}});
  auto flush = Ev("memory_guard", {{"action", "flush"}, {"mem_available_bytes", gib}});
  EXPECT_EQ(*DescribeGuard({flush, term, kill}),
            "the memory guard stopped the job (SIGTERM, then SIGKILL after the grace): MemAvailable 2.0 GiB under the "
            "8.0 GiB floor; the job held 3.0 GiB resident; the guard flushed the page cache 1 time");
  auto psi = Ev("memory_guard", {{"action", "terminate"},
                                 {"reason", "pressure"},
                                 {"psi_full_avg10", 63.5},
                                 {"job_rss_bytes", gib},
                                 {"job_gpu_bytes", 2 * gib}});
  EXPECT_EQ(*DescribeGuard({psi}),
            "the memory guard stopped the job (SIGTERM): memory pressure (PSI full avg10 63.5%) lasted the whole "
            "window; the job held 1.0 GiB resident + 2.0 GiB of GPU memory");
  EXPECT_EQ(*DescribeGuard({Ev("supervisor_lost", {{"stage", "terminate"}})}),
            "sparkops run itself was killed; its sentinel stopped the job (SIGTERM, SIGKILL after the grace)");
  EXPECT_EQ(GuardMarkerLabel(term), "guard: SIGTERM at 2.0 GiB free");
  EXPECT_EQ(GuardMarkerLabel(kill), "guard: SIGKILL");
  EXPECT_EQ(GuardMarkerLabel(flush), "guard: flush at 1.0 GiB free");
  EXPECT_EQ(GuardMarkerLabel(Ev("oom", {})), "");
}

}  // namespace
}  // namespace sparkops
