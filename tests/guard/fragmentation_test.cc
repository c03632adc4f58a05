// issue 33: the guard's fragmentation trigger (guard/fragmentation.h): the pure decision, table-tested.
#include "guard/fragmentation.h"

#include <gtest/gtest.h>

namespace sparkops::guard {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

Reading At(double t, double avail_gib) {
  Reading r;
  r.t_s = t;
  r.available = static_cast<uint64_t>(avail_gib * static_cast<double>(kGiB));
  return r;
}

GrowthWindow Window(std::initializer_list<std::pair<double, double>> readings) {
  GrowthWindow w;
  for (auto [t, a] : readings) w.Add(At(t, a));
  return w;
}

TEST(GrowthWindow, KeepsReadingsASlowPollApartAndSaysWhetherThePoolShrinks) {
  struct Case {
    const char* name;
    GrowthWindow w;
    bool growing;
  } cases[] = {
      {"falling", Window({{0, 14}, {1, 13}, {2, 12}}), true},
      {"falling, fast polls in between are skipped", Window({{0, 14}, {0.1, 20}, {0.5, 1}, {1, 13}, {2, 12}}), true},
      {"two readings only", Window({{0, 14}, {1, 13}}), false},
      {"flat (an idle job)", Window({{0, 12}, {1, 12}, {2, 12}}), false},
      {"rose in between", Window({{0, 14}, {1, 15}, {2, 12}}), false},
      {"flat then falling", Window({{0, 14}, {1, 14}, {2, 13}}), true},
      {"fell less than 256 MiB in all", Window({{0, 12}, {1, 12.1 - 0.1}, {2, 12 - 0.2}}), false},
      {"the oldest drops out", Window({{0, 10}, {1, 14}, {2, 13}, {3, 12}}), true},
  };
  for (const auto& c : cases) EXPECT_EQ(c.w.Growing(), c.growing) << c.name;
}

TEST(FragmentationStops, Table) {
  Config on;
  on.floor = 8 * kGiB;  // armed under 16 GiB
  Config off = on;
  off.kernel_signals = false;
  const GrowthWindow grows = Window({{0, 14}, {1, 13}, {2, 12}});
  const GrowthWindow idle = Window({{0, 12}, {1, 12}, {2, 12}});
  struct Case {
    const char* name;
    const Config& c;
    Reading r;
    const GrowthWindow& w;
    std::optional<uint64_t> free;
    bool stops;
  } cases[] = {
      {"no free block, job grows, under twice the floor", on, At(2, 12), grows, 0, true},
      {"one free block left", on, At(2, 12), grows, 1, false},
      {"buddyinfo not read", on, At(2, 12), grows, std::nullopt, false},
      {"idle job on a fragmented host", on, At(2, 12), idle, 0, false},
      {"healthy host far above twice the floor", on, At(2, 100), grows, 0, false},
      {"at twice the floor exactly", on, At(2, 16), grows, 0, false},
      {"--kernel-signals off", off, At(2, 12), grows, 0, false},
  };
  for (const auto& c : cases) EXPECT_EQ(FragmentationStops(c.c, c.r, c.w, c.free), c.stops) << c.name;
  EXPECT_EQ(FragmentationLevel(on), 16 * kGiB);
  Config huge;
  huge.floor = UINT64_MAX / 2 + 1;
  EXPECT_EQ(FragmentationLevel(huge), UINT64_MAX);
  EXPECT_STREQ(ToString(Reason::kFragmentation), "fragmentation");
  ASSERT_TRUE(ReasonNamed("fragmentation"));
  EXPECT_FALSE(ReasonNamed("fragmented"));
}

TEST(DriverFreeBlocks, CountsEveryZoneButMovableAtTheOrderAndAbove) {
  // 4 KiB pages: 2 MiB is order 9; 64 KiB pages: order 5.
  EXPECT_EQ(OrderFor(2 * kMiB, 4096), 9);
  EXPECT_EQ(OrderFor(2 * kMiB, 65536), 5);
  auto zones = ParseBuddyInfo(
      "Node 0, zone      DMA      3      2      1      0      0      0      0      0      0      0      0\n"
      "Node 0, zone    DMA32    100     50     20      8      4      2      1      0      0      0      0\n"
      "Node 0, zone   Normal   9000   4000   1000    300     90     30     10      2      0      0      0\n"
      "Node 0, zone  Movable      0      0      0      0      0      0      0      0      0     12     40\n");
  ASSERT_TRUE(zones) << zones.error().message;
  EXPECT_EQ(DriverFreeBlocks(*zones, 9), 0u) << "Movable's blocks do not serve the driver";
  EXPECT_EQ(FreeBlocksAtOrder(*zones, 9), 12u + 80u);
  EXPECT_EQ(DriverFreeBlocks(*zones, 5), 2u + 1 * 2 + 30 + 10 * 2 + 2 * 4);
  const GrowthWindow w = Window({{0, 14}, {1, 13}, {2, 12}});
  const std::string e = FragmentationEvidence(*zones, 9, 4096, w);
  EXPECT_NE(e.find("no free 2 MiB block (order 9 on 4 KiB pages) in DMA, DMA32, Normal"), std::string::npos) << e;
  EXPECT_NE(e.find("node 0 Normal: orders 9+ free 0 0"), std::string::npos) << e;
  EXPECT_EQ(e.find("Movable"), std::string::npos) << e;
  EXPECT_NE(e.find("MemAvailable fell 14.0 -> 12.0 GiB over the last 3 polls (2 s)"), std::string::npos) << e;
}

}  // namespace
}  // namespace sparkops::guard
