// The bounded ELF header parser (elf_headers.h). Field offsets: the System V gABI, "ELF Header",
// "Sections" and "Dynamic Section" (Elf32_/Elf64_ Ehdr, Shdr, Dyn as glibc's <elf.h> declares them).
#include "host/elf_headers.h"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "host/hostfs.h"

namespace sparkops {

bool MemoryBytes::Read(uint64_t off, void* dst, size_t n) {
  if (off > d_.size() || n > d_.size() - off) return false;
  if (n) std::memcpy(dst, d_.data() + off, n);
  return true;
}

Result<FileBytes> FileBytes::Open(const std::string& path, uint64_t max_bytes) {
  uint64_t size = 0;
  auto fd = OpenRegularFile(path, &size);
  if (!fd) return std::unexpected(fd.error());
  FileBytes f(*fd, size);  // closes the descriptor on every return below
  if (size > max_bytes) return InputError(path + ": " + std::to_string(size) + " bytes, over the ELF size limit");
  return f;
}

FileBytes::~FileBytes() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileBytes::Read(uint64_t off, void* dst, size_t n) {
  if (off > size_ || n > size_ - off) return false;
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(off));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;  // an error, or the file shrank since fstat
    p += got;
    off += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
  return true;
}

namespace {

/// Integers of the file's byte order from raw bytes.
struct Endian {
  bool big = false;
  uint64_t Get(const unsigned char* p, size_t n) const {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{p[big ? n - 1 - i : i]} << (8 * i);
    return v;
  }
  uint16_t U16(const unsigned char* p) const { return static_cast<uint16_t>(Get(p, 2)); }
  uint32_t U32(const unsigned char* p) const { return static_cast<uint32_t>(Get(p, 4)); }
  uint64_t U64(const unsigned char* p) const { return Get(p, 8); }
};

/// `[off, off + size)` lies inside a file of `file_size` bytes (overflow-safe).
bool InFile(uint64_t off, uint64_t size, uint64_t file_size) { return off <= file_size && size <= file_size - off; }

ElfSection DecodeSection(const unsigned char* p, bool is64, const Endian& en) {
  ElfSection s;
  s.name = en.U32(p);
  s.type = en.U32(p + 4);
  if (is64) {
    s.offset = en.U64(p + 24);
    s.size = en.U64(p + 32);
    s.link = en.U32(p + 40);
    s.entsize = en.U64(p + 56);
  } else {
    s.offset = en.U32(p + 16);
    s.size = en.U32(p + 20);
    s.link = en.U32(p + 24);
    s.entsize = en.U32(p + 36);
  }
  return s;
}

constexpr uint64_t kNameLead = 1024;  ///< bytes read before the header table: .shstrtab usually ends there

}  // namespace

