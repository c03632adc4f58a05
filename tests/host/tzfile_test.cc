// Time zones from tz database files and POSIX TZ rules (host/tzfile.h), and analyze's --tz.
#include <gtest/gtest.h>

#include <fstream>

#include "base/timefmt.h"
#include "host/hostfs.h"
#include "host/tzfile.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;

int64_t Utc(const char* iso) { return ToUnixMillis(*ParseTimestamp(iso, 0)) / 1000; }

std::string FileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(PosixTz, ParsesTheRulesPeopleUseAndRefusesTheRest) {
  struct Case {
    const char* text;
    bool ok;
    int64_t std_offset;
    std::optional<int64_t> dst_offset;
  } cases[] = {{"CET-1CEST,M3.5.0,M10.5.0/3", true, 3600, 7200},
               {"EST5EDT", true, -18000, -14400},
               {"<+0330>-3:30", true, 12600, std::nullopt},
               {"UTC0", true, 0, std::nullopt},
               {"AEST-10AEDT,M10.1.0,M4.1.0/3", true, 36000, 39600},
               {"IST-1GMT0,M10.5.0,M3.5.0/1", true, 3600, 0},
               {"<-03>3<-02>,M3.5.0/-2,M10.5.0/-1", true, -10800, -7200},
               {"", false, 0, {}},
               {"1", false, 0, {}},
               {"AB-1", false, 0, {}},
               {"CET-25", false, 0, {}},
               {"CET-1CEST,M13.1.0,M10.5.0", false, 0, {}},
               {"CET-1CEST,M3.5.0", false, 0, {}},
               {"CET-1CEST,M3.5.0,M10.5.0/3junk", false, 0, {}},
               {"Europe/Nowhere", false, 0, {}}};
  for (const auto& c : cases) {
    auto z = ParsePosixTz(c.text);
    ASSERT_EQ(z.has_value(), c.ok) << c.text;
    if (!c.ok) {
      EXPECT_NE(z.error().message.find(c.text), std::string::npos) << z.error().message;
      continue;
    }
    EXPECT_EQ(z->std_offset, c.std_offset) << c.text;
    EXPECT_EQ(z->dst_offset, c.dst_offset) << c.text;
  }
}

TEST(PosixTz, ChangesAtTheRightInstantInBothHemispheres) {
  auto cet = *ParsePosixTz("CET-1CEST,M3.5.0,M10.5.0/3");  // last Sundays: 2030-03-31, 2030-10-27
  EXPECT_EQ(cet.OffsetAtUtc(Utc("2030-01-15T12:00:00Z")), 3600);
  EXPECT_EQ(cet.OffsetAtUtc(Utc("2030-03-31T00:59:59Z")), 3600);
  EXPECT_EQ(cet.OffsetAtUtc(Utc("2030-03-31T01:00:00Z")), 7200);
  EXPECT_EQ(cet.OffsetAtUtc(Utc("2030-10-27T00:59:59Z")), 7200);
  EXPECT_EQ(cet.OffsetAtUtc(Utc("2030-10-27T01:00:00Z")), 3600);
  auto aus = *ParsePosixTz("AEST-10AEDT,M10.1.0,M4.1.0/3");  // southern: summer over new year
  EXPECT_EQ(aus.OffsetAtUtc(Utc("2030-01-15T00:00:00Z")), 39600);
  EXPECT_EQ(aus.OffsetAtUtc(Utc("2030-07-01T00:00:00Z")), 36000);
  auto j = *ParsePosixTz("XST-1XDT,J60,J300");  // Julian day 60 is March 1 even in a leap year
  EXPECT_EQ(j.OffsetAtUtc(Utc("2028-02-29T12:00:00Z")), 3600);
  EXPECT_EQ(j.OffsetAtUtc(Utc("2028-03-01T12:00:00Z")), 7200);
}

