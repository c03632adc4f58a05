#include "host/elf.h"

#include <elf.h>
#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "base/strings.h"
#include "host/elf_headers.h"

namespace sparkops {

Result<ElfInfo> ReadElf(const std::string& path, const ElfLimits& limits) {
  auto file = FileBytes::Open(path, limits.max_file_bytes);
  if (!file) return std::unexpected(file.error());
  auto layout = ParseElfLayout(*file, path, limits);
  if (!layout) return std::unexpected(layout.error());
  return ReadDynamicInfo(*file, *layout, path, limits);
}

namespace {
/// Opens `path` and calls `fn(file, section)` for its `.nv_fatbin` section, or `fn(file, nullptr)`
/// when it has none (or the section occupies no bytes of the file). `fn` returns a Result.
template <typename Fn>
auto WithFatbinSection(const std::string& path, Fn fn) -> decltype(fn(std::declval<FileBytes&>(), nullptr)) {
  const ElfLimits limits;
  auto file = FileBytes::Open(path, limits.max_file_bytes);
  if (!file) return std::unexpected(file.error());
  auto layout = ParseElfLayout(*file, path, limits);
  if (!layout) return std::unexpected(layout.error());
  if (!layout->fatbin) return fn(*file, nullptr);
  const ElfSection& sh = layout->sections[*layout->fatbin];
  if (sh.type == SHT_NOBITS) return fn(*file, nullptr);
  if (sh.offset > file->size() || sh.size > file->size() - sh.offset)
    return InputError(path + ": damaged ELF: .nv_fatbin extends past the end of the file");
  return fn(*file, &sh);
}
}  // namespace

Result<std::string> ReadFatbinSection(const std::string& path, size_t max_bytes) {
  return WithFatbinSection(path, [&](FileBytes& f, const ElfSection* sh) -> Result<std::string> {
    if (!sh) return std::string();
    if (sh->size > max_bytes) return InputError(path + ": .nv_fatbin larger than the scan limit");
    std::string out(static_cast<size_t>(sh->size), '\0');
    if (!f.Read(sh->offset, out.data(), out.size())) return InputError(path + ": damaged ELF: .nv_fatbin unreadable");
    return out;
  });
}

std::optional<CudaArch> CubinArchFromHeader(uint8_t abi_version, uint32_t e_flags) {
  const uint32_t sm = abi_version >= 8 ? (e_flags >> 8) & 0xff : e_flags & 0xff;
  if (sm == 0) return std::nullopt;
  std::string name = "sm_" + std::to_string(sm);
  if (abi_version >= 8 && (e_flags & 0x8)) name += 'a';
  return MakeCudaArch(name, false);
}

Result<CudaArch> ReadCubinArch(const std::string& path) {
  auto file = FileBytes::Open(path, ElfLimits{}.max_file_bytes);
  if (!file) return std::unexpected(file.error());
  unsigned char h[64];
  if (!file->Read(0, h, sizeof h) || std::memcmp(h, ELFMAG, SELFMAG) != 0 || h[EI_CLASS] != ELFCLASS64 ||
      h[EI_DATA] != ELFDATA2LSB)
    return InputError(path + ": not a 64-bit little-endian ELF file (a cubin is)");
  uint16_t machine = 0;
  uint32_t flags = 0;
  std::memcpy(&machine, h + 18, 2);
  std::memcpy(&flags, h + 48, 4);
  if (machine != kEmCuda) return InputError(path + ": ELF machine " + ElfMachineName(machine) + ", not a CUDA cubin");
  auto a = CubinArchFromHeader(h[EI_ABIVERSION], flags);
  if (!a) return InputError(path + ": cubin e_flags name no SM");
  return *a;
}

std::string ElfMachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "aarch64";
    case EM_386: return "i386";
    case EM_PPC64: return "ppc64";
    case EM_ARM: return "arm";
    case EM_RISCV: return "riscv";
    case kEmCuda: return "CUDA";
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
  bool ok = a.suffix == 'a' ? same : a.suffix == 'f' ? family : std::pair{cc_major, cc_minor} >= std::pair{x, y};
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

/// Fatbin bytes of a section of an open file, read with pread through one 4 KiB buffer: only the
/// pages holding headers are read, and nothing is mapped (a mapping's touched pages would count as RSS).
struct PreadSource {
  ByteSource* file;
  uint64_t base, size;  ///< the section: [base, base + size) lies inside the file (checked by the caller)
  char buf[4096];
  uint64_t buf_off = 0;
  size_t buf_len = 0;
  bool Get(uint64_t off, void* dst, size_t n) {
    if (off > size || n > size - off || n > sizeof buf) return false;
    if (off < buf_off || off + n > buf_off + buf_len) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buf, size - off));
      if (!file->Read(base + off, buf, want)) return false;
      buf_off = off;
      buf_len = want;
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
  return WithFatbinSection(path, [&](FileBytes& f, const ElfSection* sh) -> Out {
    if (!sh) return std::vector<CudaArch>{};
    auto src = std::make_unique<PreadSource>(PreadSource{&f, sh->offset, sh->size, {}, 0, 0});
    return ScanFatbinFrom(*src, sh->size);
  });
}

}  // namespace sparkops
