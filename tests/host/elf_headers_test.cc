// The bounded ELF header parser (host/elf_headers.h) on images built here: both classes, both byte
// orders, then one damage at a time (a table of what each breaks and the error it must give).
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "host/elf.h"
#include "host/elf_headers.h"
#include "test_util.h"

namespace sparkops {
namespace {

/// A small shared object image: sections 0 (null), 1 .dynstr, 2 .dynamic, 3 .shstrtab,
/// 4 .nv_fatbin, the section header table last (as linkers lay them out). Fields can be patched
/// afterwards in the image's class and byte order.
struct Image {
  bool is64, big;
  std::string b;
  uint64_t shoff = 0;
  static constexpr const char* kDynstr = "\0libcudart.so.13\0libc.so.6\0$ORIGIN/../lib\0libext.so\0";
  static constexpr size_t kDynstrLen = 1 + 16 + 10 + 15 + 10;  // "libext.so" starts at 42
  static constexpr const char* kShstr = "\0.dynstr\0.dynamic\0.shstrtab\0.nv_fatbin\0";
  static constexpr size_t kShstrLen = 1 + 8 + 9 + 10 + 11;

  Image(bool is64_, bool big_) : is64(is64_), big(big_) {
    const size_t eh = is64 ? 64 : 52, ent = is64 ? 64 : 40, dyn_ent = is64 ? 16 : 8;
    b.assign(eh, '\0');
    std::memcpy(b.data(), ELFMAG, SELFMAG);
    b[EI_CLASS] = static_cast<char>(is64 ? ELFCLASS64 : ELFCLASS32);
    b[EI_DATA] = static_cast<char>(big ? ELFDATA2MSB : ELFDATA2LSB);
    b[EI_VERSION] = EV_CURRENT;
    Put(16, 2, ET_DYN);
    Put(18, 2, EM_AARCH64);
    const uint64_t dynstr_at = b.size();
    b.append(kDynstr, kDynstrLen);
    Align();
    const uint64_t dyn_at = b.size();
    const std::vector<std::pair<int64_t, uint64_t>> dyn = {
        {DT_NEEDED, 1}, {DT_NEEDED, 17}, {DT_RUNPATH, 27}, {DT_SONAME, 42}, {DT_NULL, 0}};
    for (auto [tag, val] : dyn) {
      const size_t at = b.size();
      b.append(dyn_ent, '\0');
      Put(at, dyn_ent / 2, static_cast<uint64_t>(tag));
      Put(at + dyn_ent / 2, dyn_ent / 2, val);
    }
    const uint64_t shstr_at = b.size();
    b.append(kShstr, kShstrLen);
    Align();
    const uint64_t fat_at = b.size();
    b.append(64, '\x5a');
    Align();
    shoff = b.size();
    b.append(5 * ent, '\0');
    Put(is64 ? 40 : 32, is64 ? 8 : 4, shoff);
    Put(is64 ? 58 : 46, 2, ent);
    Put(is64 ? 60 : 48, 2, 5);
    Put(is64 ? 62 : 50, 2, 3);
    Section(1, 1, SHT_STRTAB, dynstr_at, kDynstrLen, 0, 0);
    Section(2, 9, SHT_DYNAMIC, dyn_at, dyn.size() * dyn_ent, 1, dyn_ent);
    Section(3, 18, SHT_STRTAB, shstr_at, kShstrLen, 0, 0);
    Section(4, 28, SHT_PROGBITS, fat_at, 64, 0, 0);
  }
  void Align() { b.append((8 - b.size() % 8) % 8, '\0'); }
  /// Writes `v` as an n-byte integer at `at` in the image's byte order.
  void Put(uint64_t at, size_t n, uint64_t v) {
    for (size_t i = 0; i < n; ++i) b[at + (big ? n - 1 - i : i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
  enum Field { kName, kType, kOffset, kSize, kLink, kEntsize };
  void Set(size_t sec, Field f, uint64_t v) {
    const uint64_t at = shoff + sec * (is64 ? 64 : 40);
    static constexpr size_t off64[] = {0, 4, 24, 32, 40, 56}, off32[] = {0, 4, 16, 20, 24, 36};
    static constexpr size_t len64[] = {4, 4, 8, 8, 4, 8};
    Put(at + (is64 ? off64[f] : off32[f]), is64 ? len64[f] : 4, v);
  }
  void Section(size_t i, uint32_t name, uint32_t type, uint64_t off, uint64_t size, uint32_t link, uint64_t ent) {
    Set(i, kName, name);
    Set(i, kType, type);
    Set(i, kOffset, off);
    Set(i, kSize, size);
    Set(i, kLink, link);
    Set(i, kEntsize, ent);
  }
  enum Header { kShoff, kShentsize, kShnum, kShstrndx };
  void SetHeader(Header h, uint64_t v) {
    static constexpr size_t off64[] = {40, 58, 60, 62}, off32[] = {32, 46, 48, 50};
    Put(is64 ? off64[h] : off32[h], h == kShoff ? (is64 ? 8 : 4) : 2, v);
  }
};

Result<ElfInfo> Parse(const std::string& bytes, const ElfLimits& limits = {}) {
  MemoryBytes src(bytes);
  auto layout = ParseElfLayout(src, "lib.so", limits);
  if (!layout) return std::unexpected(layout.error());
  return ReadDynamicInfo(src, *layout, "lib.so", limits);
}

struct Variant {
  bool is64, big;
};
const Variant kVariants[] = {{true, false}, {false, false}, {true, true}, {false, true}};

TEST(ElfHeaders, ReadsBothClassesAndByteOrders) {
  for (auto [is64, big] : kVariants) {
    SCOPED_TRACE(std::to_string(is64 ? 64 : 32) + (big ? " big-endian" : " little-endian"));
    auto info = Parse(Image(is64, big).b);
    ASSERT_TRUE(info) << info.error().message;
    EXPECT_EQ(info->elf_class, is64 ? 64 : 32);
    EXPECT_EQ(info->machine, EM_AARCH64);
    EXPECT_EQ(info->needed, (std::vector<std::string>{"libcudart.so.13", "libc.so.6"}));
    EXPECT_EQ(info->runpath, "$ORIGIN/../lib");
    EXPECT_FALSE(info->rpath);
    EXPECT_EQ(info->soname, "libext.so");
    EXPECT_TRUE(info->has_fatbin);
  }
}

TEST(ElfHeaders, DamagedImagesAreInputErrorsNamingTheFile) {
  struct Case {
    const char* what;
    std::function<void(Image&)> damage;
    const char* error;  // a part of the message
  };
  const uint64_t big = uint64_t{1} << 62;
  const std::vector<Case> cases = {
      {"truncated file header", [](Image& m) { m.b.resize(m.is64 ? 40 : 30); }, "header truncated"},
      {"only the magic", [](Image& m) { m.b.resize(4); }, "header truncated"},
      {"unknown class", [](Image& m) { m.b[EI_CLASS] = 3; }, "unknown class 3"},
      {"unknown byte order", [](Image& m) { m.b[EI_DATA] = 0; }, "unknown byte order 0"},
      {"e_shoff beyond EOF", [](Image& m) { m.SetHeader(Image::kShoff, m.b.size() + 8); }, "past the end of the file"},
      {"e_shoff near 2^64", [](Image& m) { m.SetHeader(Image::kShoff, m.is64 ? ~uint64_t{0} - 8 : 0xfffffff8u); },
       "past the end of the file"},
      {"section table cut short", [](Image& m) { m.b.resize(m.b.size() - 10); }, "past the end of the file"},
      {"odd e_shentsize", [](Image& m) { m.SetHeader(Image::kShentsize, 0xffff); }, "section header size 65535"},
      {"e_shnum over the file", [](Image& m) { m.SetHeader(Image::kShnum, 5000); }, "past the end of the file"},
      {"extended count over the limit",
       [&](Image& m) {
         m.SetHeader(Image::kShnum, 0);
         m.Set(0, Image::kSize, m.is64 ? big : 0x7fffffffu);
       },
       "over the limit"},
      {"section name beyond .shstrtab", [](Image& m) { m.Set(2, Image::kName, 10000); }, "beyond the name table"},
      {"e_shstrndx out of range", [](Image& m) { m.SetHeader(Image::kShstrndx, 9); }, "index 9 out of range"},
      {".shstrtab past EOF", [&](Image& m) { m.Set(3, Image::kOffset, m.b.size() - 4); }, "past the end of the file"},
      {".shstrtab without a final NUL", [](Image& m) { m.Set(3, Image::kSize, Image::kShstrLen - 1); },
       "not NUL-terminated"},
      {".dynamic sh_link out of range", [](Image& m) { m.Set(2, Image::kLink, 77); }, "index 77 out of range"},
      {".dynamic sh_link 0", [](Image& m) { m.Set(2, Image::kLink, 0); }, "index 0 out of range"},
      {".dynamic entry size 0", [](Image& m) { m.Set(2, Image::kEntsize, 0); }, "entry size 0"},
      {".dynamic size 2^62", [&](Image& m) { m.Set(2, Image::kSize, m.is64 ? big : 0xfffffff0u); },
       "entry count implausible"},
      {".dynamic past EOF", [&](Image& m) { m.Set(2, Image::kSize, 1000 * (m.is64 ? 16 : 8)); },
       ".dynamic past the end of the file"},
      {".dynamic string table past EOF", [&](Image& m) { m.Set(1, Image::kSize, m.is64 ? big : 0xffffff00u); },
       "string table past the end of the file"},
      {"string offset beyond .dynstr", [](Image& m) { m.Set(1, Image::kSize, 42); }, "beyond the string table"},
      {"string without NUL before the end of .dynstr", [](Image& m) { m.Set(1, Image::kSize, Image::kDynstrLen - 1); },
       "no NUL before the end"},
  };
  for (auto [is64, bigend] : kVariants) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(c.what) + (is64 ? " (64" : " (32") + (bigend ? "-bit big-endian)" : "-bit)"));
      Image m(is64, bigend);
      c.damage(m);
      ElfLimits limits;
      limits.max_sections = std::numeric_limits<size_t>::max() / 2;  // the byte bounds, not the count, must hold
      auto r = Parse(m.b, std::string(c.what) == "extended count over the limit" ? ElfLimits{} : limits);
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().kind, Error::Kind::kInput);
      EXPECT_EQ(r.error().message.rfind("lib.so: ", 0), 0u) << r.error().message;
      EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
    }
  }
  EXPECT_EQ(Parse("MZ not an ELF at all").error().message, "lib.so: not an ELF file");
}

TEST(ElfHeaders, ExtendedNumberingAndNoSectionsAreRead) {
  Image m(true, false);
  m.SetHeader(Image::kShnum, 0);  // the count in section 0's sh_size, the name index in its sh_link
  m.SetHeader(Image::kShstrndx, SHN_XINDEX);
  m.Set(0, Image::kSize, 5);
  m.Set(0, Image::kLink, 3);
  auto r = Parse(m.b);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->needed.size(), 2u);
  EXPECT_TRUE(r->has_fatbin);
  Image bare(false, true);
  bare.SetHeader(Image::kShoff, 0);  // no section header table: the header alone is read
  auto h = Parse(bare.b);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->elf_class, 32);
  EXPECT_TRUE(h->needed.empty());
  EXPECT_FALSE(h->has_fatbin);
}

