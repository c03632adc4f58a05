// HostFacts accessors for the Python environment (G1, G2, G7, G9).
#include "base/strings.h"
#include "checks/facts.h"
#include "host/command.h"
#include "host/container.h"

namespace sparkops {

const Result<PythonEnv>& HostFacts::python() const {
  if (!python_) python_ = DiscoverPython(ctx_, opts_.python, opts_.site_packages);
  return *python_;
}

const Inventory& HostFacts::packages() const {
  if (!packages_) packages_ = python() ? ScanSitePackages(python()->site_dirs) : Inventory{};
  return *packages_;
}

const std::optional<Result<TorchVersion>>& HostFacts::torch_version() const {
  if (!torch_version_) {
    torch_version_.emplace();
    if (const Package* t = packages().Find("torch")) {
      std::string file = t->site_dir + "/torch/version.py";
      auto text = ReadLocalFile(file, 1u << 20);
      if (text) *torch_version_ = ParseTorchVersionPy(*text, file);
      else *torch_version_ = Result<TorchVersion>(std::unexpected(Error{text.error().kind, text.error().message}));
    }
  }
  return *torch_version_;
}

const Result<ElfInfo>& HostFacts::elf(const std::string& path) const {
  auto it = elf_.find(path);
  if (it == elf_.end()) it = elf_.emplace(path, ReadElf(path)).first;
  return it->second;
}

const CudaArchList& HostFacts::cuda_arches(const std::string& path) const {
  auto it = arches_.find(path);
  if (it != arches_.end()) return it->second;
  // The fatbin headers only: cuobjdump is not used (it lists PTX as sm_* duplicates, hides the
  // family flag and takes seconds per object).
  CudaArchList list;
  auto sec = ScanFatbinFile(path);
  if (sec) {
    list.arches = std::move(*sec);
    list.method = "fatbin scan";
    if (list.arches.empty()) list.note = "the .nv_fatbin section holds no fatbin entries";
  } else {
    list.note = sec.error().message;
  }
  return arches_.emplace(path, std::move(list)).first->second;
}

const std::string& HostFacts::host_machine() const {
  if (!host_machine_) host_machine_ = opts_.machine.empty() ? UnameMachine() : opts_.machine;
  return *host_machine_;
}

}  // namespace sparkops
