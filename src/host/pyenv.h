#pragma once
/// Python environment discovery and package inventory, without importing any package
/// (docs/checks.md, "Finding the Python environment"). Paths here are real paths: `--site-packages`, VIRTUAL_ENV and
/// CONDA_PREFIX name directories on this machine; the system dist-packages dirs are host paths
/// resolved under --root.
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "host/distinfo.h"
#include "host/host_view.h"

namespace sparkops {

struct PythonEnv {
  std::string source;  ///< "--site-packages", "VIRTUAL_ENV=/v", "python3 on PATH (/usr/bin/python3)", ...
  std::vector<std::string> site_dirs;  ///< existing site-packages / dist-packages dirs, search order
  std::vector<std::string> notes;  ///< what was tried and did not work
};

/// What `EXE -S -c ...` printed (see kPythonProbe): prefix, base prefix, "X.Y", then sys.path.
struct PythonProbe {
  std::string prefix, base_prefix, version;  ///< version "3.12"
  std::vector<std::string> sys_path;
};
/// The probe script run with `python -S -c`: -S keeps site-packages from being processed
/// (no .pth import lines run), so it prints what is needed to derive site-packages instead.
extern const char* const kPythonProbe;
/// Parses the probe's stdout. Input error when a line is missing.
Result<PythonProbe> ParsePythonProbe(std::string_view out);
/// site-packages candidates derived from a probe: <prefix>/lib/pythonX.Y/site-packages,
/// <prefix>/local/lib/pythonX.Y/dist-packages, <prefix>/lib/python3/dist-packages, the base
/// prefix's when pyvenv.cfg says include-system-site-packages = true (or outside a venv),
/// the user site (HOME) outside a venv, and site/dist-packages entries of sys.path. Not filtered
/// by existence (pure, apart from `venv_includes_system`).
std::vector<std::string> SiteDirsFromProbe(const PythonProbe& p, const std::string& home, bool venv_includes_system);

/// Discovery order: --site-packages DIR...; --python EXE; VIRTUAL_ENV; CONDA_PREFIX; python3 on
/// PATH (not with --root: that python belongs to the real machine); the system dist-packages
/// dirs under --root. NotFound (with what was tried) when nothing is found.
Result<PythonEnv> DiscoverPython(const HostView& ctx, const std::string& python_exe,
                                 const std::vector<std::string>& site_packages);

/// One installed distribution.
struct Package {
  std::string name, version;  ///< from METADATA/PKG-INFO (else the directory name)
  std::string norm;  ///< NormalizeName(name)
  std::string site_dir;  ///< the site-packages dir it is installed in
  std::string meta_dir;  ///< full path of its .dist-info / .egg-info
  bool egg = false;  ///< legacy egg-info (no RECORD: the tree was walked)
  std::vector<Requirement> requires_dist;
  std::vector<std::string> shared_objects;  ///< full paths of its .so files
  std::vector<std::string> cubins;  ///< full paths of its standalone .cubin files (flashinfer-cubin), at most 100000
  std::optional<DirectUrl> direct_url;
  std::string installer;  ///< INSTALLER contents ("pip", "uv"), may be empty
  std::string problem;  ///< damaged metadata: file and field; "" when fine
};

struct Inventory {
  std::vector<Package> packages;  ///< in site-dir order, then name order
  /// The first package with this normalised name (search order wins, as on sys.path).
  const Package* Find(std::string_view norm_name) const;
  /// All packages with this normalised name (more than one = shadowed installs).
  std::vector<const Package*> FindAll(std::string_view norm_name) const;
};

/// Packages with native CUDA code the checks inspect even without a RECORD (torch,
/// bitsandbytes, flash-attn, xformers, vllm, triton, flashinfer*, sgl-kernel, ...).
bool IsCudaExtensionPackage(std::string_view norm);

/// Reads every *.dist-info / *.egg-info in `site_dirs` (egg-info trees are walked for .so files
/// only for IsCudaExtensionPackage). Never fails: a damaged file becomes
/// the package's `problem`.
Inventory ScanSitePackages(const std::vector<std::string>& site_dirs);

}  // namespace sparkops
