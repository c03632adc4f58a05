// Clock-event reasons, the event detector, CSV rows, PSI parsing and the durable appender.
#include <gtest/gtest.h>

#include "analysis/thermal.h"
#include "base/strings.h"
#include "host/pressure.h"
#include "telemetry/appender.h"
#include "telemetry/csv.h"
#include "telemetry/events.h"
#include "telemetry/reasons.h"
#include "test_util.h"

namespace sparkops {
namespace {

TEST(Reasons, DecodeAndThrottleSet) {
  EXPECT_TRUE(DecodeReasons(0).empty());
  EXPECT_EQ(DecodeReasons(0x1), std::vector<std::string>{"gpu_idle"});
  EXPECT_EQ(DecodeReasons(0x1FF).size(), 9u);
  EXPECT_EQ(DecodeReasons(0x200), std::vector<std::string>{"0x200"});
  // Header bits (nvml.h 13.3.29): 0x10 is sync boost, 0x20 SW thermal, 0x100 display clock.
  EXPECT_EQ(DecodeReasons(0x110), (std::vector<std::string>{"sync_boost", "display_clocks"}));
  EXPECT_TRUE(ThrottleReasons(0x1 | 0x2 | 0x10 | 0x100).empty());
  EXPECT_EQ(ThrottleReasons(0x24), (std::vector<std::string>{"sw_thermal", "sw_power_cap"}));
  EXPECT_EQ(ThrottleReasons(0xFC),
            (std::vector<std::string>{"sw_thermal", "hw_thermal", "sw_power_cap", "hw_slowdown", "hw_power_brake"}));
  EXPECT_EQ(FormatReasonMask(0x20), "0x20");
}

struct Row {
  std::optional<double> temp, power;
  std::optional<unsigned> sm, util;
  std::optional<uint64_t> reasons;
  std::vector<std::string> want;
};

Sample Make(const Row& r) {
  Sample s;
  GpuReading g;
  g.temp_c = r.temp, g.power_w = r.power, g.sm_clock_mhz = r.sm, g.util_pct = r.util, g.clock_event_reasons = r.reasons;
  s.gpu = g;
  return s;
}

void RunSequence(const std::vector<Row>& rows) {
  EventDetector d;
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(d.Update(Make(rows[i])), rows[i].want) << "sample " << i;
}

TEST(Events, ThrottleStartChangeAndEnd) {
  RunSequence({
      {50, 80, 2400, 90, 0x0, {}},
      {50, 80, 2400, 90, 0x1, {}},  // idle is not throttling
      {50, 80, 2100, 90, 0x20, {"throttle_start:sw_thermal"}},
      {50, 80, 2100, 90, 0x20, {}},
      {50, 80, 2000, 90, 0x24, {"throttle_start:sw_thermal+sw_power_cap"}},
      {50, 80, 2400, 90, std::nullopt, {}},  // reasons unknown: no change claimed
      {50, 80, 2400, 90, 0x0, {"throttle_end"}},
      {50, 80, 2400, 90, 0x0, {}},
  });
}

TEST(Events, PdDegradedNeedsTwoSamplesHighUtilAndNoReason) {
  RunSequence({
      {50, 15, 850, 95, 0x0, {}},
      {50, 15, 507, 95, 0x0, {"pd_degraded"}},
      {50, 15, 481, 95, 0x0, {}},  // once per stretch
      {50, 15, 481, 50, 0x0, {}},  // low utilization ends it
      {50, 15, 481, 95, 0x0, {}},
      {50, 15, 481, 95, 0x0, {"pd_degraded"}},
  });
  RunSequence({
      {50, 15, 800, 95, 0x20, {"throttle_start:sw_thermal"}},
      {50, 15, 800, 95, 0x20, {}},  // a reason explains the low clock
      {50, 15, 1400, 95, 0x0, {"throttle_end"}},
      {50, 15, 1400, 95, 0x0, {}},  // 1400 is not under 1400
  });
  RunSequence({
      {50, 15, 800, 95, std::nullopt, {}},
      {50, 15, 800, 95, std::nullopt, {}},  // reasons unknown: cannot say "no reason"
  });
}

TEST(Events, ThermalSignatureRisingAtFlatPower) {
  RunSequence({
      {60, 85, 2400, 97, 0x0, {}},
      {61, 86, 2400, 97, 0x0, {}},
      {63, 84, 2400, 97, 0x0, {"thermal_signature"}},  // +3 over 3 samples, power within 10 %
      {64, 85, 2400, 97, 0x0, {}},                     // once per stretch
      {62, 85, 2400, 97, 0x0, {}},                     // falling ends it
      {63, 85, 2400, 97, 0x0, {}},
      {66, 85, 2400, 97, 0x0, {"thermal_signature"}},
  });
  RunSequence({
      {60, 50, 2400, 97, 0x0, {}},
      {62, 70, 2400, 97, 0x0, {}},  // power jumped 40 %: the heat is explained, new stretch
      {64, 70, 2400, 97, 0x0, {}},
      {65, 71, 2400, 97, 0x0, {"thermal_signature"}},  // 62 -> 65 over 3 samples at flat power
  });
  RunSequence({
      {60, 50, 2400, 97, 0x0, {}}, {61, 50, 2400, 97, 0x0, {}}, {62, 50, 2400, 97, 0x0, {}},  // only +2
  });
}

TEST(Events, HotOncePerEpisode) {
  RunSequence({
      {85, 90, 2400, 97, 0x0, {}},
      {86, 50, 2400, 97, 0x0, {"hot"}},  // power swings: no thermal signature in this table
      {90, 90, 2400, 97, 0x0, {}},
      {80, 50, 2400, 97, 0x0, {}},
      {87, 90, 2400, 97, 0x0, {"hot"}},
  });
}

TEST(Events, SeveralInOneSampleInFixedOrder) {
  RunSequence({
      {80, 85, 2400, 97, 0x0, {}},
      {82, 85, 2400, 97, 0x0, {}},
      {88, 86, 2100, 97, 0x20, {"throttle_start:sw_thermal", "thermal_signature", "hot"}},
  });
}

TEST(Events, NoGpuNoEvents) {
  EventDetector d;
  Sample s;
  EXPECT_TRUE(d.Update(s).empty());
  s.gpu = GpuReading{};
  s.gpu->error = "NVML: GPU_IS_LOST (15)";
  s.gpu->temp_c = 99;
  EXPECT_TRUE(d.Update(s).empty());
}

TEST(Csv, AbsentIsEmptyNeverZero) {
  Sample s;
  s.time = FromUnixMillis(1795957349123);
  auto cols = CsvColumns();
  EXPECT_EQ(CsvHeader(), Join(cols, ",") + "\n");
  std::string empty = CsvRow(s);
  EXPECT_EQ(empty, "2026-11-29T13:02:29.123Z" + std::string(cols.size() - 1, ',') + "\n");
  GpuReading g;
  g.temp_c = 45, g.power_w = 12.346, g.sm_clock_mhz = 2411, g.clock_event_reasons = 0x24, g.util_pct = 0,
  g.energy_mj = 1500;
  s.gpu = g;
  s.mem = *ParseMemInfo("MemTotal: 1048576 kB\nMemFree: 524288 kB\nMemAvailable: 786432 kB\n");
  s.events = {"throttle_start:sw_thermal+sw_power_cap", "hot"};
  s.gpu_attributed_bytes = 0;
  EXPECT_EQ(CsvRow(s),
            "2026-11-29T13:02:29.123Z,45,12.35,,2411,0x24,sw_thermal+sw_power_cap,1.000,0.750,,,,,0,1.500,0.000,0.500,"
            ",,,,,,,,,,,,"  // the power columns (issue 18): nothing read
            "throttle_start:sw_thermal+sw_power_cap;hot,,,,,,,,,,,,\n");  // host contention, then issue 33 columns
 // after `event`
  s.gpu->error = "lost";
  std::string lost = CsvRow(s);
  EXPECT_EQ(lost.find(",45,"), std::string::npos) << lost;
}

TEST(Pressure, ParsesKernelFormat) {
  auto p = ParsePressure(
      "some avg10=1.52 avg60=0.87 avg300=0.21 total=48211934\n"
      "full avg10=0.40 avg60=0.22 avg300=0.05 total=12002751\n");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_DOUBLE_EQ(p->some->avg10, 1.52);
  EXPECT_EQ(p->some->total_us, 48211934u);
  EXPECT_DOUBLE_EQ(p->full->avg300, 0.05);
  auto old = ParsePressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");  // no "full" line
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->full);
  for (const char* bad : {"", "some avg10=x avg60=0 avg300=0 total=0\n", "some avg10=1 avg60=0 total=0\n",
                          "half avg10=1 avg60=0 avg300=0 total=0\n", "some avg10 avg60=0 avg300=0 total=0\n"})
    EXPECT_FALSE(ParsePressure(bad)) << bad;
  HostFs gb10(testing::Fixture("gb10"));
  auto r = ReadMemoryPressure(gb10);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->some->avg10, 1.52);
  EXPECT_FALSE(ReadMemoryPressure(HostFs(testing::Fixture("laptop"))));
}

