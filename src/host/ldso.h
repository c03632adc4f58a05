#pragma once
/// Where ld.so would find a NEEDED library (ld.so(8); docs/checks.md, G1), without loading anything.
/// Order: DT_RPATH (only when there is no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH, then the
/// libraries torch's __init__ preloads from the pip `nvidia/*/lib` dirs, then the ld.so.conf
/// and default dirs under --root. /etc/ld.so.cache itself is not parsed: the dirs it is built
/// from (/etc/ld.so.conf.d/*.conf) are read instead.
#include <optional>
#include <string>
#include <vector>

#include "host/elf.h"
#include "host/host_view.h"

namespace sparkops {

struct LdsoEnv {
  std::vector<std::string> ld_library_path;  ///< from the user's LD_LIBRARY_PATH
  /// The interpreter's own DT_RPATH, $ORIGIN expanded (conda's python: $ORIGIN/../lib): ld.so
  /// searches it for every object without a DT_RUNPATH, after the object's own DT_RPATH.
  std::vector<std::string> exe_rpath;
  std::string exe;  ///< the interpreter it came from, "" when none was found
  std::vector<std::string> pip_nvidia_dirs;  ///< <site>/nvidia/*/lib, <site>/nvidia/cu13/lib
  std::vector<std::string> system_dirs;      ///< ld.so.conf.d dirs + defaults, real paths under --root
  size_t conf_dirs = 0;                      ///< the first conf_dirs of system_dirs came from ld.so.conf.d
};

/// Builds the search environment: LD_LIBRARY_PATH from ctx.env; ld.so.conf.d and default dirs
/// (/lib, /usr/lib, /lib/<triplet>, /usr/lib/<triplet>, /lib64, /usr/lib64; /usr/local/cuda/lib64
/// only through an ld.so.conf.d entry) under --root; nvidia/*/lib under each site dir; the
/// DT_RPATH of the interpreter of the first `<prefix>/lib/pythonX.Y/site-packages` site dir
/// (`<prefix>/bin/pythonX.Y`, else python3, python; links followed).
LdsoEnv MakeLdsoEnv(const HostView& ctx, const std::vector<std::string>& site_dirs);

/// Splits a DT_RPATH/DT_RUNPATH value and expands $ORIGIN / ${ORIGIN} to `origin_dir`.
std::vector<std::string> ExpandSearchPath(std::string_view raw, std::string_view origin_dir);

struct Resolution {
  std::optional<std::string> path;  ///< where it was found; absent = ld.so would fail
  std::string via;  ///< "RPATH", "interpreter RPATH", "LD_LIBRARY_PATH", "RUNPATH", "pip nvidia/*/lib", "system dirs"
};

/// Resolves one NEEDED name of the object at `obj_path` (a real path). A candidate file whose ELF
/// machine differs from `obj`'s is skipped, as ld.so skips it.
Resolution ResolveNeeded(const std::string& needed, const ElfInfo& obj, const std::string& obj_path,
                         const LdsoEnv& env);

/// A vendored library's name without the hash that auditwheel (and similar tools) add:
/// "libcudart-1a2b3c4d.so.12.3.101" -> "libcudart.so.12.3.101", "libcudart.5e6f7a8b.so.13" ->
/// "libcudart.so.13" (8-16 hex digits after '-' or '.', right before ".so"); others unchanged. Pure.
std::string CanonicalSoname(std::string_view soname);

/// True for the CUDA libraries G1 tracks (vendored, hashed names included) (libcudart, libcublas(Lt), libcufft,
/// libcusparse, libcusolver, libcurand, libnvrtc, libnvJitLink, libcudnn, libcupti, libnvToolsExt ...).
bool IsCudaLibrary(std::string_view soname);
/// The CUDA major a CUDA toolkit soname pins: "libcudart.so.12" -> 12, "libcublasLt.so.13" -> 13,
/// "libcudart.so.11.0" -> 11. Absent for non-toolkit libraries (cuDNN's .so.9 is not a CUDA major).
std::optional<int> CudaMajorOfSoname(std::string_view soname);

}  // namespace sparkops
