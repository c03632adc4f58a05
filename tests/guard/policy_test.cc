// The memory guard's pure parts: --min-available parsing, the floor, Decide, the poll interval and
// the allocation-free meminfo/PSI scanners (checked against the ordinary parsers).
#include <gtest/gtest.h>

#include <filesystem>

#include "guard/fastread.h"
#include "guard/policy.h"
#include "host/meminfo.h"
#include "host/pressure.h"
#include "test_util.h"

namespace sparkops::guard {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

TEST(GuardParseFloor, Table) {
  struct Case {
    const char* text;
    bool ok;
    std::optional<uint64_t> bytes;
    std::optional<double> pct;
  };
  const Case cases[] = {
      {"8G", true, 8 * kGiB, {}},    {"512M", true, 512 * kMiB, {}},
      {"6%", true, {}, 6.0},         {"1.5G", true, 3 * kGiB / 2, {}},
      {"4096K", true, 4 * kMiB, {}}, {"8GiB", true, 8 * kGiB, {}},
      {"8gb", true, 8 * kGiB, {}},   {"1T", true, 1024 * kGiB, {}},
      {"1048576", true, kMiB, {}},   {" 2G ", true, 2 * kGiB, {}},
      {"0.5%", true, {}, 0.5},       {"", false, {}, {}},
      {"0", false, {}, {}},          {"-1G", false, {}, {}},
      {"0%", false, {}, {}},         {"100%", false, {}, {}},
      {"150%", false, {}, {}},       {"nan", false, {}, {}},
      {"inf", false, {}, {}},        {"nanG", false, {}, {}},
      {"G", false, {}, {}},          {"%", false, {}, {}},
      {"8X", false, {}, {}},         {"99999999P", false, {}, {}},
      {"2000000T", false, {}, {}},   {"8 G B", false, {}, {}},
  };
  for (const auto& c : cases) {
    auto s = ParseFloor(c.text);
    ASSERT_EQ(s.has_value(), c.ok) << "'" << c.text << "'";
    if (!c.ok) {
      EXPECT_NE(s.error().message.find("--min-available"), std::string::npos) << s.error().message;
      continue;
    }
    EXPECT_EQ(s->bytes, c.bytes) << c.text;
    EXPECT_EQ(s->percent, c.pct) << c.text;
  }
}

TEST(GuardResolveFloor, DefaultIsTheLargerOf4GiBAnd5Percent) {
  EXPECT_EQ(ResolveFloor(std::nullopt, 24 * kGiB), 4 * kGiB);          // 5 % = 1.2 GiB
  EXPECT_EQ(ResolveFloor(std::nullopt, 128 * kGiB), 128 * kGiB / 20);  // 6.4 GiB on a Spark
  EXPECT_EQ(ResolveFloor(FloorSpec{{}, 6.0}, 100 * kGiB), 6 * kGiB);
  EXPECT_EQ(ResolveFloor(FloorSpec{8 * kGiB, {}}, 4 * kGiB), 8 * kGiB);  // taken as given
}

Reading At(double t, uint64_t avail, std::optional<uint64_t> cache = {}, std::optional<double> psi = {}) {
  Reading r;
  r.t_s = t, r.available = avail, r.page_cache = cache, r.psi_full_avg10 = psi;
  return r;
}

TEST(GuardDecide, Table) {
  Config c;
  c.floor = 8 * kGiB;
  c.max_pressure = 40;
  c.pressure_window_s = 5;
  struct Step {
    Reading r;
    Action want;
    Reason why;
  };
  struct Case {
    const char* name;
    bool may_flush;
    std::vector<Step> steps;
  };
  const Case cases[] = {
      {"above the floor", false, {{At(0, 9 * kGiB), Action::kNone, Reason::kNone}}},
      {"exactly the floor is not below it", false, {{At(0, 8 * kGiB), Action::kNone, Reason::kNone}}},
      {"below: stop", false, {{At(0, 8 * kGiB - 1), Action::kStop, Reason::kFloor}}},
      {"below, cache would help but no flush allowed",
       false,
       {{At(0, 2 * kGiB, 10 * kGiB), Action::kStop, Reason::kFloor}}},
      {"below, flush allowed and enough cache: flush, then stop if still below",
       true,
       {{At(0, 2 * kGiB, 10 * kGiB), Action::kFlush, Reason::kFloor},
        {At(0.1, 3 * kGiB, 1 * kGiB), Action::kStop, Reason::kFloor}}},
      {"flush allowed, cache too small: stop at once",
       true,
       {{At(0, 2 * kGiB, 5 * kGiB), Action::kStop, Reason::kFloor}}},
      {"flush allowed, page cache unknown: stop", true, {{At(0, 2 * kGiB), Action::kStop, Reason::kFloor}}},
      {"a flush that worked re-arms once above the floor",
       true,
       {{At(0, 2 * kGiB, 10 * kGiB), Action::kFlush, Reason::kFloor},
        {At(1, 11 * kGiB, 0), Action::kNone, Reason::kNone},
        {At(2, 2 * kGiB, 10 * kGiB), Action::kFlush, Reason::kFloor}}},
      {"pressure for less than the window",
       false,
       {{At(0, 50 * kGiB, {}, 60), Action::kNone, Reason::kNone},
        {At(4.9, 50 * kGiB, {}, 60), Action::kNone, Reason::kNone}}},
      {"pressure for the whole window: stop",
       false,
       {{At(0, 50 * kGiB, {}, 60), Action::kNone, Reason::kNone},
        {At(5, 50 * kGiB, {}, 60), Action::kStop, Reason::kPressure}}},
      {"a dip below the limit restarts the window",
       false,
       {{At(0, 50 * kGiB, {}, 60), Action::kNone, Reason::kNone},
        {At(3, 50 * kGiB, {}, 10), Action::kNone, Reason::kNone},
        {At(4, 50 * kGiB, {}, 60), Action::kNone, Reason::kNone},
        {At(8.9, 50 * kGiB, {}, 60), Action::kNone, Reason::kNone},
        {At(9, 50 * kGiB, {}, 60), Action::kStop, Reason::kPressure}}},
      {"at the limit is not above it",
       false,
       {{At(0, 50 * kGiB, {}, 40), Action::kNone, Reason::kNone},
        {At(9, 50 * kGiB, {}, 40), Action::kNone, Reason::kNone}}},
      {"no PSI reading: no pressure rule", false, {{At(100, 50 * kGiB), Action::kNone, Reason::kNone}}},
  };
  for (const auto& cs : cases) {
    Config cc = c;
    cc.may_flush = cs.may_flush;
    State st;
    int i = 0;
    for (const auto& step : cs.steps) {
      Decision d = Decide(cc, step.r, st);
      EXPECT_EQ(d.action, step.want) << cs.name << " step " << i;
      EXPECT_EQ(d.reason, step.why) << cs.name << " step " << i;
      ++i;
    }
  }
  Config off = c;
  off.max_pressure.reset();
  State st;
  EXPECT_EQ(Decide(off, At(0, 50 * kGiB, {}, 99), st).action, Action::kNone);
  EXPECT_EQ(Decide(off, At(60, 50 * kGiB, {}, 99), st).action, Action::kNone);
}

TEST(GuardPollInterval, FastWithinTwiceTheFloorOrUnderPressure) {
  Config c;
  c.floor = 4 * kGiB;
  EXPECT_EQ(PollInterval(c, At(0, 100 * kGiB)), kSlowPollS);
  EXPECT_EQ(PollInterval(c, At(0, 8 * kGiB)), kSlowPollS);
  EXPECT_EQ(PollInterval(c, At(0, 8 * kGiB - 1)), kFastPollS);
  EXPECT_EQ(PollInterval(c, At(0, 1)), kFastPollS);
  EXPECT_EQ(PollInterval(c, At(0, 100 * kGiB, {}, 41)), kFastPollS);
  EXPECT_LE(kFastPollS, 0.1);
  EXPECT_LE(kSlowPollS, 1.0);
  c.floor = UINT64_MAX;  // no overflow in "2x the floor"
  EXPECT_EQ(PollInterval(c, At(0, UINT64_MAX - 1)), kFastPollS);
}

TEST(GuardScanMemInfo, AgreesWithTheParser) {
  for (const char* fx : {"gb10", "discrete"}) {
    std::string path = testing::Fixture(fx) + "/proc/meminfo";
    if (!std::filesystem::exists(path)) continue;
    std::string text = testing::ReadFileOrDie(path);
    auto full = ParseMemInfo(text);
    ASSERT_TRUE(full) << fx;
    MemFast m = ScanMemInfo(text);
    EXPECT_EQ(m.total, full->total) << fx;
    EXPECT_EQ(m.available, full->available) << fx;
    EXPECT_EQ(m.PageCache(), full->PageCache()) << fx;
  }
}

TEST(GuardScanMemInfo, Table) {
  struct Case {
    const char* text;
    std::optional<uint64_t> available, page_cache;
  };
  const Case cases[] = {
      {"MemAvailable: 10 kB\n", 10240, {}},
      {"MemAvailable:10 kB", 10240, {}},
      {"MemAvailable: x kB\n", {}, {}},
      {"", {}, {}},
      {"SwapCached: 5 kB\nCached: 4 kB\nBuffers: 2 kB\nShmem: 1 kB\nMemAvailable: 3 kB\n", 3072, 5120},
      {"Cached: 1 kB\nBuffers: 0 kB\nShmem: 9 kB\n", {}, 0},  // more shmem than cache: none reclaimable
      {"MemAvailable: 99999999999999999999999 kB\n", {}, {}},  // overflow is no reading
      {"MemAvailable: 18014398509481984 kB\n", {}, {}},       // * 1024 would overflow
  };
  for (const auto& c : cases) {
    MemFast m = ScanMemInfo(c.text);
    EXPECT_EQ(m.available, c.available) << c.text;
    EXPECT_EQ(m.PageCache(), c.page_cache) << c.text;
  }
}

TEST(GuardScanPsi, Table) {
  struct Case {
    const char* text;
    std::optional<double> full;
  };
  const Case cases[] = {
      {"some avg10=1.52 avg60=0.87 avg300=0.21 total=48211934\nfull avg10=0.40 avg60=0.22 avg300=0.05 total=1\n", 0.40},
      {"some avg10=70 avg60=0 avg300=0 total=1\nfull avg10=63.25 avg60=0 avg300=0 total=1\n", 63.25},
      {"some avg10=1.52 avg60=0.87 avg300=0.21 total=48211934\n", {}},  // old kernel: no full line
      {"full avg10=abc avg60=0 avg300=0 total=1\n", {}},
      {"full avg10=100.01 avg60=0 avg300=0 total=1\n", {}},
      {"full avg60=1 avg300=0 total=1\n", {}},
      {"", {}},
  };
  for (const auto& c : cases) {
    auto v = ScanPsiFullAvg10(c.text);
    ASSERT_EQ(v.has_value(), c.full.has_value()) << c.text;
    if (v) {
      EXPECT_NEAR(*v, *c.full, 1e-9) << c.text;
      auto p = ParsePressure(c.text);
      ASSERT_TRUE(p && p->full) << c.text;
      EXPECT_NEAR(p->full->avg10, *v, 1e-9);
    }
  }
}

TEST(GuardFastReader, ReadsAFixtureAfreshEachPoll) {
  testing::TempDir d;
  d.Write("proc/meminfo",
          "MemTotal: 8388608 kB\nMemAvailable: 4194304 kB\nCached: 1024 kB\nBuffers: 0 kB\nShmem: 0 kB\n");
  FastReader r{HostFs(d.path())};
  auto a = r.Read(1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->available, 4 * kGiB);
  EXPECT_EQ(a->page_cache, kMiB);
  EXPECT_FALSE(a->psi_full_avg10);  // no pressure file: PSI absent, not 0
  EXPECT_EQ(r.mem_total(), 8 * kGiB);
  d.Write("proc/meminfo", "MemTotal: 8388608 kB\nMemAvailable: 1024 kB\n");
  d.Write("proc/pressure/memory", "some avg10=1 avg60=0 avg300=0 total=1\nfull avg10=55.5 avg60=0 avg300=0 total=1\n");
  auto b = r.Read(2);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->available, kMiB);
  EXPECT_FALSE(b->page_cache);
  EXPECT_EQ(b->psi_full_avg10, 55.5);
  d.Write("proc/meminfo", "MemTotal: 8388608 kB\n");
  EXPECT_FALSE(r.Read(3)) << "no MemAvailable: no reading";
}

}  // namespace
}  // namespace sparkops::guard
