#include "host/proctable.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;

TEST(ParseCmdline, NulSeparatedWithTrailingNul) {
  std::string data("vllm\0serve\0Qwen/Qwen3-8B\0", 24);
  EXPECT_EQ(ParseCmdline(data), (std::vector<std::string>{"vllm", "serve", "Qwen/Qwen3-8B"}));
}

TEST(ParseCmdline, EmptyForKernelThreadAndSetproctitleIsOneWord) {
  EXPECT_TRUE(ParseCmdline("").empty());
  EXPECT_EQ(ParseCmdline("VLLM::EngineCore"), std::vector<std::string>{"VLLM::EngineCore"});
  // An empty argument in the middle is kept.
  EXPECT_EQ(ParseCmdline(std::string("a\0\0b\0", 5)), (std::vector<std::string>{"a", "", "b"}));
}

TEST(ParseEnviron, KeyValueLastWinsAndSkipsJunk) {
  std::string data("A=1\0NOEQUALS\0=x\0B=x=y\0A=2\0", 26);
  auto env = ParseEnviron(data);
  EXPECT_EQ(env.size(), 2u);
  EXPECT_EQ(env["A"], "2");
  EXPECT_EQ(env["B"], "x=y");
}

TEST(ParseStatus, RealSample) {
  const char* text =
      "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4130\nNgid:\t0\nPid:\t4130\nPPid:\t4101\n"
      "TracerPid:\t0\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nFDSize:\t256\n"
      "VmPeak:\t 9437184 kB\nVmRSS:\t 31457280 kB\nRssAnon:\t28311552 kB\nThreads:\t4\n";
  auto st = ParseStatus(text);
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(st->name, "python3");
  EXPECT_EQ(st->ppid, 4101u);
  EXPECT_EQ(st->uid, 1000u);
  EXPECT_EQ(st->rss_bytes, 31457280ull * 1024);
}

TEST(ParseStatus, KernelThreadHasNoRssAndErrorsNameTheField) {
  auto k = ParseStatus("Name:\tkthreadd\nPPid:\t0\nUid:\t0\t0\t0\t0\n");
  ASSERT_TRUE(k);
  EXPECT_FALSE(k->rss_bytes.has_value());
  auto bad = ParseStatus("Name:\tx\nPPid:\tnope\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("PPid"), std::string::npos);
  auto rss = ParseStatus("Name:\tx\nVmRSS:\t12 MB\n");
  ASSERT_FALSE(rss);
  EXPECT_NE(rss.error().message.find("VmRSS"), std::string::npos);
  EXPECT_FALSE(ParseStatus("PPid:\t1\n"));
}

TEST(ParseStat, CommWithSpacesAndParens) {
  std::string text =
      "4130 (my (odd) name) S 4101 4130 950 0 -1 4194560 1000 0 0 0 100 20 0 0 20 0 4 0 104130 "
      "9663676416 7864320 0 0 0";
  auto st = ParseStat(text);
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(st->pid, 4130u);
  EXPECT_EQ(st->comm, "my (odd) name");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 4101u);
  EXPECT_EQ(st->session, 950u);
  EXPECT_EQ(st->start_ticks, 104130u);
  EXPECT_FALSE(ParseStat("12 (x) S 1 2"));
  EXPECT_FALSE(ParseStat("no parens at all"));
}

TEST(ReadProcessTable, SkipsVanishedAndMalformedKeepsUnreadableEnviron) {
  HostFs fs(Fixture("workloads/edge"));
  auto t = ReadProcessTable(fs);
  ASSERT_TRUE(t);
  std::vector<uint32_t> pids;
  for (const auto& p : *t) pids.push_back(p.pid);
  // 5002: status missing (vanished mid-scan); 5003: malformed status; 5005: empty dir.
  EXPECT_EQ(pids, (std::vector<uint32_t>{1, 2, 950, 5001, 5004}));
  const auto& vllm = (*t)[3];
  EXPECT_FALSE(vllm.env_readable);
  EXPECT_TRUE(vllm.env.empty());
  EXPECT_EQ(vllm.argv.size(), 5u);
  const auto& kworker = (*t)[4];
  EXPECT_TRUE(kworker.argv.empty());
  EXPECT_EQ(kworker.ppid, 2u);
}

TEST(ReadProcessTable, MissingProcIsNotFound) {
  testing::TempDir d;
  auto t = ReadProcessTable(HostFs(d.path()));
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().kind, Error::Kind::kNotFound);
}

TEST(ReadProcess, NvidiaFdAndScriptHead) {
  HostFs fs(Fixture("workloads/python-gpu"));
  auto gpu = ReadProcess(fs, 4801);
  ASSERT_TRUE(gpu);
  EXPECT_TRUE(gpu->nvidia_fd);
  auto web = ReadProcess(fs, 4850);
  ASSERT_TRUE(web);
  EXPECT_FALSE(web->nvidia_fd);
  EXPECT_FALSE(ReadProcess(fs, 99999));

  HostFs us(Fixture("workloads/unsloth"));
  auto p = ReadProcess(us, 4701);
  ASSERT_TRUE(p);
  EXPECT_NE(ReadScriptHead(us, *p).find("from unsloth import"), std::string::npos);
  EXPECT_EQ(ReadScriptHead(us, *web), "");
}

TEST(IsPythonInterpreter, Names) {
  EXPECT_TRUE(IsPythonInterpreter("/usr/bin/python3.12"));
  EXPECT_TRUE(IsPythonInterpreter("python"));
  EXPECT_FALSE(IsPythonInterpreter("/usr/local/bin/ollama"));
  EXPECT_EQ(BaseName("/a/b/c"), "c");
}

}  // namespace
}  // namespace sparkops
