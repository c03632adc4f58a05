// Architecture-dependent behaviour, asserted in both the native (x86-64) and the cross (aarch64,
// run under qemu) build: what the build says it is, what it produces, and that ELF machines of the
// other architecture are told apart by the reader G1 and G2 use (host/elf.h, ReadElf), checked
// against the bytes of the header read here directly (elf_fixture.h).
#include <gtest/gtest.h>

#include "host/elf.h"
#include "platform/elf_fixture.h"
#include "test_util.h"

namespace sparkops::testing {
namespace {

/// e_machine as ReadElf reports it, or -1.
int ReaderMachine(const std::string& path) {
  auto info = ReadElf(path);
  return info ? info->machine : -1;
}

TEST(Arch, BuildArchNamesTheCompilerTarget) {
#if defined(__aarch64__)
  EXPECT_EQ(BuildArch(), "aarch64");
  EXPECT_EQ(BuildElfMachine(), EM_AARCH64);
#elif defined(__x86_64__)
  EXPECT_EQ(BuildArch(), "x86_64");
  EXPECT_EQ(BuildElfMachine(), EM_X86_64);
#endif
  EXPECT_NE(ForeignElfMachine(), BuildElfMachine());
}

TEST(Arch, SparkopsBinaryIsABuildArchObject) {
  EXPECT_EQ(ReadElfMachine(SparkopsBin()), BuildElfMachine());
  EXPECT_EQ(ReaderMachine(SparkopsBin()), BuildElfMachine());
}

TEST(Arch, TestBuiltSharedObjectsAreBuildArchObjects) {
  std::string probe = BuildArtifact("platform/libarch_probe.so");
  EXPECT_EQ(ReadElfMachine(probe), BuildElfMachine()) << probe;
  EXPECT_EQ(ReaderMachine(probe), BuildElfMachine()) << probe;
}

TEST(Arch, ForeignObjectsAreToldApartInBothDirections) {
  TempDir dir;
  std::string native = WriteMinimalElf(dir, "native.so", BuildElfMachine());
  std::string foreign = WriteMinimalElf(dir, "foreign.so", ForeignElfMachine());
  EXPECT_EQ(ReaderMachine(native), BuildElfMachine());
  EXPECT_EQ(ReaderMachine(foreign), ForeignElfMachine());
  EXPECT_EQ(ReadElfMachine(foreign), ForeignElfMachine());
  std::string not_elf = dir.Write("readme.txt", "not an object\n");
  EXPECT_EQ(ReadElfMachine(not_elf), std::nullopt);
}

/// A dist-info package in `site` owning `objects` (relative paths, already written).
void WritePackage(const TempDir& dir, const std::string& name, const std::vector<std::string>& objects) {
  dir.Write("site/" + name + "-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n");
  std::string record;
  for (const auto& o : objects) record += o + ",,\n";
  dir.Write("site/" + name + "-1.0.dist-info/RECORD", record);
}

// nvidia-cutlass-dsl-libs 4.8.0 (a real wheel) ships lib/stubs/aarch64-unknown-linux-gnu/ copies of
// its runtime beside the host's: not native code for another CPU. A package whose only copy is
// foreign still fails G1, named alone.
TEST(Arch, CrossCompilationCopiesBesideTheHostsAreNotForeignCode) {
  TempDir dir;
  const std::string lib = "cutlass_dsl/lib/libcute_dsl_runtime.so",
                    stub = "cutlass_dsl/lib/stubs/aarch64-unknown-linux-gnu/libcute_dsl_runtime.so";
  WriteMinimalElf(dir, "site/" + lib, BuildElfMachine());
  WriteMinimalElf(dir, "site/" + stub, ForeignElfMachine());
  WritePackage(dir, "cutlass_dsl", {lib, stub});
  auto ok = RunInProcess({"--json", "preflight", "--only", "G1", "--site-packages", dir.path() + "/site"});
  EXPECT_EQ(ok.out.find("native code for another CPU"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("1 object for another CPU beside a same-named one"), std::string::npos) << ok.out;
  WriteMinimalElf(dir, "site/wrongarch/_C.so", ForeignElfMachine());
  WritePackage(dir, "wrongarch", {"wrongarch/_C.so"});
  auto bad = RunInProcess({"preflight", "--only", "G1", "--site-packages", dir.path() + "/site"});
  EXPECT_EQ(bad.rc, 1) << bad.out;
  EXPECT_NE(bad.out.find("G1 FAIL native code for another CPU: wrongarch 1.0: 1 object for"), std::string::npos)
      << bad.out;
  EXPECT_EQ(bad.out.find("cutlass_dsl 1.0:"), std::string::npos) << bad.out;
}

TEST(Arch, VersionReportsBuildArchInProcessAndAsSubprocess) {
  auto in = RunInProcess({"--version"});
  EXPECT_EQ(in.rc, 0);
  EXPECT_NE(in.out.find(", " + BuildArch() + ", "), std::string::npos) << in.out;
  auto sub = RunBinary({"--version"});  // through the emulator in a cross build
  EXPECT_EQ(sub.rc, 0) << sub.err;
  EXPECT_EQ(sub.out, in.out);
}

TEST(Arch, EmulatorIsUsedExactlyWhenCrossBuilding) {
  // The emulator comes from the toolchain file; a native build runs target programs directly.
  auto argv = TargetArgv({"prog", "arg"});
  ASSERT_GE(argv.size(), 2u);
  EXPECT_EQ(argv[argv.size() - 2], "prog");
  EXPECT_EQ(argv.size() - 2, TargetEmulator().size());
#if defined(__x86_64__)
  EXPECT_TRUE(TargetEmulator().empty()) << "x86-64 builds here are native";
#endif
}

}  // namespace
}  // namespace sparkops::testing
