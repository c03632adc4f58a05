// ELF reading on objects really built by tests/pyenv.cmake, damaged files, and the cubin lists.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "host/elf.h"
#include "host/ldso.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::TempDir;

std::string Site(const std::string& rel) { return BuildArtifact("site-packages/" + rel); }

TEST(Elf, ReadsNeededRpathAndSoname) {
  auto torch = ReadElf(Site("cu13/torch/lib/libtorch_cuda.so"));
  ASSERT_TRUE(torch) << torch.error().message;
  EXPECT_EQ(torch->elf_class, 64);
  EXPECT_EQ(torch->machine, ElfMachineFromUname(UNAME_MACHINE_FOR_TEST));
  ASSERT_FALSE(torch->needed.empty());
  // Order-agnostic: a sanitizer build puts libasan first in every object's NEEDED list.
  EXPECT_NE(std::find(torch->needed.begin(), torch->needed.end(), "libcudart.so.13"), torch->needed.end());
  ASSERT_TRUE(torch->rpath);
  EXPECT_EQ(*torch->rpath, "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN");
  EXPECT_FALSE(torch->runpath);
  EXPECT_FALSE(torch->has_fatbin);

  auto cudart = ReadElf(Site("cu12/nvidia/cuda_runtime/lib/libcudart.so.12"));
  ASSERT_TRUE(cudart);
  EXPECT_EQ(cudart->soname, "libcudart.so.12");

  auto fa = ReadElf(Site("mixed/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so"));
  ASSERT_TRUE(fa);
  EXPECT_NE(std::find(fa->needed.begin(), fa->needed.end(), "libcudart.so.12"), fa->needed.end());
  EXPECT_FALSE(fa->rpath);
}

TEST(Elf, DamagedFilesAreErrorsNamingTheFile) {
  TempDir dir;
  std::string text = dir.Write("notelf.so", "this is not an ELF file, just text long enough for a header..........");
  auto r = ReadElf(text);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, Error::Kind::kInput);
  EXPECT_NE(r.error().message.find(text), std::string::npos);

  // A real object cut short: the section headers are past the end of the file.
  std::string whole = testing::ReadFileOrDie(Site("cu13/torch/lib/libtorch_cuda.so"));
  std::string cut = dir.Write("cut.so", whole.substr(0, 200));
  auto c = ReadElf(cut);
  EXPECT_FALSE(c && !c->needed.empty());  // never a crash; never the full NEEDED list
  if (!c) {
    EXPECT_NE(c.error().message.find("cut.so"), std::string::npos);
  }

  std::string tiny = dir.Write("tiny.so", "\177ELF");
  EXPECT_FALSE(ReadElf(tiny));
  EXPECT_EQ(ReadElf(dir.path() + "/missing.so").error().kind, Error::Kind::kNotFound);

  ElfLimits small;
  small.max_file_bytes = 64;
  auto big = ReadElf(Site("cu13/torch/lib/libtorch_cuda.so"), small);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("size limit"), std::string::npos);
}

/// A bare 64-bit ELF header (no sections) for `machine`: enough for ReadElf to tell the arch.
std::string HeaderOnlyElf(uint16_t machine) {
  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
  h.e_machine = machine;
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof(Elf64_Ehdr);
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

TEST(Elf, ForeignMachines) {
  TempDir dir;
  auto arm = ReadElf(dir.Write("arm.so", HeaderOnlyElf(EM_AARCH64)));
  ASSERT_TRUE(arm) << arm.error().message;
  EXPECT_EQ(ElfMachineName(arm->machine), "aarch64");
  EXPECT_TRUE(arm->needed.empty());
  auto x86 = ReadElf(dir.Write("x86.so", HeaderOnlyElf(EM_X86_64)));
  ASSERT_TRUE(x86);
  EXPECT_EQ(ElfMachineName(x86->machine), "x86-64");
  EXPECT_EQ(ElfMachineFromUname("aarch64"), EM_AARCH64);
  EXPECT_EQ(ElfMachineFromUname("x86_64"), EM_X86_64);
  EXPECT_EQ(ElfMachineFromUname("sparc"), 0);
}

TEST(Cuobjdump, ParsesListOutput) {
  const char* text =
      "ELF file    1: qrow32.cu.1.sm_121a.cubin\n"
      "ELF file    2: flash_fwd.2.sm_120.cubin\n"
      "ELF file    3: flash_fwd.3.sm_120.cubin\n"
      "PTX file    1: x.4.compute_120.ptx\n"
      "cuobjdump info    : File 'y' does not contain device code\n";
  auto a = ParseCuobjdumpList(text);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].name, "sm_121a");
  EXPECT_FALSE(a[0].ptx);
  EXPECT_EQ(a[1].name, "sm_120");
  EXPECT_EQ(a[2].name, "compute_120");
  EXPECT_TRUE(a[2].ptx);
  EXPECT_TRUE(ParseCuobjdumpList("").empty());
}

