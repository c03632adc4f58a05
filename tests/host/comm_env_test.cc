// Issue 18, G10: NCCL/UCX variables from the shell, NCCL's and DeepSpeed's files and launch scripts,
// each with where it was set; `preflight --pair` on the pair fixtures.
#include <sys/stat.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "host/comm_env.h"
#include "host/rdma_link.h"
#include "test_util.h"
#include "workloads/parallelism.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::RunInProcess;

TEST(EnvFile, KeyValueLinesAsDeepSpeedAndNcclReadThem) {
  struct Case {
    const char* text;
    const char* name;
    const char* value;
    std::vector<int> bad;
  };
  const Case cases[] = {
      {"NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0\n", "NCCL_IB_HCA", "rocep1s0f0,roceP2p1s0f0", {}},
      {"  UCX_NET_DEVICES = mlx5_0:1 \r\n", "UCX_NET_DEVICES", "mlx5_0:1", {}},
      {"# comment\n\nNCCL_SOCKET_IFNAME=\"enp1s0f0np0\"\n", "NCCL_SOCKET_IFNAME", "enp1s0f0np0", {}},
      {"NCCL_IB_HCA==rocep1s0f0\n", "NCCL_IB_HCA", "=rocep1s0f0", {}},  // NCCL's '=' exact prefix kept
      {"PYTHONPATH=/x\nNCCL_DEBUG=INFO\n", "NCCL_DEBUG", "INFO", {}},  // only NCCL_/UCX_ kept
      {"export NCCL_IB_HCA=a\nNCCL_IB_HCA\nGLOO_SOCKET_IFNAME=eth0\n", "GLOO_SOCKET_IFNAME", "eth0", {1, 2}},
      {"NCCL_IB_HCA=a\x01\x02\nNCCL_NET=IB\n", "NCCL_NET", "IB", {1}},  // binary value: a bad line
  };
  for (const auto& c : cases) {
    EnvFile f = ParseEnvFile(c.text, "f");
    ASSERT_EQ(f.settings.size(), 1u) << c.text;
    EXPECT_EQ(f.settings[0].name, c.name);
    EXPECT_EQ(f.settings[0].value, c.value);
    EXPECT_EQ(f.bad_lines, c.bad) << c.text;
  }
  EXPECT_EQ(ParseEnvFile("a\nNCCL_IB_HCA=x\n", "/h/.deepspeed_env").settings[0].source, "/h/.deepspeed_env line 2");
  std::string huge = "NCCL_IB_HCA=" + std::string(100000, 'x') + "\n";
  EXPECT_TRUE(ParseEnvFile(huge, "f").settings.empty());
  EXPECT_EQ(ParseEnvFile(huge, "f").bad_lines, std::vector<int>{1});
  EXPECT_TRUE(ParseEnvFile(std::string("\0\xff\0=\n", 5), "f").settings.empty());
}

TEST(EnvFile, FilesReadUnderRootWithHostileOnesNamed) {
  testing::TempDir d;
  d.Write("home/u/.deepspeed_env", "NCCL_IB_HCA=rocep1s0f0\nbroken\n");
  d.Write("etc/nccl.conf", "NCCL_SOCKET_IFNAME=enp1s0f0np0\n");
  d.Write("work/job/.deepspeed_env", "UCX_NET_DEVICES=rocep1s0f0:1\n");
  ASSERT_EQ(::mkfifo((d.path() + "/home/u/.nccl.conf").c_str(), 0600), 0);  // never opened for a blocking read
  HostView host{{}, HostFs(d.path()), {{"HOME", "/home/u"}}};
  std::vector<std::string> notes;
  auto s = ReadCommEnvFiles(host, "/work/job", notes);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].source, "/etc/nccl.conf line 1");
  EXPECT_EQ(s[1].source, "/home/u/.deepspeed_env line 1");
  EXPECT_EQ(s[2].source, "/work/job/.deepspeed_env line 1");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("/home/u/.nccl.conf not read"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("/home/u/.deepspeed_env: 1 line not KEY=VALUE (line 2): DeepSpeed's launcher stops"),
            std::string::npos)
      << notes[1];

  d.Write("big/.deepspeed_env", std::string(1 << 20, 'A'));  // over the 64 KiB bound: named, not read
  HostView other{{}, HostFs(d.path()), {{"HOME", "/big"}, {"NCCL_CONF_FILE", "/etc/nccl.conf"}}};
  notes.clear();
  s = ReadCommEnvFiles(other, "", notes);
  ASSERT_EQ(s.size(), 1u);  // NCCL_CONF_FILE replaces ~/.nccl.conf; /etc/nccl.conf once
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("/big/.deepspeed_env not read"), std::string::npos) << notes[0];
}

