#pragma once
/// Test helpers for architecture-dependent ELF checks (G2 compares the ELF machine of flash-attn's
/// objects with the host). Header-only; include as "platform/elf_fixture.h".
#include <elf.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "test_util.h"

namespace sparkops::testing {

/// e_machine of the architecture the tests were built for (EM_AARCH64 = 183, EM_X86_64 = 62).
inline int BuildElfMachine() {
#if defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__x86_64__)
  return EM_X86_64;
#else
#error "sparkops tests know x86_64 and aarch64 only"
#endif
}

/// The other one of the two supported architectures: objects with this machine are foreign here.
inline int ForeignElfMachine() { return BuildElfMachine() == EM_AARCH64 ? EM_X86_64 : EM_AARCH64; }

/// Writes a minimal little-endian ELF64 shared-object header (no sections) with e_machine `machine`:
/// enough for ReadElf/readelf to report the machine, e.g. a foreign object in a fake site-packages.
inline std::string WriteMinimalElf(const TempDir& dir, const std::string& rel, int machine) {
  Elf64_Ehdr h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
  h.e_machine = static_cast<Elf64_Half>(machine);
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof(Elf64_Ehdr);
  return dir.Write(rel, std::string(reinterpret_cast<const char*>(&h), sizeof h));
}

/// e_machine read straight from the file's header (both test architectures are little-endian);
/// nullopt when the file is not an ELF64 little-endian object.
inline std::optional<int> ReadElfMachine(const std::string& path) {
  unsigned char h[20] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(h), sizeof h)) return std::nullopt;
  if (std::memcmp(h, ELFMAG, SELFMAG) != 0 || h[EI_CLASS] != ELFCLASS64 || h[EI_DATA] != ELFDATA2LSB)
    return std::nullopt;
  return h[18] | (h[19] << 8);
}

}  // namespace sparkops::testing