Result<ElfLayout> ParseElfLayout(ByteSource& src, const std::string& name, const ElfLimits& limits) {
  auto damaged = [&](const std::string& why) { return InputError(name + ": damaged ELF: " + why); };
  unsigned char eh[sizeof(Elf64_Ehdr)] = {};
  const uint64_t fsize = src.size();
  const size_t head = static_cast<size_t>(std::min<uint64_t>(fsize, sizeof eh));  // one read for the header
  if (!src.Read(0, eh, head)) return damaged("header unreadable");
  if (head < SELFMAG || std::memcmp(eh, ELFMAG, SELFMAG) != 0) return InputError(name + ": not an ELF file");
  if (head < EI_NIDENT) return damaged("header truncated");
  ElfLayout out;
  if (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64)
    return damaged("unknown class " + std::to_string(eh[EI_CLASS]));
  if (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB)
    return damaged("unknown byte order " + std::to_string(eh[EI_DATA]));
  const bool is64 = eh[EI_CLASS] == ELFCLASS64;
  out.elf_class = is64 ? 64 : 32;
  out.big_endian = eh[EI_DATA] == ELFDATA2MSB;
  const Endian en{out.big_endian};
  const size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (head < ehsize) return damaged("header truncated");
  out.machine = en.U16(eh + 18);
  const uint64_t shoff = is64 ? en.U64(eh + 40) : en.U32(eh + 32);
  const uint16_t shentsize = en.U16(eh + (is64 ? 58 : 46));
  uint64_t shnum = en.U16(eh + (is64 ? 60 : 48));
  uint32_t shstrndx = en.U16(eh + (is64 ? 62 : 50));
  if (shoff == 0) return out;  // no section header table (legal; nothing more to read)
  const size_t want_ent = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
  if (shentsize != want_ent)
    return damaged("section header size " + std::to_string(shentsize) + ", expected " + std::to_string(want_ent));
  if (!InFile(shoff, want_ent, fsize)) return damaged("section headers past the end of the file");
  if (shnum == 0 || shstrndx == SHN_XINDEX) {  // extended numbering: the real values are in section 0
    unsigned char s0[sizeof(Elf64_Shdr)];
    if (!src.Read(shoff, s0, want_ent)) return damaged("section headers truncated");
    ElfSection zero = DecodeSection(s0, is64, en);
    if (shnum == 0) shnum = zero.size;
    if (shstrndx == SHN_XINDEX) shstrndx = zero.link;
  }
  if (shnum == 0) return out;
  if (shnum > limits.max_sections)
    return damaged(std::to_string(shnum) + " sections, over the limit of " + std::to_string(limits.max_sections));
  const uint64_t table = shnum * want_ent;  // <= max_sections * 64: no overflow for any sane limit
  if (table / want_ent != shnum || !InFile(shoff, table, fsize))
    return damaged("section headers past the end of the file");
  // One read: the table and the bytes just before it, where linkers put .shstrtab.
  const uint64_t lead = std::min(shoff, kNameLead);
  std::string buf(static_cast<size_t>(lead + table), '\0');
  if (!src.Read(shoff - lead, buf.data(), buf.size())) return damaged("section headers truncated");
  out.sections.reserve(static_cast<size_t>(shnum));
  for (uint64_t i = 0; i < shnum; ++i)
    out.sections.push_back(
        DecodeSection(reinterpret_cast<const unsigned char*>(buf.data()) + lead + i * want_ent, is64, en));
  for (size_t i = 0; i < out.sections.size() && !out.dynamic; ++i)
    if (out.sections[i].type == SHT_DYNAMIC) out.dynamic = i;
  if (shstrndx == SHN_UNDEF) return out;  // no section names
  if (shstrndx >= out.sections.size())
    return damaged("section-name table index " + std::to_string(shstrndx) + " out of range");
  const ElfSection& st = out.sections[shstrndx];
  if (st.type == SHT_NOBITS || !InFile(st.offset, st.size, fsize))
    return damaged("section-name table past the end of the file");
  if (st.size > limits.max_names_bytes) return damaged("section-name table over the size limit");
  std::string owned;
  std::string_view names;
  if (st.offset >= shoff - lead && st.offset + st.size <= shoff + table) {
    names = std::string_view(buf).substr(static_cast<size_t>(st.offset - (shoff - lead)), static_cast<size_t>(st.size));
  } else {
    owned.resize(static_cast<size_t>(st.size));
    if (!src.Read(st.offset, owned.data(), owned.size())) return damaged("section-name table truncated");
    names = owned;
  }
  if (!names.empty() && names.back() != '\0') return damaged("section-name table not NUL-terminated");
  constexpr std::string_view kFatbin{".nv_fatbin\0", 11};
  for (size_t i = 0; i < out.sections.size(); ++i) {
    const uint32_t n = out.sections[i].name;
    if (n >= names.size() && !(n == 0 && names.empty()))
      return damaged("section " + std::to_string(i) + " name offset " + std::to_string(n) + " beyond the name table");
    if (!out.fatbin && names.substr(n, kFatbin.size()) == kFatbin) out.fatbin = i;
  }
  return out;
}