// The list-line matcher is hand-written (it was a std::regex, the fatbin fuzz target's main cost);
// these pin the regex's meaning at its edges.
TEST(Cuobjdump, ListLineEdgesKeepTheRegexMeaning) {
  auto names = [](std::string_view text) {
    std::string out;
    for (const auto& a : ParseCuobjdumpList(text)) out += (a.ptx ? "P:" : "E:") + a.name + " ";
    return out;
  };
  EXPECT_EQ(names(" \tPTX file\v7:x.sm_8.y.compute_80f.ptx \r"), "P:compute_80f ");  // the last arch part
  EXPECT_EQ(names("ELF file 1:.sm_9.cubin"), "E:sm_9 ");
  EXPECT_EQ(names("ELF file 1: a\r.sm_9.cubin"), "");  // '.*' does not cross '\r'
  EXPECT_EQ(names("ELF file 1: a.sm_9a.cubinx"), "");
  EXPECT_EQ(names("ELF file 1: a.sm_a.cubin"), "");
  EXPECT_EQ(names("ELF file 1: a.sm_9af.cubin"), "");
  EXPECT_EQ(names("ELF file 1: asm_9.cubin"), "");
  EXPECT_EQ(names("ELF file1: a.sm_9.cubin"), "");
  EXPECT_EQ(names("ELF file 1 : a.sm_9.cubin"), "");
  EXPECT_EQ(names("ELF file x: a.sm_9.cubin"), "");
  EXPECT_EQ(names("elf file 1: a.sm_9.cubin"), "");
  EXPECT_EQ(names("ELF file 1: a.sm_9.ptx\nPTX file 2: b.sm_9.cubin\nELF file 3: c.sm_9.cubin"), "E:sm_9 P:sm_9 ");
  EXPECT_EQ(names("ELF file 1: " + std::string(5000, 'a') + ".sm_9.cubin"), "");  // longer than a listing line
}

std::string Names(const std::vector<CudaArch>& v) {
  std::string out;
  for (const auto& a : v) out += (out.empty() ? "" : " ") + a.name + (a.compressed ? "(z)" : "");
  return out;
}

TEST(Fatbin, ScansTheEmbeddedSection) {
  auto sec = ReadFatbinSection(BuildArtifact("pyenv-libs/libext_fatbin_121a.so"));
  ASSERT_TRUE(sec) << sec.error().message;
  ASSERT_FALSE(sec->empty());
  auto a = ScanFatbin(*sec);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].name, "sm_121a");  // arch-specific flag 0x100000
  EXPECT_FALSE(a[0].ptx);
  EXPECT_EQ(a[0].sm, 121);
  EXPECT_EQ(a[0].suffix, 'a');
  EXPECT_EQ(a[1].name, "compute_121a");  // from the header: the compressed PTX text is never read
  EXPECT_TRUE(a[1].ptx);
  EXPECT_TRUE(a[1].compressed);
  auto old = ScanFatbin(*ReadFatbinSection(BuildArtifact("pyenv-libs/libext_fatbin_120.so")));
  EXPECT_EQ(Names(old), "sm_120 compute_120");
  // The layouts read from real wheels (vLLM 0.33.0: family cubins + compressed compute_80 PTX).
  auto fam = ScanFatbinFile(BuildArtifact("pyenv-libs/libext_fatbin_120f.so"));
  ASSERT_TRUE(fam);
  EXPECT_EQ(Names(*fam), "sm_120f(z) compute_80(z)");
  EXPECT_EQ(Names(*ScanFatbinFile(BuildArtifact("pyenv-libs/libext_fatbin_90a.so"))), "sm_90a(z) sm_100f(z)");
  EXPECT_EQ(Names(*ScanFatbinFile(BuildArtifact("pyenv-libs/libext_fatbin_90.so"))), "sm_90 compute_90(z)");
  auto info = ReadElf(BuildArtifact("pyenv-libs/libext_fatbin_120.so"));
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->has_fatbin);
  EXPECT_EQ(*ReadFatbinSection(Site("cu13/torch/lib/libtorch_cuda.so")), "");
  auto in_place = ScanFatbinFile(BuildArtifact("pyenv-libs/libext_fatbin_121a.so"));
  ASSERT_TRUE(in_place);
  EXPECT_EQ(in_place->size(), 2u);
  EXPECT_TRUE(ScanFatbinFile(Site("cu13/torch/lib/libtorch_cuda.so"))->empty());
  EXPECT_FALSE(ScanFatbinFile(BuildArtifact("pyenv-libs/does-not-exist.so")));
}