TEST(Appender, HeaderOnceThenAppend) {
  testing::TempDir dir;
  std::string path = dir.path() + "/t.csv";
  {
    auto a = CsvAppender::Open(path, "h1,h2\n");
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(a->Append("1,2\n"));
  }
  {
    auto a = CsvAppender::Open(path, "h1,h2\n");
    ASSERT_TRUE(a);
    ASSERT_TRUE(a->Append("3,4\n"));
  }
  EXPECT_EQ(testing::ReadFileOrDie(path), "h1,h2\n1,2\n3,4\n");
}

TEST(Appender, RefusesOtherColumnsAndDropsTornLastRow) {
  testing::TempDir dir;
  std::string other = dir.Write("other.csv", "a,b,c\n1,2,3\n");
  auto a = CsvAppender::Open(other, "h1,h2\n");
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().kind, Error::Kind::kInput);
  EXPECT_NE(a.error().message.find("other.csv"), std::string::npos);
  // A row cut short by a kill: dropped, so it never sits in the middle of the file.
  std::string torn = dir.Write("torn.csv", "h1,h2\n1,2\n3,");
  auto b = CsvAppender::Open(torn, "h1,h2\n");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dropped_bytes(), 2u);
  ASSERT_TRUE(b->Append("5,6\n"));
  EXPECT_EQ(testing::ReadFileOrDie(torn), "h1,h2\n1,2\n5,6\n");
  std::string only_header = dir.Write("h.csv", "h1,h2\n1");
  ASSERT_TRUE(CsvAppender::Open(only_header, "h1,h2\n"));
  EXPECT_EQ(testing::ReadFileOrDie(only_header), "h1,h2\n");
  // Headerless text (a log) is data: its last line is ended, not dropped.
  std::string text = dir.Write("t.log", "a\nb");
  auto c = CsvAppender::Open(text, "");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->dropped_bytes(), 0u);
  ASSERT_TRUE(c->Append("c\n"));
  EXPECT_EQ(testing::ReadFileOrDie(text), "a\nb\nc\n");
}

