#include <gtest/gtest.h>

#include "analysis/localtime.h"
#include "analysis/thermal.h"
#include "base/timefmt.h"
#include "host/bootid.h"
#include "test_util.h"

namespace sparkops {
namespace {

int64_t Utc(const char* s) { return ToUnixMillis(*ParseTimestamp(s)); }

LocalZone Zone(const std::string& z) { return *LocalZone::Make(z); }

TEST(ThermalCsv, SparkopsFormatByColumnNameUnknownColumnsIgnored) {
  auto z = Zone("UTC");
  const char* csv =
      "timestamp,gpu_temp_c,power_w,power_limit_w,sm_clock_mhz,clock_event_reasons,throttle,mem_total_gib,"
      "mem_available_gib,page_cache_gib,swap_used_gib,mem_pressure_some_avg10,event,future_column\n"
      "2026-11-29T13:02:29.123Z,88,84.5,,1650,0x20,sw_thermal,119.7,95.5,12.0,0.0,0.25,throttle_start:sw_thermal,x\n"
      "2026-11-29T13:02:59.123Z,,,,,,,119.7,95.4,,,,,\n";
  auto t = ParseThermalCsv(csv, "t.csv", z);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->format, "sparkops");
  const ThermalRow& r = t->rows[0];
  EXPECT_EQ(r.t_ms, Utc("2026-11-29T13:02:29.123Z"));
  EXPECT_EQ(r.temp_c, 88);
  EXPECT_EQ(r.power_w, 84.5);
  EXPECT_FALSE(r.power_limit_w);  // empty cell = absent, never 0
  EXPECT_EQ(r.reasons, 0x20u);
  EXPECT_EQ(r.throttle, "sw_thermal");
  EXPECT_EQ(r.events, "throttle_start:sw_thermal");
  EXPECT_EQ(r.psi_some_avg10, 0.25);
  EXPECT_FALSE(t->rows[1].temp_c);
  EXPECT_FALSE(t->rows[1].reasons);
  EXPECT_EQ(t->interval_ms, 30000);
}

TEST(ThermalCsv, NvidiaSmiQueryOutputWithUnitsAndNA) {
  // Header and row layout as printed on GB10 (NordicHPC/sonar #460)
  const char* csv =
      "timestamp, utilization.gpu [%], memory.used [MiB], temperature.gpu, power.draw [W], clocks.sm [MHz], "
      "clocks_event_reasons.sw_thermal_slowdown\n"
      "2025/11/24 14:08:55.751, 0 %, [N/A], 38, 11.17 W, 208 MHz, Not Active\n"
      "2025/11/24 14:08:56.751, 97 %, [N/A], 88, 84.00 W, 1650 MHz, Active\n";
  auto t = ParseThermalCsv(csv, "smi.csv", Zone("+02:00"));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->format, "nvidia-smi");
  ASSERT_EQ(t->rows.size(), 2u);
  // zone-less nvidia-smi time is local: 14:08 at +02:00 is 12:08 UTC
  EXPECT_EQ(t->rows[0].t_ms, Utc("2025-11-24T12:08:55.751Z"));
  EXPECT_EQ(t->rows[0].util_pct, 0);
  EXPECT_EQ(t->rows[0].power_w, 11.17);
  EXPECT_EQ(t->rows[0].sm_clock_mhz, 208);
  EXPECT_EQ(t->rows[0].reasons, 0u);
  EXPECT_EQ(t->rows[1].reasons, kReasonSwThermal);
  EXPECT_EQ(t->rows[1].throttle, "sw_thermal");
}

TEST(ThermalCsv, TzNameUsesTheZoneDatabase) {
  auto z = LocalZone::Make("America/New_York");
  ASSERT_TRUE(z);
  // November: EST, UTC-5
  EXPECT_EQ(z->ParseMillis("2026/11/29 08:00:00.000"), Utc("2026-11-29T13:00:00Z"));
  // July: EDT, UTC-4
  EXPECT_EQ(z->ParseMillis("2026-07-01 08:00:00"), Utc("2026-07-01T12:00:00Z"));
  // an explicit zone wins over the local one
  EXPECT_EQ(z->ParseMillis("2026-07-01T08:00:00Z"), Utc("2026-07-01T08:00:00Z"));
  EXPECT_FALSE(LocalZone::Make("Mars"));
}

