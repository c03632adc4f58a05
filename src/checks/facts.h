#pragma once
/// HostFacts: what the checks read about the machine, gathered lazily and once through the host
/// layer (src/host). Tests may preset any fact with the Set* methods instead of reading a host.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "host/elf.h"
#include "host/gpu.h"
#include "host/host_view.h"
#include "host/meminfo.h"
#include "host/pyenv.h"
#include "host/torch_version.h"
#include "workloads/workload.h"

namespace sparkops {

/// Preflight options that steer what is read.
struct PreflightOptions {
  std::string python;                      ///< --python EXE
  std::vector<std::string> site_packages;  ///< --site-packages DIR (repeatable)
  std::vector<std::string> configs;        ///< --config FILE (repeatable)
  bool pair = false;                       ///< --pair: G10 reports the Spark-pair link whatever else is found
  std::string machine = {};  ///< the global --machine: the CPU judged ("aarch64", "x86_64"), "" = this host's
  std::string gpu = {};  ///< --gpu gb10: the GPU to assume when none is readable (checking an image elsewhere)
};

class HostFacts {
 public:
  HostFacts(const HostView& ctx, PreflightOptions opts) : ctx_(ctx), opts_(std::move(opts)) {}

  const HostView& ctx() const { return ctx_; }
  const PreflightOptions& options() const { return opts_; }

  /// /proc/meminfo under --root.
  const Result<MemInfo>& meminfo() const;
  void SetMemInfo(Result<MemInfo> m) { meminfo_ = std::move(m); }

  /// All GPUs, read once (NVML, then nvidia-smi, else empty with why_none).
  const GpuSnapshot& gpu() const;
  void SetGpu(GpuSnapshot g) { gpu_ = std::move(g); }

  /// What the GPU reports for memory, for G3: "not reported (unified memory)" on GB10,
  /// "not reported (no GPU readable)" without NVML/nvidia-smi.
  std::string GpuMemorySummary() const;

  /// ML workloads on the pool (process table under --root + NVML per-process memory), read once
  /// with the same code as `sparkops ps`; for G6 and G10's running launchers.
  const Result<WorkloadScan>& workloads() const;
  void SetWorkloads(Result<WorkloadScan> w) { workloads_ = std::move(w); }
  // --- Python environment facts (G1, G2, G7, G9; src/checks/facts_python.cc) ---
  /// The environment found by DiscoverPython (NotFound when none; Input error for a bad
  /// --site-packages/--python).
  const Result<PythonEnv>& python() const;
  void SetPython(Result<PythonEnv> p) { python_ = std::move(p); }
  /// Installed packages of python() (empty without an environment).
  const Inventory& packages() const;
  /// torch/version.py of the first torch on the path: absent when torch is not installed.
  const std::optional<Result<TorchVersion>>& torch_version() const;
  /// ELF dynamic info of one object, read once per path.
  const Result<ElfInfo>& elf(const std::string& path) const;
  /// CUDA code in one object, from its .nv_fatbin entry headers (pread, payloads not read); cached.
  const CudaArchList& cuda_arches(const std::string& path) const;
  /// The CPU judged ("aarch64", "x86_64"): --machine, else `uname -m` of the host; tests set it.
  const std::string& host_machine() const;
  void SetHostMachine(std::string m) { host_machine_ = std::move(m); }

 private:
  const HostView& ctx_;
  PreflightOptions opts_;
  mutable std::optional<Result<MemInfo>> meminfo_;
  mutable std::optional<GpuSnapshot> gpu_;
  mutable std::optional<Result<WorkloadScan>> workloads_;
  mutable std::optional<Result<PythonEnv>> python_;
  mutable std::optional<Inventory> packages_;
  mutable std::optional<std::optional<Result<TorchVersion>>> torch_version_;
  mutable std::map<std::string, Result<ElfInfo>> elf_;
  mutable std::map<std::string, CudaArchList> arches_;
  mutable std::optional<std::string> host_machine_;
};

}  // namespace sparkops
