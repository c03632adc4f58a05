#pragma once
/// Which CUDA libraries the native objects of a Python environment would load, and from where
/// (docs/checks.md, G1 decision rules): read from ELF dynamic sections, resolved the way
/// ld.so would, without importing anything.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/elf.h"
#include "host/ldso.h"
#include "host/pyenv.h"

namespace sparkops {

/// One CUDA NEEDED entry of one object.
struct CudaNeed {
  std::string soname;                ///< "libcudart.so.12"
  std::optional<std::string> found;  ///< resolved path; absent = ImportError at load time
  std::string via;                   ///< "RPATH", ..., "already loaded by torch"
};

struct ObjectLink {
  std::string package;   ///< "torch 2.9.1+cu130" (dist-info name and version)
  std::string norm;      ///< normalized distribution name ("torch")
  std::string name;      ///< distribution name as in METADATA ("xformers")
  std::string path;      ///< the object, real path
  std::vector<CudaNeed> needs;
  std::set<int> majors;  ///< CUDA majors pinned by its NEEDED toolkit sonames
};

struct LinkReport {
  std::vector<ObjectLink> objects;           ///< objects with at least one CUDA NEEDED entry
  std::map<int, std::vector<std::string>> majors;  ///< major -> "pkg ver: file" that pin it
  std::vector<std::string> unresolved;       ///< "pkg ver: file NEEDs libcudart.so.12 (not found)"
  std::vector<std::string> damaged;          ///< ELF read errors (file and what)
  std::vector<std::string> notes;            ///< e.g. which bitsandbytes object was counted
  size_t objects_read = 0;
};

/// What the CUDA-linked objects of one owning package link, for counting and blame.
struct PackageLink {
  std::string label, norm, name;     ///< "xformers 0.0.35", "xformers", "xformers"
  size_t objects = 0;                ///< its objects with a CUDA NEEDED entry
  std::set<std::string> libraries;   ///< distinct CUDA libraries, vendored hashes removed
  std::set<int> majors;              ///< CUDA majors its objects pin
  std::set<std::string> missing;     ///< NEEDED CUDA names ld.so would not find
};
/// The report grouped by owning package, in report order (torch first). Pure.
std::vector<PackageLink> LinksByPackage(const LinkReport& rep);

/// `torch_cuda`: torch.version.cuda ("13.0"), empty for a CPU build or no torch.
/// `bnb_cuda_version`: the BNB_CUDA_VERSION env value ("" when unset).
/// `read_elf`: how objects are read (ReadElf; tests may wrap it).
LinkReport AnalyzeCudaLinks(const Inventory& inv, const LdsoEnv& env, const std::string& torch_cuda,
                            const std::string& bnb_cuda_version,
                            const std::function<Result<ElfInfo>(const std::string&)>& read_elf);

/// The bitsandbytes object bnb would load: "libbitsandbytes_cuda130.so" for torch CUDA "13.0"
/// (BNB_CUDA_VERSION "126" or "12.6" overrides), "libbitsandbytes_cpu.so" without CUDA.
std::string BitsandbytesObjectName(const std::string& torch_cuda, const std::string& bnb_cuda_version);

/// "site-packages/x/y.so" style label: the path relative to its site dir.
std::string RelativeToSite(const std::string& path, const std::string& site_dir);

}  // namespace sparkops
