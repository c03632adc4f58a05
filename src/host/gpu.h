#pragma once
/// The GPU as sparkops sees it: one snapshot per GPU, read through NVML (src/host/nvml.cc, the
/// only file that calls dlopen), then nvidia-smi for the fields NVML lacks, else absent.
/// Every reading is std::optional: a value the hardware does not report is absent, never 0.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "host/host_view.h"

namespace sparkops {

/// A process holding GPU memory (NVML compute/graphics running processes).
struct GpuProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_bytes;  ///< absent when NVML reports NVML_VALUE_NOT_AVAILABLE
};

/// One GPU at one moment.
struct GpuReading {
  unsigned index = 0;
  std::string name;  ///< "NVIDIA GB10"
  std::string uuid;
  std::optional<int> cc_major, cc_minor;           ///< compute capability (12, 1) on GB10
  std::optional<std::string> driver_version;       ///< "580.95.05"
  std::optional<int> cuda_driver_version;          ///< NVML: 13000 for CUDA 13.0
  std::optional<double> temp_c;                    ///< GPU temperature, degrees C
  std::optional<double> power_w;                   ///< power draw, W
  std::optional<double> power_limit_w;             ///< absent on GB10
  std::optional<unsigned> sm_clock_mhz, sm_clock_max_mhz;
  std::optional<unsigned> util_pct;                ///< GPU utilization, percent
  std::optional<uint64_t> clock_event_reasons;     ///< NVML bitmask
  std::optional<uint64_t> energy_mj;               ///< total energy since driver load, mJ
  std::optional<uint64_t> mem_total_bytes, mem_used_bytes;  ///< device memory; absent on GB10
  std::vector<GpuProcess> processes;
  bool processes_known = false;  ///< the process list was read (an empty list is then a reading)
  /// Set when the GPU stopped answering (NVML GPU_IS_LOST / RESET_REQUIRED, nvidia-smi failing
  /// mid-run): the readings above are then absent and this says why.
  std::string error;
  /// True when the device reports no memory of its own (GB10: NOT_SUPPORTED, or total 0).
  bool unified_memory = false;
};

/// Where the readings came from, for messages ("NVML", "nvidia-smi", "none: <why>").
struct GpuSnapshot {
  std::vector<GpuReading> gpus;
  std::string source;   ///< "nvml", "nvidia-smi", "nvml+nvidia-smi" or "none"
  std::string why_none; ///< when no GPU is readable: why (no NVML, nvidia-smi missing, ...)
  bool any() const { return !gpus.empty(); }
};

class Nvml;

/// Keeps NVML loaded and the capabilities probed between reads (the sampler reads every few
/// seconds; nothing is re-probed per sample). The first Read() also decides whether nvidia-smi
/// adds anything NVML lacks; if not, it is not run again.
class GpuReader {
 public:
  explicit GpuReader(const HostView& ctx);
  ~GpuReader();
  GpuReader(const GpuReader&) = delete;
  GpuReader& operator=(const GpuReader&) = delete;

  GpuSnapshot Read();

 private:
  std::unique_ptr<Nvml> nvml_;
  std::string nvml_why_;  ///< why NVML is not used ("no NVML: ..."), "" when loaded
  std::vector<GpuReading> static_;  ///< per-GPU identity read once
  std::optional<uint64_t> pool_bytes_;  ///< MemTotal, to spot a "device total" that is the shared pool
  std::string smi_exe_;   ///< "" when disabled
  bool probed_ = false;
  bool smi_useful_ = true;  ///< after the first read: nvidia-smi filled something NVML lacks
  std::string smi_last_error_;  ///< why nvidia-smi gave nothing, kept once it is no longer run
};

/// Reads all GPUs once, honouring --nvml / --nvidia-smi. Never fails: no GPU is an empty snapshot
/// with `why_none` set.
GpuSnapshot ReadGpuSnapshot(const HostView& ctx);

}  // namespace sparkops
