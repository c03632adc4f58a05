#include "host/elf.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "base/strings.h"

namespace sparkops {

namespace {

/// Owns the fd and the libelf handle of one open file.
struct ElfFile {
  int fd = -1;
  Elf* elf = nullptr;
  ~ElfFile() {
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }
};

/// Opens `path` for reading with libelf after checking its size against the limit.
Result<std::unique_ptr<ElfFile>> OpenElf(const std::string& path, const ElfLimits& limits) {
  if (elf_version(EV_CURRENT) == EV_NONE) return IoError("libelf: version mismatch");
  auto f = std::make_unique<ElfFile>();
  f->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f->fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return NotFound(path + ": no such file");
    return IoError(path + ": cannot open: " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) return InputError(path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > limits.max_file_bytes)
    return InputError(path + ": " + std::to_string(st.st_size) + " bytes, over the ELF size limit");
  if (st.st_size < static_cast<off_t>(sizeof(Elf32_Ehdr))) return InputError(path + ": too short to be ELF");
  f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, nullptr);
  if (!f->elf || elf_kind(f->elf) != ELF_K_ELF)
    return InputError(path + ": not an ELF file (" + std::string(elf_errmsg(-1)) + ")");
  return f;
}

}  // namespace

Result<ElfInfo> ReadElf(const std::string& path, const ElfLimits& limits) {
  auto opened = OpenElf(path, limits);
  if (!opened) return std::unexpected(opened.error());
  Elf* elf = (*opened)->elf;
  ElfInfo info;
  int cls = gelf_getclass(elf);
  info.elf_class = cls == ELFCLASS64 ? 64 : cls == ELFCLASS32 ? 32 : 0;
  GElf_Ehdr eh;
  if (!gelf_getehdr(elf, &eh)) return InputError(path + ": damaged ELF header");
  info.machine = eh.e_machine;
  size_t nsec = 0;
  if (elf_getshdrnum(elf, &nsec) != 0 || nsec > limits.max_sections)
    return InputError(path + ": damaged ELF: section count unreadable or implausible");
  size_t shstrndx = 0;
  bool have_names = elf_getshdrstrndx(elf, &shstrndx) == 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) return InputError(path + ": damaged ELF section header");
    if (have_names) {
      const char* nm = elf_strptr(elf, shstrndx, sh.sh_name);
      if (nm && std::strcmp(nm, ".nv_fatbin") == 0) info.has_fatbin = true;
    }
    if (sh.sh_type != SHT_DYNAMIC) continue;
    if (sh.sh_entsize == 0 || sh.sh_size / sh.sh_entsize > limits.max_dyn_entries)
      return InputError(path + ": damaged ELF: .dynamic entry count implausible");
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) return InputError(path + ": damaged ELF: .dynamic unreadable");
    size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < n; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) return InputError(path + ": damaged ELF: .dynamic entry");
      if (dyn.d_tag == DT_NULL) break;
      if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_SONAME)
        continue;
      const char* s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
      if (!s) return InputError(path + ": damaged ELF: .dynamic string out of range");
      if (dyn.d_tag == DT_NEEDED) info.needed.emplace_back(s);
      else if (dyn.d_tag == DT_RPATH) info.rpath = s;
      else if (dyn.d_tag == DT_RUNPATH) info.runpath = s;
      else info.soname = s;
    }
  }
  return info;
}

namespace {
/// Opens `path` and calls `fn(file, &shdr, scn)` for its `.nv_fatbin` section, or
/// `fn(file, nullptr, nullptr)` when it has none. `fn` returns a Result.
template <typename Fn>
auto WithFatbinSection(const std::string& path, Fn fn) -> decltype(fn(std::declval<const ElfFile&>(), nullptr, nullptr)) {
  auto opened = OpenElf(path, ElfLimits{});
  if (!opened) return std::unexpected(opened.error());
  Elf* elf = (*opened)->elf;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return InputError(path + ": damaged ELF: no section names");
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) return InputError(path + ": damaged ELF section header");
    const char* nm = elf_strptr(elf, shstrndx, sh.sh_name);
    if (nm && std::strcmp(nm, ".nv_fatbin") == 0) return fn(**opened, &sh, scn);
  }
  return fn(**opened, nullptr, nullptr);
}
}  // namespace

Result<std::string> ReadFatbinSection(const std::string& path, size_t max_bytes) {
  return WithFatbinSection(path, [&](const ElfFile&, const GElf_Shdr* sh, Elf_Scn* scn) -> Result<std::string> {
    if (!sh || sh->sh_type == SHT_NOBITS) return std::string();
    if (sh->sh_size > max_bytes) return InputError(path + ": .nv_fatbin larger than the scan limit");
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf) return InputError(path + ": damaged ELF: .nv_fatbin unreadable");
    return std::string(static_cast<const char*>(data->d_buf), data->d_size);
  });
}

std::string ElfMachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "aarch64";
    case EM_386: return "i386";
    case EM_PPC64: return "ppc64";
    case EM_ARM: return "arm";
    case EM_RISCV: return "riscv";
    default: return "EM_" + std::to_string(machine);
  }
}