TEST(ThermalCsv, MalformedInputNamesFileLineAndColumn) {
  auto z = Zone("UTC");
  auto bad_num = ParseThermalCsv("timestamp,gpu_temp_c\n2026-11-29T13:02:29Z,hot\n", "a.csv", z);
  ASSERT_FALSE(bad_num);
  EXPECT_NE(bad_num.error().message.find("a.csv:2: column gpu_temp_c"), std::string::npos) << bad_num.error().message;
  auto bad_count = ParseThermalCsv("timestamp,gpu_temp_c\n2026-11-29T13:02:29Z,1,2\n", "b.csv", z);
  ASSERT_FALSE(bad_count);
  EXPECT_NE(bad_count.error().message.find("b.csv:2"), std::string::npos);
  auto bad_time = ParseThermalCsv("timestamp,gpu_temp_c\nyesterday,1\n", "c.csv", z);
  ASSERT_FALSE(bad_time);
  EXPECT_NE(bad_time.error().message.find("c.csv:2: column timestamp"), std::string::npos);
  auto no_header = ParseThermalCsv("gpu_temp_c,power_w\n1,2\n", "d.csv", z);
  ASSERT_FALSE(no_header);
  EXPECT_NE(no_header.error().message.find("no `timestamp` column"), std::string::npos);
  auto hex = ParseThermalCsv("timestamp,clock_event_reasons\n2026-11-29T13:02:29Z,0xZZ\n", "e.csv", z);
  ASSERT_FALSE(hex);
  EXPECT_NE(hex.error().message.find("hex"), std::string::npos);
}

// A last row without its newline that does not parse is a write cut short (kill -9 of the
// writer, or a CSV still being written): ignored. The same row anywhere else is an error, and so
// is a file whose only line is a torn (or wrong) header.
TEST(ThermalCsv, TornLastRowIsIgnoredOnlyAtTheEnd) {
  auto z = Zone("UTC");
  const std::string rows = "timestamp,gpu_temp_c\n2026-11-29T13:02:29Z,41\n2026-11-29T13:02:39Z,42\n";
  auto torn = ParseThermalCsv(rows + "2026-11-29T13:0", "t.csv", z);
  ASSERT_TRUE(torn) << torn.error().message;
  EXPECT_EQ(torn->rows.size(), 2u);
  auto torn_cells = ParseThermalCsv(rows + "2026-11-29T13:02:49Z", "t.csv", z);  // cut before its cells
  ASSERT_TRUE(torn_cells) << torn_cells.error().message;
  EXPECT_EQ(torn_cells->rows.size(), 2u);
  auto whole = ParseThermalCsv(rows + "2026-11-29T13:02:49Z,43", "t.csv", z);  // complete but unterminated
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->rows.size(), 3u);
  EXPECT_FALSE(ParseThermalCsv(rows + "2026-11-29T13:0\n", "t.csv", z));  // terminated: a bad row
  EXPECT_FALSE(ParseThermalCsv("timestamp,gpu_temp_c\n2026-11-29T13:0\n2026-11-29T13:02:39Z,42", "t.csv", z));
  EXPECT_FALSE(ParseThermalCsv("gpu_temp_c,power_w", "t.csv", z));  // no header at all
  sparkops::testing::TempDir d;
  auto read = ReadThermalCsv(d.Write("torn.csv", rows + "2026-11-29T13:0"), z);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->rows.size(), 2u);
  EXPECT_FALSE(ReadThermalCsv(d.Write("mid.csv", "timestamp,gpu_temp_c\n2026-11-29T13:0\n2026-11-29T13:02:39Z,42"), z));
  EXPECT_FALSE(ReadThermalCsv(d.Write("end.csv", rows + "2026-11-29T13:0\n"), z));
}

