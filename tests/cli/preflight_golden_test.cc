// Golden text and JSON output of `sparkops preflight` over each fake Python environment.
// Build-dir paths and the build machine's architecture are replaced by placeholders so the
// files do not depend on where or on what the tests are built.
#include <gtest/gtest.h>

#include "host/elf.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::CheckGolden;
using testing::Fixture;
using testing::RunInProcess;

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
}

std::string Normalise(std::string s) {
  ReplaceAll(s, BuildArtifact(""), "<BUILD>/");
  ReplaceAll(s, std::string(SPARKOPS_TEST_SOURCE_DIR) + "/", "<SRC>/");
  // Only where the objects' architecture is named (fixture text such as the driver's version line
  // may name an architecture too).
  const std::string native = ElfMachineName(ElfMachineFromUname(UNAME_MACHINE_FOR_TEST));
  ReplaceAll(s, "ELF " + native, "ELF <NATIVE>");
  ReplaceAll(s, "built for " + native, "built for <NATIVE>");
  return s;
}

struct Case {
  const char* name;  ///< golden file stem
  std::string root;
  std::string site;  ///< "" = discover under --root
  int rc;
};

std::vector<Case> Cases() {
  return {
      {"preflight_cu13", Fixture("gb10"), BuildArtifact("site-packages/cu13"), 0},
      {"preflight_cu12", Fixture("gb10"), BuildArtifact("site-packages/cu12"), 0},
      {"preflight_mixed", Fixture("gb10"), BuildArtifact("site-packages/mixed"), 1},
      {"preflight_cpu", Fixture("gb10"), BuildArtifact("site-packages/cpu"), 1},
      {"preflight_egg_laptop", Fixture("laptop"), BuildArtifact("site-packages/egg"), 0},
      {"preflight_ngc", BuildArtifact("roots/ngc"), "", 0},
  };
}

TEST(PreflightGolden, TextAndJson) {
  for (const auto& c : Cases()) {
    std::vector<std::string> args{"--root", c.root, "preflight"};
    if (!c.site.empty()) args.insert(args.end(), {"--site-packages", c.site});
    auto text = RunInProcess(args, {});
    EXPECT_EQ(text.rc, c.rc) << c.name << "\n" << text.out << text.err;
    EXPECT_EQ(std::count(text.out.begin(), text.out.end(), '\n'), 11) << c.name;
    std::string diff = CheckGolden(std::string(c.name) + ".txt", Normalise(text.out));
    EXPECT_EQ(diff, "") << diff;
    args.insert(args.begin(), "--json");
    auto json = RunInProcess(args, {});
    EXPECT_EQ(json.rc, c.rc) << c.name;
    diff = CheckGolden(std::string(c.name) + ".json", Normalise(json.out));
    EXPECT_EQ(diff, "") << diff;
  }
}

// The whole preflight with the GPU read through the stub NVML: a GB10 (CC 12.1, memory
// NOT_SUPPORTED, no power limit) and a discrete card. The stub reads its mode from the environment
// of the process that loads it, so these run the real binary.
TEST(PreflightGolden, WithStubNvml) {
  struct GpuCase {
    const char* name;
    std::string root, site, mode;
    int rc;
  } cases[] = {
      {"preflight_gb10_nvml", Fixture("gb10"), BuildArtifact("site-packages/cu13"), "gb10", 0},
      {"preflight_discrete_nvml", Fixture("discrete"), BuildArtifact("site-packages/cu12"), "discrete", 0},
  };
  for (const auto& c : cases) {
    for (bool json : {false, true}) {
      std::vector<std::string> args{"--root",    c.root,
                                    "--nvml",    BuildArtifact("libnvidia-ml-stub.so"),
                                    "preflight", "--site-packages",
                                    c.site};
      if (json) args.push_back("--json");
      auto r = testing::RunBinary(args, {{"SPARKOPS_STUB_NVML_MODE", c.mode}});
      EXPECT_EQ(r.rc, c.rc) << c.name << "\n" << r.out << r.err;
      std::string diff = CheckGolden(std::string(c.name) + (json ? ".json" : ".txt"), Normalise(r.out));
      EXPECT_EQ(diff, "") << diff;
    }
  }
}

TEST(PreflightGolden, BadSitePackagesStillPrintsTenLinesAndExits2) {
  auto r = RunInProcess({"--root", Fixture("gb10"), "preflight", "--site-packages", "/nonexistent/sp"}, {});
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 11) << r.out;
  EXPECT_NE(r.out.find("G1 SKIP cannot read the Python environment: --site-packages /nonexistent/sp: not a directory"),
            std::string::npos)
      << r.out;
}

TEST(PreflightGolden, RealBinaryExitCodes) {
  auto r = testing::RunBinary({"--root", Fixture("gb10"), "preflight", "--only", "G1,G2", "--site-packages",
                               BuildArtifact("site-packages/mixed")});
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("G1 FAIL"), std::string::npos);
  EXPECT_NE(r.out.find("G2 FAIL"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