TEST(CudaArch, NamesParse) {
  auto a = MakeCudaArch("sm_120f", false);
  EXPECT_EQ(a.sm, 120);
  EXPECT_EQ(a.suffix, 'f');
  EXPECT_EQ(MakeCudaArch("compute_90a", true).sm, 90);
  EXPECT_EQ(MakeCudaArch("compute_90a", true).suffix, 'a');
  EXPECT_EQ(MakeCudaArch("sm_89", false).suffix, 0);
  EXPECT_EQ(MakeCudaArch("sm_", false).sm, 0);
  EXPECT_EQ(MakeCudaArch("sm_12x", false).sm, 0);
  EXPECT_EQ(MakeCudaArch("sm_99999", false).sm, 0);
  EXPECT_EQ(MakeCudaArch("lto_90", false).sm, 0);
  EXPECT_EQ(RunsOn(MakeCudaArch("sm_", false), 12, 1), CudaRun::kNo);
}

// CUDA's per-entry compatibility rule on CC 12.1 (GB10), 12.0 (RTX 50), 10.0 (B200), 9.0 (H100),
// 8.9 (L40S). N native cubin, J PTX JIT, - does not run.
TEST(CudaArch, CompatibilityTable) {
  struct Row {
    const char* name;
    bool ptx;
    const char* expect;  // for 12.1, 12.0, 10.0, 9.0, 8.9
  };
  const Row rows[] = {
      {"sm_120", false, "NN---"},      {"sm_121", false, "N----"},      {"sm_100", false, "--N--"},
      {"sm_90", false, "---N-"},       {"sm_89", false, "----N"},       {"sm_86", false, "----N"},
      {"sm_80", false, "----N"},       {"sm_121a", false, "N----"},     {"sm_120a", false, "-N---"},
      {"sm_100a", false, "--N--"},     {"sm_90a", false, "---N-"},      {"sm_120f", false, "NN---"},
      {"sm_121f", false, "N----"},     {"sm_100f", false, "--N--"},     {"sm_103f", false, "-----"},
      {"compute_80", true, "JJJJJ"},   {"compute_89", true, "JJJJJ"},   {"compute_90", true, "JJJJ-"},
      {"compute_100", true, "JJJ--"},  {"compute_120", true, "JJ---"},  {"compute_121", true, "J----"},
      {"compute_120a", true, "-J---"}, {"compute_121a", true, "J----"}, {"compute_90a", true, "---J-"},
      {"compute_100a", true, "--J--"}, {"compute_120f", true, "JJ---"}, {"compute_121f", true, "J----"},
      {"compute_100f", true, "--J--"},
  };
  const std::pair<int, int> ccs[] = {{12, 1}, {12, 0}, {10, 0}, {9, 0}, {8, 9}};
  for (const auto& row : rows) {
    std::string got;
    for (auto [major, minor] : ccs) {
      CudaRun r = RunsOn(MakeCudaArch(row.name, row.ptx), major, minor);
      got += r == CudaRun::kNative ? 'N' : r == CudaRun::kJit ? 'J' : '-';
    }
    EXPECT_EQ(got, row.expect) << row.name;
  }
  EXPECT_TRUE(IsNvfp4Target(MakeCudaArch("sm_120f", false)));
  EXPECT_TRUE(IsNvfp4Target(MakeCudaArch("compute_121a", true)));
  EXPECT_TRUE(IsNvfp4Target(MakeCudaArch("sm_100a", false)));
  EXPECT_FALSE(IsNvfp4Target(MakeCudaArch("sm_120", false)));
  EXPECT_FALSE(IsNvfp4Target(MakeCudaArch("sm_90a", false)));
}