TEST(BootId, ParsesAndRejects) {
  EXPECT_EQ(ParseBootId("8D3C2A8E-4F1B-4C59-9A1E-2B7D5E6F0A11\n").value(), "8d3c2a8e-4f1b-4c59-9a1e-2b7d5e6f0a11");
  EXPECT_FALSE(ParseBootId("not-a-boot-id"));
  EXPECT_FALSE(ParseBootId(""));
  HostFs fs(std::string(SPARKOPS_TEST_SOURCE_DIR) + "/fixtures/runs/root");
  EXPECT_EQ(ReadBootId(fs).value(), "8d3c2a8e-4f1b-4c59-9a1e-2b7d5e6f0a11");
  HostFs empty(std::string(SPARKOPS_TEST_SOURCE_DIR) + "/fixtures/gb10");
  EXPECT_FALSE(ReadBootId(empty));
}

TEST(ThermalCsv, SpreadsheetExportWithQuotedFieldsCrlfAndLineEndsInAField) {
  // Every field quoted, CRLF line ends, a doubled quote and a comma in the event cell, and a
  // quoted line end in a column sparkops does not know: what a spreadsheet's "save as CSV" writes.
  auto z = Zone("UTC");
  auto t = ReadThermalCsv(testing::Fixture("csv/spreadsheet_export.csv"), z);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0].temp_c, 45);
  EXPECT_EQ(t->rows[0].events, "pd_degraded");
  EXPECT_FALSE(t->rows[1].temp_c);
  EXPECT_EQ(t->rows[1].sm_clock_mhz, 1200);
  EXPECT_EQ(t->rows[1].events, "operator_note:fan swapped, see \"ticket 7\"");
  auto same = ParseThermalCsv(testing::ReadFileOrDie(testing::Fixture("csv/spreadsheet_export.csv")), "x.csv", z);
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_EQ(same->rows.size(), 2u);
}

TEST(ThermalCsv, QuotedRecordsAreCheckedAndATornOneIsDropped) {
  auto z = Zone("UTC");
  const std::string head = "timestamp,gpu_temp_c,event\n2026-11-29T13:02:29.123Z,45,hot\n";
  // cut short inside a quoted field: the writer was killed mid-row
  auto torn = ParseThermalCsv(head + "2026-11-29T13:02:59.123Z,46,\"a, b\nc", "t.csv", z);
  ASSERT_TRUE(torn) << torn.error().message;
  EXPECT_EQ(torn->rows.size(), 1u);
  // an unclosed quote in a finished file, and text after a closing quote, are errors naming the line
  auto open = ParseThermalCsv(head + "2026-11-29T13:02:59.123Z,46,\"a, b\n", "t.csv", z);
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find("t.csv:3"), std::string::npos) << open.error().message;
  auto junk = ParseThermalCsv(head + "2026-11-29T13:02:59.123Z,46,\"a\"b\n", "t.csv", z);
  ASSERT_FALSE(junk);
  EXPECT_NE(junk.error().message.find("t.csv:3"), std::string::npos) << junk.error().message;
}

TEST(ThermalCsv, AnOpenQuoteOverManyLinesIsBoundedAndLinear) {
  // A hostile file: a quote that never closes, then many short lines. Each line is scanned once
  // (no rescan of the gathered record), and the record stops at 1 MiB.
  auto z = Zone("UTC");
  std::string text = "timestamp,event\n2026-11-29T13:02:29.123Z,\"";
  for (int i = 0; i < 300'000; ++i) text += "x\n";
  auto r = ParseThermalCsv(text, "h.csv", z);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("h.csv:2: a quoted field is not closed"), std::string::npos) << r.error().message;
  for (int i = 0; i < 300'000; ++i) text += "yyy\n";
  r = ParseThermalCsv(text, "h.csv", z);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("h.csv:2: a quoted field runs past 1 MiB"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace sparkops