TEST(Tzif, FatAndSlimFilesGiveTheSameOffsets) {
  const std::string dir = Fixture("tz") + "/usr/share/zoneinfo/";
  for (const char* name : {"Europe/Berlin", "Test/SlimBerlin"}) {
    auto z = ParseTzif(FileBytes(dir + name), name);
    ASSERT_TRUE(z) << z.error().message;
    EXPECT_EQ(z->OffsetAtUtc(Utc("2024-01-10T00:00:00Z")), 3600) << name;
    EXPECT_EQ(z->OffsetAtUtc(Utc("2024-07-10T00:00:00Z")), 7200) << name;
    EXPECT_EQ(z->OffsetAtUtc(Utc("2050-07-10T00:00:00Z")), 7200) << name;  // past the fat file's last transition
    EXPECT_EQ(z->OffsetAtUtc(Utc("2050-12-10T00:00:00Z")), 3600) << name;
    // Local wall-clock times: a normal one, the spring-forward gap, the fall-back overlap.
    EXPECT_EQ(z->OffsetForLocal(Utc("2024-07-10T12:00:00Z")), 7200) << name;
    EXPECT_EQ(z->OffsetForLocal(Utc("2024-03-31T02:30:00Z")), 3600) << name;
    EXPECT_EQ(z->OffsetForLocal(Utc("2024-10-27T02:30:00Z")), 7200) << name;
  }
  auto fat = *ParseTzif(FileBytes(dir + "Europe/Berlin"), "Berlin");
  EXPECT_EQ(fat.OffsetAtUtc(Utc("1975-07-01T00:00:00Z")), 3600);  // no DST in Germany 1950-1979
}

TEST(Tzif, DamagedFilesAreErrorsNotCrashes) {
  std::string good = FileBytes(Fixture("tz") + "/usr/share/zoneinfo/Europe/Berlin");
  for (size_t cut : {size_t{0}, size_t{4}, size_t{43}, size_t{44}, size_t{100}, good.size() / 2})
    EXPECT_FALSE(ParseTzif(good.substr(0, cut), "cut")) << cut;
  std::string huge = good;
  for (size_t k = 20; k < 44; ++k) huge[k] = '\xff';  // every count 2^32-1
  EXPECT_FALSE(ParseTzif(huge, "huge"));
  std::string notz = good;
  notz[0] = 'X';
  auto e = ParseTzif(notz, "notz");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("notz"), std::string::npos);
}

TEST(ResolveZone, ReadsTheTzDatabaseUnderTheRoot) {
  HostFs fs(Fixture("tz"));
  auto berlin = ResolveZone(fs, "Europe/Berlin");
  ASSERT_TRUE(berlin) << berlin.error().message;
  EXPECT_EQ(berlin->OffsetAtUtc(Utc("2024-07-10T00:00:00Z")), 7200);
  auto colon = ResolveZone(fs, ":Europe/Berlin");
  ASSERT_TRUE(colon);
  auto posix = ResolveZone(fs, "EST5EDT");  // not a file there: a POSIX rule
  ASSERT_TRUE(posix);
  EXPECT_EQ(posix->OffsetAtUtc(Utc("2024-01-10T00:00:00Z")), -18000);
  auto local = ResolveZone(fs, "");  // no etc/localtime in the tree: UTC
  ASSERT_TRUE(local);
  EXPECT_EQ(local->OffsetAtUtc(Utc("2024-07-10T00:00:00Z")), 0);
  for (const char* bad : {"Nowhere/Zone", "../../etc/passwd", "Europe"}) {
    auto r = ResolveZone(fs, bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
  }
}

TEST(AnalyzeTz, AnUnknownZoneIsExit2AndANamedOneIsReadUnderTheRoot) {
  testing::TempDir d;
  d.Write("train.log", "2024-07-10 12:00:00 step 1 loss 2.0\n2024-07-10 12:00:01 step 2 loss 1.9\n");
  auto bad = testing::RunInProcess({"analyze", "--log", d.path() + "/train.log", "--tz", "Mars/Olympus"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("Mars/Olympus"), std::string::npos) << bad.err;
  auto ok = testing::RunInProcess(
      {"--root", Fixture("tz"), "analyze", "--log", d.path() + "/train.log", "--tz", "Europe/Berlin"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

}  // namespace
}  // namespace sparkops