namespace {
/// Strings of one string table, read through a window of a few KiB (never the whole table:
/// libtorch's .dynstr is megabytes of symbol names; the few strings .dynamic names are near
/// each other).
class StringTable {
 public:
  StringTable(ByteSource& src, const ElfSection& s) : src_(src), off_(s.offset), size_(s.size) {}
  /// The NUL-terminated string at `at`; empty optional with `why` set when it cannot be read.
  std::optional<std::string> Get(uint64_t at, std::string& why) {
    if (at >= size_) {
      why = "string offset " + std::to_string(at) + " beyond the string table";
      return std::nullopt;
    }
    for (uint64_t len = kWindow;; len *= 2) {
      if (at < win_at_ || at - win_at_ >= win_.size() ||
          (win_.find('\0', at - win_at_) == std::string::npos && win_at_ + win_.size() < size_)) {
        if (len > kMaxString) {
          why = "string at " + std::to_string(at) + " longer than " + std::to_string(kMaxString) + " bytes";
          return std::nullopt;
        }
        win_.resize(static_cast<size_t>(std::min(len, size_ - at)));
        win_at_ = at;
        if (!src_.Read(off_ + at, win_.data(), win_.size())) {
          why = "string table truncated";
          return std::nullopt;
        }
      }
      size_t nul = win_.find('\0', at - win_at_);
      if (nul != std::string::npos) return win_.substr(at - win_at_, nul - (at - win_at_));
      if (win_at_ + win_.size() >= size_) {
        why = "string at " + std::to_string(at) + " has no NUL before the end of the string table";
        return std::nullopt;
      }
    }
  }

 private:
  static constexpr uint64_t kWindow = 4096, kMaxString = 64u << 10;
  ByteSource& src_;
  uint64_t off_, size_;
  std::string win_;
  uint64_t win_at_ = 0;
};
}  // namespace

Result<ElfInfo> ReadDynamicInfo(ByteSource& src, const ElfLayout& layout, const std::string& name,
                                const ElfLimits& limits) {
  auto damaged = [&](const std::string& why) { return InputError(name + ": damaged ELF: " + why); };
  ElfInfo info;
  info.elf_class = layout.elf_class;
  info.machine = layout.machine;
  info.has_fatbin = layout.fatbin.has_value();
  if (!layout.dynamic) return info;
  const ElfSection& d = layout.sections[*layout.dynamic];
  const bool is64 = layout.elf_class == 64;
  const size_t ent = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
  if (d.entsize != ent) return damaged(".dynamic entry size " + std::to_string(d.entsize) + " implausible");
  const uint64_t count = d.size / ent;
  if (count > limits.max_dyn_entries) return damaged(".dynamic entry count implausible");
  if (!InFile(d.offset, count * ent, src.size())) return damaged(".dynamic past the end of the file");
  std::string dyn(static_cast<size_t>(count * ent), '\0');
  if (!src.Read(d.offset, dyn.data(), dyn.size())) return damaged(".dynamic truncated");
  const Endian en{layout.big_endian};
  struct Want {
    int64_t tag;
    uint64_t at;
  };
  std::vector<Want> wants;
  for (uint64_t i = 0; i < count; ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(dyn.data()) + i * ent;
    int64_t tag = is64 ? static_cast<int64_t>(en.U64(p)) : static_cast<int32_t>(en.U32(p));
    uint64_t val = is64 ? en.U64(p + 8) : en.U32(p + 4);
    if (tag == DT_NULL) break;
    if (tag == DT_NEEDED || tag == DT_RPATH || tag == DT_RUNPATH || tag == DT_SONAME) wants.push_back({tag, val});
  }
  if (wants.empty()) return info;
  if (d.link == 0 || d.link >= layout.sections.size())
    return damaged(".dynamic string table index " + std::to_string(d.link) + " out of range");
  const ElfSection& s = layout.sections[d.link];
  if (s.type == SHT_NOBITS || !InFile(s.offset, s.size, src.size()))
    return damaged(".dynamic string table past the end of the file");
  StringTable strings(src, s);
  std::string why;
  for (const Want& w : wants) {
    auto str = strings.Get(w.at, why);
    if (!str) return damaged(".dynamic " + why);
    if (w.tag == DT_NEEDED) info.needed.push_back(std::move(*str));
    else if (w.tag == DT_RPATH) info.rpath = std::move(*str);
    else if (w.tag == DT_RUNPATH) info.runpath = std::move(*str);
    else info.soname = std::move(*str);
  }
  return info;
}

}  // namespace sparkops
