// Issue 18, G10: the Spark-pair link against NCCL_IB_HCA / NCCL_SOCKET_IFNAME.
#include "host/rdma_link.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace sparkops {
namespace {

std::vector<PairLine> Judge(const char* tree, const std::string& hca, const std::string& sock) {
  HostFs fs(testing::Fixture(std::string("pair/") + tree));
  return JudgePair(ReadRdmaPorts(fs), ReadNetIfs(fs), hca, sock);
}

std::vector<std::string> Warnings(const std::vector<PairLine>& lines) {
  std::vector<std::string> w;
  for (const auto& l : lines)
    if (l.level == PairLevel::kWarn && !l.endpoint) w.push_back(l.text);
  return w;
}

TEST(NcclList, PrefixExactExcludeAndPorts) {
  struct Case {
    const char* list;
    const char* dev;
    int port;
    bool want;
  };
  const Case cases[] = {
      {"", "anything", 1, true},
      {"rocep1s0f0,roceP2p1s0f0", "roceP2p1s0f0", 1, true},
      {"rocep1s0f0", "roceP2p1s0f0", 1, false},
      {"roce", "roceP2p1s0f0", 1, true},          // prefix match by default
      {"=roce", "roceP2p1s0f0", 1, false},        // '=' : exact names only
      {"^rocep1s0f1", "rocep1s0f0", 1, true},     // '^' : everything but
      {"^rocep1s0f0", "rocep1s0f0", 1, false},
      {"mlx5_0:1", "mlx5_0", 2, false},
      {"mlx5_0:1", "mlx5_0", 1, true},
  };
  for (const auto& c : cases) EXPECT_EQ(ParseNcclList(c.list).Selects(c.dev, c.port), c.want) << c.list << " " << c.dev;
  EXPECT_EQ(ParseIbState("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(ParseIbState("DOWN"), "DOWN");
}

TEST(PairLink, CorrectPairHasNoFinding) {
  auto lines = Judge("ok", "rocep1s0f0,roceP2p1s0f0", "enp1s0f0np0");
  EXPECT_TRUE(Warnings(lines).empty());
  ASSERT_EQ(lines.size(), 4u);  // one line per endpoint
  EXPECT_EQ(lines[2].text, "rocep1s0f0 port 1: ACTIVE, 100 Gb/sec (4X EDR) (Ethernet) via enp1s0f0np0");
  EXPECT_TRUE(Warnings(Judge("ok", "", "")).empty());  // unset: NCCL uses every device
}

TEST(PairLink, HalfNamedHcaIsFound) {
  auto w = Warnings(Judge("ok", "rocep1s0f0", ""));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("leaves out the active endpoint roceP2p1s0f0"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("98 -> 161 Gb/s"), std::string::npos);
}

TEST(PairLink, MtuMismatchIsFound) {
  auto w = Warnings(Judge("mtu", "rocep1s0f0,roceP2p1s0f0", ""));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("enP2p1s0f0np0 1500"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("enp1s0f0np0 9000"), std::string::npos) << w[0];
}

TEST(PairLink, DownLinkAndDownSocketInterface) {
  auto lines = Judge("down", "rocep1s0f0,roceP2p1s0f0", "enp1s0f0np0");
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(lines[i].level, PairLevel::kWarn) << lines[i].text;
  auto w = Warnings(lines);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("NCCL_SOCKET_IFNAME=enp1s0f0np0 names no interface that is up (enp1s0f0np0 down)"),
            std::string::npos)
      << w[0];
  auto missing = Warnings(Judge("ok", "", "eth9"));
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("(none exists)"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
