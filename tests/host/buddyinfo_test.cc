#include "host/buddyinfo.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace sparkops {
namespace {

TEST(ParseBuddyInfo, Table) {
  struct Case {
    const char* name;
    const char* text;
    bool ok;
    size_t zones;
  } cases[] = {
      {"two zones", "Node 0, zone      DMA      1 2 3\nNode 0, zone   Normal  5 0 0 0\n", true, 2},
      {"no zone", "", false, 0},
      {"not a count", "Node 0, zone Normal 1 x\n", false, 0},
      {"missing comma", "Node 0 zone Normal 1 2\n", false, 0},
      {"other text", "hello world\n", false, 0},
  };
  for (const auto& c : cases) {
    auto z = ParseBuddyInfo(c.text);
    ASSERT_EQ(z.has_value(), c.ok) << c.name;
    if (z) EXPECT_EQ(z->size(), c.zones) << c.name;
    if (!z) EXPECT_NE(z.error().message.find("/proc/buddyinfo"), std::string::npos) << c.name;
  }
}

TEST(BuddyInfo, OrdersAndFreeBlocks) {
  EXPECT_EQ(PageSizeFromHugepage(2u << 20), 4096u);
  EXPECT_EQ(PageSizeFromHugepage(32u << 20), 16384u);
  EXPECT_EQ(PageSizeFromHugepage(512u << 20), 65536u);
  EXPECT_FALSE(PageSizeFromHugepage(1u << 30));
  EXPECT_EQ(OrderFor(2u << 20, 4096), 9);
  EXPECT_EQ(OrderFor(4u << 20, 4096), 10);
  EXPECT_EQ(OrderFor(2u << 20, 65536), 5);
  EXPECT_EQ(OrderFor(4096, 4096), 0);
  auto z = ParseBuddyInfo("Node 0, zone Normal 9 9 9 1 2\nNode 0, zone DMA 0 0 0 0 1\n");
  ASSERT_TRUE(z);
  EXPECT_EQ(FreeBlocksAtOrder(*z, 3), 1u + 2 * 2 + 2);  // order 3: 1; order 4: 2 blocks = 4 of order 3; DMA: 2
  EXPECT_EQ(FreeBlocksAtOrder(*z, 5), 0u);
  auto huge = ParseBuddyInfo("Node 0, zone Normal 0 18446744073709551615 18446744073709551615\n");
  ASSERT_TRUE(huge);
  EXPECT_EQ(FreeBlocksAtOrder(*huge, 0), UINT64_MAX);  // saturates, never wraps
}

TEST(BuddyInfo, WedgeFixtureHasNoBlockFor2MiB) {
  HostFs fs(testing::Fixture("wedge"));
  auto z = ReadBuddyInfo(fs);
  ASSERT_TRUE(z) << z.error().message;
  EXPECT_EQ(FreeBlocksAtOrder(*z, 8), 1u);  // the DMA zone's one order-8 block (1 MiB)
  EXPECT_EQ(FreeBlocksAtOrder(*z, 9), 0u);
  EXPECT_EQ(FreeBlocksAtOrder(*z, 10), 0u);
}

TEST(ShmSizeFromMounts, Table) {
  bool mounted = false;
  EXPECT_EQ(ShmSizeFromMounts("tmpfs /dev/shm tmpfs rw,size=65536k 0 0\n", &mounted), 64u << 20);
  EXPECT_TRUE(mounted);
  EXPECT_EQ(ShmSizeFromMounts("shm /dev/shm tmpfs rw,size=64g 0 0\n"), 64ull << 30);
  EXPECT_FALSE(ShmSizeFromMounts("tmpfs /dev/shm tmpfs rw,nosuid,inode64 0 0\n", &mounted));
  EXPECT_TRUE(mounted);
  EXPECT_FALSE(ShmSizeFromMounts("proc /proc proc rw 0 0\n", &mounted));
  EXPECT_FALSE(mounted);
  EXPECT_FALSE(ShmSizeFromMounts("tmpfs /dev/shm tmpfs size=99999999999999999999g 0 0\n"));
}

}  // namespace
}  // namespace sparkops