TEST(Appender, DiskFullIsAnIoErrorNamingTheFile) {
  auto a = CsvAppender::Open("/dev/full", "h\n");
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().kind, Error::Kind::kIo);
  EXPECT_NE(a.error().message.find("/dev/full"), std::string::npos);
  EXPECT_NE(a.error().message.find("No space left"), std::string::npos) << a.error().message;
  auto dir = CsvAppender::Open("/nonexistent-dir/x.csv", "h\n");
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("/nonexistent-dir/x.csv"), std::string::npos);
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

TEST(CsvRead, RoundTripsWhatSampleWrites) {
  Sample s;
  s.time = FromUnixMillis(1795957349123);
  GpuReading g;
  g.temp_c = 87, g.power_w = 88.5, g.sm_clock_mhz = 2100, g.clock_event_reasons = 0x24, g.util_pct = 97;
  g.energy_mj = 1258000, g.sm_clock_max_mhz = 3003;
  s.gpu = g;
  s.mem = *ParseMemInfo("MemTotal: 1048576 kB\nMemFree: 524288 kB\nMemAvailable: 786432 kB\n");
  s.mem_pressure_some_avg10 = 1.52;
  s.events = {"throttle_start:sw_thermal+sw_power_cap", "hot"};
  Sample empty;
  empty.time = FromUnixMillis(1795957350123);
  std::string text = CsvHeader() + CsvRow(s) + CsvRow(empty);
  // The CSV `sample` writes is read back by the one thermal reader (`analyze`'s).
  auto zone = LocalZone::Make("UTC");
  ASSERT_TRUE(zone);
  auto csv = ParseThermalCsv(text, "t.csv", *zone);
  ASSERT_TRUE(csv) << csv.error().message;
  ASSERT_EQ(csv->rows.size(), 2u);
  const ThermalRow& r = csv->rows[0];
  EXPECT_EQ(r.t_ms, 1795957349123);
  EXPECT_EQ(r.temp_c, 87.0);
  EXPECT_EQ(r.power_w, 88.5);
  EXPECT_FALSE(r.power_limit_w);
  EXPECT_EQ(r.reasons, 0x24u);
  EXPECT_EQ(r.throttle, "sw_thermal+sw_power_cap");
  EXPECT_EQ(r.events, "throttle_start:sw_thermal+sw_power_cap;hot");
  EXPECT_EQ(r.sm_clock_max_mhz, 3003.0);
  EXPECT_EQ(r.util_pct, 97.0);
  EXPECT_EQ(r.mem_available_gib, 0.75);
  EXPECT_EQ(r.psi_some_avg10, 1.52);
  EXPECT_FALSE(csv->rows[1].temp_c);
  EXPECT_TRUE(csv->rows[1].events.empty());
}

}  // namespace
}  // namespace sparkops

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "telemetry/live_view.h"

