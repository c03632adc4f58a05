// Opt-in check against NVIDIA's own reader: with SPARKOPS_CUOBJDUMP=/path/to/cuobjdump (CUDA toolkit,
// or the `nvidia-cuda-cuobjdump` wheel's nvidia/cu13/bin/cuobjdump) and SPARKOPS_FATBIN_DIR=DIR (e.g.
// a venv's site-packages holding vLLM, xformers, bitsandbytes), every shared object under DIR with a
// .nv_fatbin must give ScanFatbinFile the same cubin SMs and PTX targets as `cuobjdump --list-elf` /
// `--list-ptx`. Skipped without both: tests never need CUDA tools. cuobjdump prints family (f)
// targets without their suffix, so an `f` is compared as its SM number; an `a` must match.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "base/strings.h"
#include "host/command.h"
#include "host/elf.h"

namespace sparkops {
namespace {

/// "sm_120" / "compute_90a" with a family suffix dropped (cuobjdump does not print it).
std::set<std::string> Comparable(const std::vector<CudaArch>& arches) {
  std::set<std::string> s;
  for (const CudaArch& a : arches) {
    std::string n = (a.ptx ? "compute_" : "sm_") + std::to_string(a.sm);
    if (a.suffix == 'a') n += 'a';
    s.insert(n);
  }
  return s;
}

std::string Joined(const std::set<std::string>& s) {
  std::string o;
  for (const auto& x : s) o += (o.empty() ? "" : " ") + x;
  return o;
}

TEST(FatbinCuobjdump, SameTargetsAsCuobjdumpOnRealWheels) {
  const char* cu = std::getenv("SPARKOPS_CUOBJDUMP");
  const char* dir = std::getenv("SPARKOPS_FATBIN_DIR");
  if (!cu || !dir) GTEST_SKIP() << "opt-in: set SPARKOPS_CUOBJDUMP and SPARKOPS_FATBIN_DIR (docs/checks.md, G7)";
  int files = 0, unreadable = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::string path = it->path().string(), name = it->path().filename().string();
    if (!it->is_regular_file(ec) || !(name.ends_with(".so") || name.find(".so.") != std::string::npos)) continue;
    auto ours = ScanFatbinFile(path);
    ASSERT_TRUE(ours) << path << ": " << ours.error().message;
    if (ours->empty()) continue;
    CommandOptions o;
    o.timeout = std::chrono::seconds(120);
    auto elf = RunCommand({cu, "--list-elf", path}, o);
    auto ptx = RunCommand({cu, "--list-ptx", path}, o);
    ASSERT_TRUE(elf && ptx) << cu;
    if (elf->err.find("fatal") != std::string::npos) {  // e.g. "Invalid ELF": cuobjdump cannot read it
      std::cout << "cuobjdump cannot read " << path << ": " << elf->err;
      ++unreadable;
      continue;
    }
    auto theirs = ParseCuobjdumpList(elf->out);
    // --list-ptx names PTX entries "x.sm_120.ptx": which listing it came from says what it is
    for (auto& p : ParseCuobjdumpList(ptx->out)) {
      p.ptx = true;
      theirs.push_back(p);
    }
    EXPECT_EQ(Joined(Comparable(*ours)), Joined(Comparable(theirs))) << path;
    ++files;
  }
  EXPECT_GT(files, 0) << "no shared object with a .nv_fatbin under " << dir;
  std::cout << "compared " << files << " shared objects with cuobjdump; " << unreadable << " it cannot read\n";
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

/// "sm_100f" from a flashinfer-style cubin name ("..._sm100f.cubin", "fmhaSm103aKernel_..."); "" if none.
std::string SmFromName(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t at = lower.rfind("sm1");
  if (at == std::string::npos) return "";
  size_t e = at + 2;
  while (e < lower.size() && std::isdigit(static_cast<unsigned char>(lower[e]))) ++e;
  if (e < lower.size() && (lower[e] == 'a' || lower[e] == 'f')) ++e;
  return "sm_" + lower.substr(at + 2, e - at - 2);
}

// Opt-in: SPARKOPS_READELF_DIR=DIR (unpacked wheels, e.g. aarch64 sgl-kernel and flashinfer-cubin):
// every shared object's ELF machine and DT_NEEDED/RPATH/RUNPATH must match `readelf -hd`, and every
// standalone .cubin's SM (read from e_flags) must match the SM its file name states, where it states one
// (number and `a`; an `f` in the name has no e_flags bit, docs/checks.md G7).
TEST(ElfReadelf, SameAsReadelfAndCubinNamesOnRealWheels) {
  const char* dir = std::getenv("SPARKOPS_READELF_DIR");
  if (!dir) GTEST_SKIP() << "opt-in: set SPARKOPS_READELF_DIR (docs/preflight-real-wheels.md)";
  int objects = 0, cubins = 0, named = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::string path = it->path().string(), name = it->path().filename().string();
    if (!it->is_regular_file(ec)) continue;
    if (name.ends_with(".cubin")) {
      auto a = ReadCubinArch(path);
      ASSERT_TRUE(a) << a.error().message;
      ++cubins;
      if (std::string want = SmFromName(name); !want.empty()) {
        if (want.back() == 'f') want.pop_back();  // e_flags carry no family bit: sm_100f reads as sm_100
        EXPECT_EQ(a->name, want) << path;
        ++named;
      }
      continue;
    }
    if (!(name.ends_with(".so") || name.find(".so.") != std::string::npos)) continue;
    auto ours = ReadElf(path);
    ASSERT_TRUE(ours) << ours.error().message;
    auto re = RunCommand({"readelf", "-hdW", path}, {});
    ASSERT_TRUE(re);
    std::string want_needed, got_needed;
    for (auto line : Split(re->out, '\n')) {
      auto open = line.find('['), close = line.rfind(']');
      if (line.find("(NEEDED)") != std::string_view::npos && open != std::string_view::npos)
        want_needed += std::string(line.substr(open + 1, close - open - 1)) + " ";
      if (line.find("(RPATH)") != std::string_view::npos) {
        EXPECT_EQ(ours->rpath.value_or("?"), line.substr(open + 1, close - open - 1)) << path;
      }
      if (line.find("(RUNPATH)") != std::string_view::npos) {
        EXPECT_EQ(ours->runpath.value_or("?"), line.substr(open + 1, close - open - 1)) << path;
      }
      if (line.find("Machine:") != std::string_view::npos) {
        EXPECT_EQ(line.find("AArch64") != std::string_view::npos, ours->machine == ElfMachineFromUname("aarch64"))
            << path;
      }
    }
    for (const auto& n : ours->needed) got_needed += n + " ";
    EXPECT_EQ(got_needed, want_needed) << path;
    ++objects;
  }
  EXPECT_GT(objects + cubins, 0) << "no object or cubin under " << dir;
  std::cout << "compared " << objects << " shared objects with readelf; " << cubins << " cubins, " << named
            << " with an SM in their name\n";
}

}  // namespace
}  // namespace sparkops