uint16_t ElfMachineFromUname(std::string_view m) {
  if (m == "x86_64" || m == "amd64") return EM_X86_64;
  if (m == "aarch64" || m == "arm64") return EM_AARCH64;
  if (m == "ppc64le" || m == "ppc64") return EM_PPC64;
  if (m == "riscv64") return EM_RISCV;
  if (m == "i686" || m == "i386") return EM_386;
  return 0;
}

namespace {
/// The meaning of regex_match with
///   ^\s*(ELF|PTX) file\s+\d+:.*\.((?:sm|compute)_\d+[af]?)\.(?:cubin|ptx)\s*$
/// (ECMAScript as libstdc++ implements it: '.' matches anything but '\n' and '\r'), hand-written:
/// std::regex made this the fatbin fuzz target's main cost. The arch part is fixed by the end of the
/// line, so the greedy '.*' has exactly one way to match.
std::optional<CudaArch> CuobjdumpListLine(std::string_view l) {
  size_t i = 0;
  while (i < l.size() && IsSpace(l[i])) ++i;
  std::string_view kind = l.substr(i, 3);
  if (kind != "ELF" && kind != "PTX") return std::nullopt;
  i += 3;
  if (l.substr(i, 5) != " file") return std::nullopt;
  i += 5;
  size_t j = i;
  while (j < l.size() && IsSpace(l[j])) ++j;
  if (j == i) return std::nullopt;
  size_t k = j;
  while (k < l.size() && IsDigit(l[k])) ++k;
  if (k == j || k >= l.size() || l[k] != ':') return std::nullopt;
  const size_t any = k + 1;  // where '.*' starts
  // From the end: \s*, then ".cubin" or ".ptx", then [af]?, \d+, '_', "sm" or "compute", '.'.
  size_t e = l.size();
  while (e > any && IsSpace(l[e - 1])) --e;
  std::string_view head = l.substr(any, e - any);
  if (head.ends_with(".cubin")) head.remove_suffix(6);
  else if (head.ends_with(".ptx")) head.remove_suffix(4);
  else return std::nullopt;
  size_t arch_end = any + head.size();
  if (!head.empty() && (head.back() == 'a' || head.back() == 'f')) head.remove_suffix(1);
  size_t digits = 0;
  while (digits < head.size() && IsDigit(head[head.size() - 1 - digits])) ++digits;
  if (digits == 0) return std::nullopt;
  head.remove_suffix(digits);
  if (head.ends_with(".sm_")) head.remove_suffix(4);
  else if (head.ends_with(".compute_")) head.remove_suffix(9);
  else return std::nullopt;
  if (head.find_first_of("\r\n") != std::string_view::npos) return std::nullopt;  // '.' stops there
  size_t arch = any + head.size() + 1;
  return MakeCudaArch(l.substr(arch, arch_end - arch), kind == "PTX");
}
}  // namespace

std::vector<CudaArch> ParseCuobjdumpList(std::string_view text) {
  // "ELF file    1: name.sm_121a.cubin" / "PTX file    1: name.compute_120.ptx"
  std::vector<CudaArch> out;
  for (auto line : SplitLines(text)) {
    if (line.size() > 4096) continue;  // not a listing line
    auto a = CuobjdumpListLine(line);
    if (!a) continue;
    bool dup = false;
    for (const auto& x : out) dup |= (x.name == a->name && x.ptx == a->ptx);
    if (!dup) out.push_back(std::move(*a));
  }
  return out;
}

CudaArch MakeCudaArch(std::string_view name, bool ptx) {
  CudaArch a{std::string(name), ptx, 0, 0, false};
  std::string_view n = name;
  if (n.starts_with("sm_")) n.remove_prefix(3);
  else if (n.starts_with("compute_")) n.remove_prefix(8);
  else return a;
  if (!n.empty() && (n.back() == 'a' || n.back() == 'f')) {
    a.suffix = n.back();
    n.remove_suffix(1);
  }
  if (n.empty() || n.size() > 4) return a;
  int v = 0;
  for (char c : n) {
    if (!IsDigit(c)) return a;
    v = v * 10 + (c - '0');
  }
  a.sm = v;
  return a;
}

CudaRun RunsOn(const CudaArch& a, int cc_major, int cc_minor) {
  if (a.sm <= 0) return CudaRun::kNo;
  const int x = a.sm / 10, y = a.sm % 10;
  const bool same = cc_major == x && cc_minor == y;
  const bool family = cc_major == x && cc_minor >= y;  // same major, same or later minor
  if (!a.ptx) {
    bool ok = a.suffix == 'a' ? same : family;  // generic and 'f' cubins: the family members
    return ok ? CudaRun::kNative : CudaRun::kNo;
  }
  bool ok = a.suffix == 'a'   ? same
            : a.suffix == 'f' ? family
                              : std::pair{cc_major, cc_minor} >= std::pair{x, y};
  return ok ? CudaRun::kJit : CudaRun::kNo;
}

bool IsNvfp4Target(const CudaArch& a) {
  int major = a.sm / 10;
  return (a.suffix == 'a' || a.suffix == 'f') && (major == 10 || major == 12);
}