TEST(Fatbin, DamagedDataStopsWithoutReadingPastTheEnd) {
  std::string sec = *ReadFatbinSection(BuildArtifact("pyenv-libs/libext_fatbin_121a.so"));
  for (size_t cut = 0; cut < sec.size(); cut += 7) {
    std::string part = sec.substr(0, cut);  // every truncation, incl. mid-header
    auto a = ScanFatbin(part);
    EXPECT_LE(a.size(), 2u);
  }
  std::string huge = sec;
  uint64_t lie = ~0ull;
  std::memcpy(huge.data() + 8, &lie, 8);  // fat_size far past the end
  EXPECT_TRUE(ScanFatbin(huge).empty());
  std::string junk(4096, '\xBA');
  EXPECT_TRUE(ScanFatbin(junk).empty());
}

TEST(Ldso, SearchOrderAndOrigin) {
  EXPECT_EQ(ExpandSearchPath("$ORIGIN/../lib:${ORIGIN}:/opt/x::", "/s/torch/lib"),
            (std::vector<std::string>{"/s/torch/lib/../lib", "/s/torch/lib", "/opt/x"}));
  std::string so = Site("cu12/torch/lib/libtorch_cuda.so");
  ElfInfo obj;
  obj.needed = {"libcudart.so.12"};
  obj.rpath = "$ORIGIN/../../nvidia/cuda_runtime/lib";
  LdsoEnv env;
  env.ld_library_path = {Site("cu12/nvidia/cuda_runtime/lib")};
  auto r = ResolveNeeded("libcudart.so.12", obj, so, env);
  ASSERT_TRUE(r.path);
  EXPECT_EQ(r.via, "RPATH");  // DT_RPATH is searched before LD_LIBRARY_PATH
  obj.runpath = "/nowhere";   // with a RUNPATH, the RPATH is ignored
  r = ResolveNeeded("libcudart.so.12", obj, so, env);
  EXPECT_EQ(r.via, "LD_LIBRARY_PATH");
  env.ld_library_path.clear();
  r = ResolveNeeded("libcudart.so.12", obj, so, env);
  EXPECT_FALSE(r.path);
  env.system_dirs = {Site("cu12/nvidia/cuda_runtime/lib")};
  EXPECT_EQ(ResolveNeeded("libcudart.so.12", obj, so, env).via, "system dirs");
}

TEST(Ldso, CudaSonames) {
  EXPECT_EQ(CudaMajorOfSoname("libcudart.so.12"), 12);
  EXPECT_EQ(CudaMajorOfSoname("libcudart.so.11.0"), 11);
  EXPECT_EQ(CudaMajorOfSoname("libcublasLt.so.13"), 13);
  EXPECT_EQ(CudaMajorOfSoname("libnvJitLink.so.13"), 13);
  EXPECT_EQ(CudaMajorOfSoname("libcufft.so.11"), std::nullopt);  // cuFFT numbers its own sonames
  EXPECT_EQ(CudaMajorOfSoname("libcudnn.so.9"), std::nullopt);
  EXPECT_EQ(CudaMajorOfSoname("libc.so.6"), std::nullopt);
  EXPECT_TRUE(IsCudaLibrary("libcudnn_ops.so.9"));
  EXPECT_TRUE(IsCudaLibrary("libcublasLt.so.12"));
  EXPECT_FALSE(IsCudaLibrary("libc.so.6"));
  EXPECT_FALSE(IsCudaLibrary("libtorch_cuda.so"));
}

}  // namespace
}  // namespace sparkops