TEST(EnvFile, LaunchScriptExportsAndPrefixes) {
  auto ls = ParseLaunchScript(
      "export NCCL_IB_HCA=rocep1s0f0\nNCCL_SOCKET_IFNAME=enp1s0f0np0 UCX_X=1 torchrun --nnodes 2 t.py\n"
      "torchrun --nnodes 2 u.py\n",
      "run.sh");
  ASSERT_EQ(ls.size(), 2u);
  ASSERT_EQ(ls[0].comm_env.size(), 3u);
  EXPECT_EQ(ls[0].comm_env[0].name, "NCCL_IB_HCA");
  EXPECT_EQ(ls[0].comm_env[0].source, "run.sh line 1");
  EXPECT_EQ(ls[0].comm_env[1].value, "enp1s0f0np0");
  EXPECT_EQ(ls[0].comm_env[1].source, "run.sh line 2");
  ASSERT_EQ(ls[1].comm_env.size(), 1u);  // a prefix applies to its own command only
  EXPECT_TRUE(ParseParallelYaml("num_machines: 2\n", "a.yaml")->comm_env.empty());
}

TEST(PairLink, UcxNetDevices) {
  HostFs fs(Fixture("pair/ok"));
  auto ports = ReadRdmaPorts(fs);
  auto ifs = ReadNetIfs(fs);
  struct Case {
    const char* list;
    bool warn;
  };
  const Case cases[] = {{"", false},
                        {"all", false},
                        {"rocep1s0f0:1", false},
                        {"rocep1s0f0", false},
                        {"enp1s0f0np0", false},
                        {"rocep1s0f1:1", true},
                        {"rocep1s0f0:2", true},
                        {"mlx5_0:1,eth9", true},
                        {"enp1s0f1np1", true}};
  for (const auto& c : cases) EXPECT_EQ(JudgeUcxDevices(ports, ifs, c.list).has_value(), c.warn) << c.list;
}