namespace {
/// Fatbin bytes held in memory.
struct ViewSource {
  std::string_view d;
  bool Get(uint64_t off, void* dst, size_t n) {
    if (off > d.size() || n > d.size() - off) return false;
    std::memcpy(dst, d.data() + off, n);
    return true;
  }
};

/// Fatbin bytes read from a file with pread through one 4 KiB buffer: only the pages holding
/// headers are read, and nothing is mapped (a mapping's touched pages would count as RSS).
struct PreadSource {
  int fd;
  uint64_t base, size;
  char buf[4096];
  uint64_t buf_off = 0;
  size_t buf_len = 0;
  bool Get(uint64_t off, void* dst, size_t n) {
    if (off > size || n > size - off || n > sizeof buf) return false;
    if (off < buf_off || off + n > buf_off + buf_len) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buf, size - off));
      ssize_t got = ::pread(fd, buf, want, static_cast<off_t>(base + off));
      if (got < 0 || static_cast<size_t>(got) < n) return false;
      buf_off = off;
      buf_len = static_cast<size_t>(got);
    }
    std::memcpy(dst, buf + (off - buf_off), n);
    return true;
  }
};

template <typename T, typename Source>
bool Load(Source& src, uint64_t off, T& v) {
  return src.Get(off, &v, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
}

template <typename Source>
std::vector<CudaArch> ScanFatbinFrom(Source& src, uint64_t size) {
  // Layout (reverse-engineered; checked against vLLM 0.33.0's objects and nvcc 13.0 output, see
  // docs/preflight-real-wheels.md): a 16-byte header {u32 magic 0xBA55ED50, u16 version,
  // u16 header_size, u64 entries_size}, then entries {u16 kind (1 PTX, 2 ELF), u16, u32 header_size,
  // u64 payload_size, u32, u32, u16 minor, u16 major, u32 arch (e.g. 121) @28, u32, u32,
  // u64 flags @40}. Only headers are read: payloads (often compressed) are skipped over.
  constexpr uint32_t kMagic = 0xBA55ED50u;
  std::vector<CudaArch> out;
  auto add = [&](CudaArch a) {
    for (const auto& x : out)
      if (x.name == a.name && x.ptx == a.ptx) return;
    out.push_back(std::move(a));
  };
  uint64_t pos = 0;
  while (pos + 16 <= size) {
    uint32_t magic = 0;
    uint16_t hsize = 0;
    uint64_t fsize = 0;
    if (!Load(src, pos, magic) || !Load(src, pos + 6, hsize) || !Load(src, pos + 8, fsize)) break;
    if (magic != kMagic) {
      pos += 8;  // fatbins are 8-byte aligned inside the section
      continue;
    }
    if (hsize < 16 || hsize > size - pos || fsize > size - pos - hsize) break;  // damaged: stop
    uint64_t e = pos + hsize, end = pos + hsize + fsize;
    while (e + 64 <= end) {
      uint16_t kind = 0;
      uint32_t ehsize = 0, arch = 0;
      uint64_t psize = 0, flags = 0;
      if (!Load(src, e, kind) || !Load(src, e + 4, ehsize) || !Load(src, e + 8, psize) || !Load(src, e + 28, arch) ||
          !Load(src, e + 40, flags))
        break;
      if (ehsize < 64 || ehsize > end - e || psize > end - e - ehsize) break;
      if ((kind == 1 || kind == 2) && arch > 0 && arch < 10000) {
        std::string name = (kind == 1 ? "compute_" : "sm_") + std::to_string(arch);
        if (flags & kFatbinArchSpecific) name += 'a';
        else if (flags & kFatbinFamily) name += 'f';
        CudaArch a = MakeCudaArch(name, kind == 1);
        a.compressed = (flags & (kFatbinCompressed | kFatbinCompressed2)) != 0;
        add(std::move(a));
      }
      e += ehsize + psize;
    }
    pos = (end + 7) & ~uint64_t{7};
  }
  return out;
}
}  // namespace

std::vector<CudaArch> ScanFatbin(std::string_view d) {
  ViewSource src{d};
  return ScanFatbinFrom(src, d.size());
}

Result<std::vector<CudaArch>> ScanFatbinFile(const std::string& path) {
  using Out = Result<std::vector<CudaArch>>;
  return WithFatbinSection(path, [&](const ElfFile& f, const GElf_Shdr* sh, Elf_Scn*) -> Out {
    if (!sh || sh->sh_type == SHT_NOBITS) return std::vector<CudaArch>{};
    struct stat st {};
    if (::fstat(f.fd, &st) != 0 || sh->sh_offset > static_cast<uint64_t>(st.st_size) ||
        sh->sh_size > static_cast<uint64_t>(st.st_size) - sh->sh_offset)
      return InputError(path + ": damaged ELF: .nv_fatbin extends past the end of the file");
    auto src = std::make_unique<PreadSource>(PreadSource{f.fd, sh->sh_offset, sh->sh_size, {}, 0, 0});
    return ScanFatbinFrom(*src, sh->sh_size);
  });
}

}  // namespace sparkops