namespace sparkops {
namespace {

std::string ReadAll(int fd, int pause_ms_every_4k) {
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
    got.append(buf, static_cast<size_t>(n));
    if (pause_ms_every_4k) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_every_4k));
  }
  return got;
}

TEST(LiveView, SlowButReadingReaderGetsEveryByteInOrder) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  std::string sent;
  std::string got;
  std::thread reader([&] { got = ReadAll(p[0], 1); });
  {
    LiveView view(p[1], -1, {.max_queued = 64u << 10, .stall_ms = 1000});
    for (int i = 0; i < 3000; ++i) {
      std::string line = "line " + std::to_string(i) + std::string(static_cast<size_t>(i % 200), '.') + "\n";
      view.Show(0, line);
      view.Show(1, "not shown: fd -1\n");
      sent += line;
    }
    view.Close();
    EXPECT_EQ(view.skipped_bytes(), 0u);
  }
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  EXPECT_TRUE(got == sent) << got.size() << " of " << sent.size() << " bytes";
}

TEST(LiveView, StalledReaderCostsTheViewNotTheWriterAndGetsANote) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  LiveView view(p[1], -1, {.max_queued = 256u << 10, .stall_ms = 200});
  const std::string chunk(64u << 10, 'x');
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) view.Show(0, chunk);  // 12.5 MiB into a pipe nobody reads yet
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "Show waited for the reader";
  EXPECT_GT(view.skipped_bytes(), 0u);
  std::string got;
  std::thread reader([&] { got = ReadAll(p[0], 0); });
  view.Close();
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  EXPECT_EQ(static_cast<uint64_t>(std::count(got.begin(), got.end(), 'x')) + view.skipped_bytes(), 200 * chunk.size())
      << "every byte either shown or counted as skipped";
  EXPECT_NE(got.find("[sparkops run: " + std::to_string(view.skipped_bytes()) + " bytes of output not shown here"),
            std::string::npos);
}

}  // namespace
}  // namespace sparkops