TEST(ElfHeaders, EveryPrefixAndEveryByteFlipIsAValueNeverACrash) {
  for (auto [is64, big] : kVariants) {
    const std::string whole = Image(is64, big).b;
    for (size_t n = 0; n < whole.size(); ++n) {
      auto r = Parse(whole.substr(0, n));
      // The header table is last: every strict prefix loses it or the header.
      EXPECT_FALSE(r) << "prefix " << n;
    }
    for (size_t i = 0; i < whole.size(); ++i)
      for (unsigned char x : {0x01, 0x80, 0xff}) {
        std::string m = whole;
        m[i] = static_cast<char>(m[i] ^ x);
        auto r = Parse(m);
        if (r) {
          EXPECT_LE(r->needed.size(), 5u) << "flip at " << i;  // never more than .dynamic holds
        }
      }
  }
}

TEST(ElfHeaders, FilesThatAreNotRegularAreErrorsNotHangs) {
  testing::TempDir dir;
  std::string fifo = dir.path() + "/fifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& p : {fifo, std::string("/dev/zero"), dir.path()}) {
    auto r = ReadElf(p);
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().kind, Error::Kind::kInput) << p;
    EXPECT_EQ(r.error().message.rfind(p + ": ", 0), 0u) << r.error().message;  // names the file, then what it is
    EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos) << r.error().message;
    EXPECT_FALSE(ScanFatbinFile(p));
    EXPECT_FALSE(ReadFatbinSection(p));
  }
  // The same image from a file: the parser reads it with pread; a cut copy names the file.
  Image m(true, false);
  auto ok = ReadElf(dir.Write("ok.so", m.b));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->soname, "libext.so");
  auto fat = ReadFatbinSection(dir.path() + "/ok.so");
  ASSERT_TRUE(fat);
  EXPECT_EQ(*fat, std::string(64, '\x5a'));
  std::string cut = dir.Write("cut.so", m.b.substr(0, m.b.size() / 2));
  auto c = ReadElf(cut);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message.rfind(cut + ": damaged ELF", 0), 0u) << c.error().message;
  m.Set(4, Image::kSize, m.b.size());  // .nv_fatbin running past EOF
  std::string past = dir.Write("past.so", m.b);
  auto s = ScanFatbinFile(past);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(past + ": damaged ELF: .nv_fatbin extends past"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
