#pragma once
/// ELF reading for preflight (G1, G2, G7): the dynamic section (what `readelf -d` shows) and the
/// CUDA code embedded in a host object. Read with bounded preads of the headers only (host/elf_headers.h:
/// one open per object, nothing mapped): a file over the size limit, with an implausible
/// section/entry count or an offset past its end is an Error naming the file, never a crash.
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
  uint64_t max_names_bytes = 1u << 20;  ///< the section-name table (real objects: under 1 KiB)
};

/// Reads the dynamic section of `path` (a real path). Input error naming the file when it is not
/// an ELF file, is damaged or is not a regular file (a FIFO, /dev/zero); NotFound when it does not exist.
Result<ElfInfo> ReadElf(const std::string& path, const ElfLimits& limits = {});

/// e_machine of NVIDIA CUDA code objects (cubins).
inline constexpr uint16_t kEmCuda = 190;

/// "x86-64", "aarch64", "ppc64le", or "EM_<n>" for another e_machine value.
std::string ElfMachineName(uint16_t machine);
/// e_machine value for a `uname -m` machine string ("x86_64" -> 62, "aarch64" -> 183); 0 if unknown.
uint16_t ElfMachineFromUname(std::string_view uname_machine);

/// One embedded CUDA code object: "sm_121a", "sm_120f", "sm_120", "compute_120f" (PTX).
struct CudaArch {
  std::string name;   ///< "sm_121a", "compute_120f": prefix, SM number, suffix
  bool ptx = false;   ///< true for PTX (compute_XY), false for a cubin (sm_XY)
  int sm = 0;         ///< 121 for CC 12.1; 0 when the name carries no number
  char suffix = 0;    ///< 'a' (arch-specific), 'f' (family-specific) or 0 (generic)
  bool compressed = false;  ///< the fatbin entry's payload is compressed (read from its header only)
};

/// A CudaArch from its name ("sm_120f", "compute_90a"); sm 0 when the name has no SM number.
CudaArch MakeCudaArch(std::string_view name, bool ptx);

/// How code for `a` runs on a GPU of compute capability cc_major.cc_minor (CUDA's compatibility
/// rules, per entry). Pure.
///   cubin sm_XY  : natively on CC X.Z with Z >= Y (same major)
///   cubin sm_XYa : natively on CC X.Y only
///   cubin sm_XYf : natively on the family members: CC X.Z with Z >= Y (12.0f covers 12.0, 12.1)
///   PTX compute_XY : JIT-compiled on any CC >= X.Y; compute_XYa only on X.Y; compute_XYf on the family
enum class CudaRun { kNo, kNative, kJit };
CudaRun RunsOn(const CudaArch& a, int cc_major, int cc_minor);

/// NVFP4-capable code: an arch- or family-specific (a/f) target of CC 10.x or 12.x (the
/// Blackwell FP4 tensor-core instructions exist only in those targets).
bool IsNvfp4Target(const CudaArch& a);

/// Fatbin entry flag bits (entry header offset +40), read from real wheels (vLLM 0.33.0) and
/// nvcc 13.0 output: family-specific (sm_XYf / compute_XYf), arch-specific (sm_XYa / compute_XYa),
/// and the two payload compressions (0x2000 older, 0x8000 CUDA 12.8+).
inline constexpr uint64_t kFatbinFamily = 0x200000, kFatbinArchSpecific = 0x100000;
inline constexpr uint64_t kFatbinCompressed = 0x2000, kFatbinCompressed2 = 0x8000;

/// How the arch list was obtained.
struct CudaArchList {
  std::vector<CudaArch> arches;
  std::string method;  ///< "fatbin scan" (or "cuobjdump" where a caller used it), "" when it could not tell
  std::string note;    ///< why it could not tell / caveats
  bool known() const { return !method.empty(); }
};

/// Parses `cuobjdump --list-elf` / `--list-ptx` output ("ELF file    1: x.sm_121a.cubin",
/// "PTX file    1: x.compute_120.ptx"). Pure.
std::vector<CudaArch> ParseCuobjdumpList(std::string_view text);

/// Scans a `.nv_fatbin` section's bytes (fatbin magic 0xBA55ED50 headers) for the code entries it
/// holds. Pure; bounded by `data.size()`; reads entry headers only (a compressed payload is never
/// decompressed): kind (1 PTX, 2 cubin), SM number (+28) and the a/f flags (+40).
std::vector<CudaArch> ScanFatbin(std::string_view data);

/// ScanFatbin over the `.nv_fatbin` section of `path`: the section is located through the ELF
/// section headers, then only the fatbin and entry headers are read with pread (4 KiB at a time;
/// payloads are skipped, nothing of the section is mapped, so RSS does not grow with the
/// hundreds of MB a large extension holds). Empty when there is none.
Result<std::vector<CudaArch>> ScanFatbinFile(const std::string& path);

/// The SM of a standalone cubin (an EM_CUDA ELF file, e.g. flashinfer-cubin's `*.cubin`) from its
/// ELF header. Pure. `abi_version` is e_ident[EI_ABIVERSION]: from version 8 (CUDA 12.8+) the SM
/// sits in bits 8-15 of e_flags and 0x8 marks an arch-specific target (sm_XYa); before it the SM
/// is the low byte (EF_CUDA_SM). Read from all 15,970 cubins of flashinfer-cubin 0.6.13 against
/// the SM in their names: `a` = 0x8 always; family (sm_100f) cubins carry no bit of their own
/// (0x2 or 0x4, like unnamed ones), so they read as generic sm_100, which runs on the same GPUs
/// (RunsOn treats generic and family cubins alike). nullopt when no SM is named.
std::optional<CudaArch> CubinArchFromHeader(uint8_t abi_version, uint32_t e_flags);

/// The ELF header of a standalone cubin `path` (64 bytes read): its CudaArch. Input error naming
/// the file when it is not an ELF file, not EM_CUDA (190) or names no SM.
Result<CudaArch> ReadCubinArch(const std::string& path);

/// The raw bytes of the `.nv_fatbin` section of `path` (empty when none), at most `max_bytes`.
Result<std::string> ReadFatbinSection(const std::string& path, size_t max_bytes = 256u << 20);

}  // namespace sparkops