std::vector<std::string> G10(const std::string& root, std::vector<std::string> extra,
                             const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> args = {"--root", root,        "--nvml", "none", "--nvidia-smi",
                                   "none",   "preflight", "--only", "G10"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = RunInProcess(args, env);
  return {std::to_string(r.rc), r.out, r.err};
}

TEST(PreflightPair, FlagReportsTheLinkWithNothingElseFound) {
  auto ok = G10(Fixture("pair/ok"), {"--pair"});
  EXPECT_EQ(ok[0], "0") << ok[2];
  EXPECT_EQ(ok[1],
            "G10 PASS pair link: 2 of 4 RDMA endpoint ports active (roceP2p1s0f0 100 Gb/sec (4X EDR), "
            "rocep1s0f0 100 Gb/sec (4X EDR)), no finding\n");
  auto without = G10(Fixture("pair/ok"), {});  // today's behaviour without the flag
  EXPECT_EQ(without[1].rfind("G10 SKIP nothing to read", 0), 0u) << without[1];

  auto down = G10(Fixture("pair/down"), {"--pair"});
  EXPECT_EQ(down[0], "0");
  EXPECT_EQ(down[1].rfind("G10 WARN pair link: roceP2p1s0f0 port 1: DOWN", 0), 0u) << down[1];
  EXPECT_EQ(G10(Fixture("pair/down"), {})[1].rfind("G10 SKIP", 0), 0u);

  auto mtu = G10(Fixture("pair/mtu"), {"--pair"});
  EXPECT_EQ(mtu[1].rfind("G10 WARN pair link: MTU mismatch between the link's interfaces", 0), 0u) << mtu[1];

  auto half = G10(Fixture("pair/ok"), {"--pair"}, {{"NCCL_IB_HCA", "rocep1s0f0"}});
  EXPECT_NE(half[1].find("G10 WARN pair link: NCCL_IB_HCA=rocep1s0f0 leaves out the active endpoint roceP2p1s0f0"),
            std::string::npos)
      << half[1];
  EXPECT_NE(half[1].find("; set in: shell\n"), std::string::npos) << half[1];

  auto none = G10(Fixture("gb10"), {"--pair"});
  EXPECT_NE(none[1].find("G10 SKIP pair link: no RDMA device under /sys/class/infiniband"), std::string::npos)
      << none[1];
}

TEST(PreflightPair, FileAndShellValuesDifferBothSaid) {
  testing::TempDir d;
  std::filesystem::copy(Fixture("pair/ok"), d.path(), std::filesystem::copy_options::recursive);
  d.Write("home/u/.deepspeed_env", "NCCL_IB_HCA=rocep1s0f0\n");
  auto r = G10(d.path(), {"--json"}, {{"HOME", "/home/u"}, {"NCCL_IB_HCA", "rocep1s0f0,roceP2p1s0f0"}});
  EXPECT_NE(r[1].find("pair link: NCCL_IB_HCA differs: NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0 (shell) vs "
                      "NCCL_IB_HCA=rocep1s0f0 (/home/u/.deepspeed_env line 1)"),
            std::string::npos)
      << r[1];
  EXPECT_NE(r[1].find("\"status\": \"WARN\""), std::string::npos) << r[1];
  EXPECT_NE(r[1].find("leaves out the active endpoint roceP2p1s0f0: NCCL uses only the devices it names, and each "
                      "QSFP port is two PCIe x4 endpoints, so naming one of the two halves the bandwidth (98 -> 161 "
                      "Gb/s measured after naming both); set in: /home/u/.deepspeed_env line 1"),
            std::string::npos)
      << r[1];

  // The launch script given with --config is the other place: its value is checked and named.
  std::string script = d.Write("run.sh", "export NCCL_SOCKET_IFNAME=enp1s0f1np1\ntorchrun --nnodes 2 train.py\n");
  auto s = G10(d.path(), {"--config", script}, {{"HOME", "/nowhere"}});
  EXPECT_NE(s[1].find("G10 WARN pair link: NCCL_SOCKET_IFNAME=enp1s0f1np1 names no interface that is up "
                      "(enp1s0f1np1 down): NCCL's bootstrap cannot connect; set in: " +
                      script + " line 1"),
            std::string::npos)
      << s[1];
}

TEST(PreflightPair, RunningLaunchersEnvironmentIsAPlace) {
  testing::TempDir d;
  std::filesystem::copy(Fixture("workloads/torchrun"), d.path(), std::filesystem::copy_options::recursive);
  std::filesystem::copy(Fixture("pair/ok"), d.path(), std::filesystem::copy_options::recursive);
  std::string environ = testing::ReadFileOrDie(d.path() + "/proc/4101/environ");
  d.Write("proc/4101/environ", environ + std::string("NCCL_IB_HCA=rocep1s0f0") + '\0');
  auto r = G10(d.path(), {"--json"}, {{"HOME", "/nowhere"}});
  EXPECT_NE(r[1].find("pair link: NCCL_IB_HCA=rocep1s0f0 (pid 4101 environment)"), std::string::npos) << r[1];
  EXPECT_NE(r[1].find("leaves out the active endpoint roceP2p1s0f0"), std::string::npos) << r[1];
}

}  // namespace
}  // namespace sparkops
