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

RunEvent Lost(const char* stage, int64_t t_ms) {
  RunEvent e = Ev("supervisor_lost", {{"stage", stage}, {"job_pgid", 4242}, {"grace_s", 5.0}});
  e.t_ms = t_ms;
  return e;
}

// issue 30: the end of a run whose `sparkops run` was killed, read from the sentinel's records.
TEST(DescribeSupervisorLost, Table) {
  const int64_t t = 1795946400000;  // 2026-11-29T10:00:00Z
  EXPECT_FALSE(DescribeSupervisorLost({}));
  EXPECT_FALSE(DescribeSupervisorLost({Ev("exit", {{"code", 0}})}));
  EXPECT_FALSE(DescribeSupervisorLost({Lost("done", t)}));  // no terminate: not the sentinel's story
  struct Case {
    std::vector<RunEvent> ev;
    std::string detail;
  } cases[] = {
      {{Lost("terminate", t), Lost("done", t + 1500)},
       "sparkops run itself was killed (no exit record); its sentinel stopped the job: SIGTERM to its process group "
       "at 2026-11-29T10:00:00.000Z; the job was gone at 2026-11-29T10:00:01.500Z (it ended within the 5 s grace; its "
       "exit status is not recorded: only run, its parent, could read it)"},
      {{Lost("terminate", t), Lost("kill", t + 5000), Lost("done", t + 5100)},
       "sparkops run itself was killed (no exit record); its sentinel stopped the job: SIGTERM to its process group "
       "at 2026-11-29T10:00:00.000Z, SIGKILL after the 5 s grace at 2026-11-29T10:00:05.000Z; the job was gone at "
       "2026-11-29T10:00:05.100Z (killed; its exit status is not recorded: only run, its parent, could read it)"},
      {{Lost("terminate", t)},
       "sparkops run itself was killed (no exit record); its sentinel stopped the job: SIGTERM to its process group "
       "at 2026-11-29T10:00:00.000Z; the sentinel has not recorded the job's end (it may still be stopping, or the "
       "sentinel was killed too)"},
  };
  for (const Case& c : cases) {
    auto got = DescribeSupervisorLost(c.ev);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->detail, c.detail);
    EXPECT_EQ(got->lost_ms, t);
    EXPECT_EQ(got->grace_s, 5.0);
  }
  EXPECT_EQ(DescribeSupervisorLost(cases[1].ev)->kill_ms, t + 5000);
  EXPECT_FALSE(DescribeSupervisorLost(cases[0].ev)->kill_ms);
  EXPECT_FALSE(DescribeSupervisorLost(cases[2].ev)->done_ms);
}

}  // namespace
}  // namespace sparkops
