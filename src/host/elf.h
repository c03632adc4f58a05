#pragma once
/// ELF reading for preflight (G1, G2, G7): the dynamic section (what `readelf -d` shows) and the
/// CUDA code embedded in a host object. Read with libelf, bounded: a file over the size limit or
/// with an implausible section/entry count is an Error naming the file, never a crash.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace sparkops {

/// What the dynamic section of one shared object says.
struct ElfInfo {
  int elf_class = 0;         ///< 32 or 64
  uint16_t machine = 0;      ///< e_machine: EM_X86_64 (62), EM_AARCH64 (183), ...
  std::vector<std::string> needed;  ///< DT_NEEDED, in file order
  std::optional<std::string> rpath;    ///< DT_RPATH, raw (':'-separated, `$ORIGIN` unexpanded)
  std::optional<std::string> runpath;  ///< DT_RUNPATH, raw
  std::optional<std::string> soname;   ///< DT_SONAME
  bool has_fatbin = false;   ///< a `.nv_fatbin` section is present (embedded CUDA code)
};

/// Limits applied before anything is allocated or walked.
struct ElfLimits {
  uint64_t max_file_bytes = 4ull << 30;  ///< libtorch_cuda.so is ~1-2 GB; larger is refused
  size_t max_sections = 65535;
  size_t max_dyn_entries = 100000;
};

/// Reads the dynamic section of `path` (a real path). Input error naming the file when it is not
/// an ELF file or is damaged; NotFound when it does not exist.
Result<ElfInfo> ReadElf(const std::string& path, const ElfLimits& limits = {});

/// "x86-64", "aarch64", "ppc64le", or "EM_<n>" for another e_machine value.
std::string ElfMachineName(uint16_t machine);
/// e_machine value for a `uname -m` machine string ("x86_64" -> 62, "aarch64" -> 183); 0 if unknown.
uint16_t ElfMachineFromUname(std::string_view uname_machine);

/// One embedded CUDA code object: "sm_121a", "sm_120", "compute_120" (PTX).
struct CudaArch {
  std::string name;   ///< "sm_121a", "compute_120"; "sm_121" when the suffix could not be decoded
  bool ptx = false;   ///< true for PTX (compute_XY), false for a cubin (sm_XY)
};

/// How the arch list was obtained.
struct CudaArchList {
  std::vector<CudaArch> arches;
  std::string method;  ///< "cuobjdump", "fatbin scan", or "" when it could not tell
  std::string note;    ///< why it could not tell / caveats
  bool known() const { return !method.empty(); }
};

/// Parses `cuobjdump --list-elf` / `--list-ptx` output ("ELF file    1: x.sm_121a.cubin",
/// "PTX file    1: x.compute_120.ptx"). Pure.
std::vector<CudaArch> ParseCuobjdumpList(std::string_view text);

/// Scans a `.nv_fatbin` section's bytes (fatbin magic 0xBA55ED50 headers) for the code entries it
/// holds. Pure; bounded by `data.size()`. PTX entries whose text is stored uncompressed give their
/// `.target` (with suffix); cubin entries give `sm_<N>` from the entry header.
std::vector<CudaArch> ScanFatbin(std::string_view data);

/// ScanFatbin over the `.nv_fatbin` section of `path`, read in place from the mapped file (no
/// copy: the section of a large extension can be hundreds of MB). Empty when there is none.
Result<std::vector<CudaArch>> ScanFatbinFile(const std::string& path);

/// The raw bytes of the `.nv_fatbin` section of `path` (empty when none), at most `max_bytes`.
Result<std::string> ReadFatbinSection(const std::string& path, size_t max_bytes = 256u << 20);

}  // namespace sparkops
