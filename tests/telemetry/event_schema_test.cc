// The sampler's events as one table (telemetry/event_schema.h): every type round-trips through
// the CSV cell and events.jsonl, unknown names and free text are kept as text, and each type is
// documented.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "analysis/thermal.h"
#include "base/strings.h"
#include "run/run_recorder.h"
#include "telemetry/csv.h"
#include "telemetry/event_schema.h"
#include "test_util.h"

namespace sparkops {
namespace {

TEST(EventSchema, EveryTypeDecodesAndEncodesBack) {
  std::set<std::string> names;
  for (const EventType& t : SampleEventTypes()) {
    SCOPED_TRACE(std::string(t.name));
    EXPECT_TRUE(names.insert(std::string(t.name)).second);
    SampleEvent e = DecodeSampleEvent(t.example);
    EXPECT_EQ(e.type, t.name);
    EXPECT_EQ(e.has_detail, t.detail != EventDetail::kNone);
    EXPECT_EQ(EncodeSampleEvent(e), t.example);
  }
  SampleEvent x = DecodeSampleEvent("kernel_log:NVRM: Xid (PCI:0000:01:00): 79, pid=1234");
  EXPECT_EQ(x.type, "kernel_log");
  EXPECT_EQ(x.detail, "NVRM: Xid (PCI:0000:01:00): 79, pid=1234");  // split at the first colon only
  EXPECT_EQ(DetailOf("kernel_log"), EventDetail::kText);
}

TEST(EventSchema, EveryTypeRoundTripsThroughTheCsvCell) {
  Sample s;
  s.time = FromUnixMillis(1795957349123);
  for (const EventType& t : SampleEventTypes()) s.events.emplace_back(t.example);
  s.events.push_back("operator_note:fan swapped, see \"ticket 7\"\nsecond line");  // free text, not in the table
  auto zone = LocalZone::Make("UTC");
  ASSERT_TRUE(zone);
  auto back = ParseThermalCsv(CsvHeader() + CsvRow(s), "e.csv", *zone);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->rows.size(), 1u);
  EXPECT_EQ(back->rows[0].events, Join(s.events, ";"));
}

TEST(EventSchema, EveryTypeBecomesAnEventsJsonlRecord) {
  Sample s;
  s.time = FromUnixMillis(1795957349123);
  // kernel_* events are recorded from the kernel-log records themselves (Sample::kernel, with code,
  // pid, name and the line: KernelSample.* tests), not from their CSV cell text.
  std::vector<EventType> types;
  for (const EventType& t : SampleEventTypes())
    if (!t.name.starts_with("kernel_")) types.push_back(t);
  for (const EventType& t : types) s.events.emplace_back(t.example);
  s.events.push_back("xid:48");  // a name not in the table: its number is a code, not a count
  auto recs = SampleEventRecords(s);
  ASSERT_EQ(recs.size(), s.events.size());
  for (size_t i = 0; i < types.size(); ++i) {
    const EventType& t = types[i];
    const auto& j = recs[i];
    SCOPED_TRACE(j.dump());
    const bool throttle = t.name == "throttle_start" || t.name == "throttle_end";
    EXPECT_EQ(j["type"], throttle ? std::string("throttle") : std::string(t.name));
    switch (t.detail) {
      case EventDetail::kNone: EXPECT_FALSE(j.contains("detail") || j.contains("count")); break;
      case EventDetail::kReasons: EXPECT_EQ(j["reasons"], DecodeSampleEvent(t.example).detail); break;
      case EventDetail::kCount:
        ASSERT_TRUE(j.contains("count"));
        EXPECT_TRUE(j["count"].is_number());
        EXPECT_EQ(std::to_string(j["count"].get<uint64_t>()), DecodeSampleEvent(t.example).detail);
        break;
      case EventDetail::kText: EXPECT_EQ(j["detail"], DecodeSampleEvent(t.example).detail); break;
    }
  }
  EXPECT_EQ(recs.back()["type"], "xid");
  EXPECT_EQ(recs.back()["detail"], "48");
  EXPECT_FALSE(recs.back().contains("count"));
}

TEST(EventSchema, EveryTypeHasADocsRow) {
  // docs/telemetry.md, "Events": a row starting "| `name" (names with a detail: "| `name:<...>`").
  const std::string doc = testing::ReadFileOrDie(std::string(SPARKOPS_TEST_SOURCE_DIR) + "/../docs/telemetry.md");
  for (const EventType& t : SampleEventTypes()) {
    const std::string n(t.name);
    EXPECT_TRUE(doc.find("| `" + n + "`") != std::string::npos || doc.find("| `" + n + ":") != std::string::npos ||
                doc.find("/ `" + n + "`") != std::string::npos)
        << n << ": no row in docs/telemetry.md";
  }
}

}  // namespace
}  // namespace sparkops
