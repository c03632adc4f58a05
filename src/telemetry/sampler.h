#pragma once
/// The one sampler behind `sample`, `run` and `exporter`: GPU (NVML, then nvidia-smi, probed once
/// at construction), /proc/meminfo and /proc/pressure/memory under --root.
#include "host/gpu.h"
#include "host/host_view.h"
#include "host/kmsg_reader.h"
#include "host/power_rails.h"
#include "telemetry/sample.h"

namespace sparkops {

/// One source a Take() read: gpu, memory, pressure or power; whether it gave a reading (a kernel
/// without PSI, or no power files, is no failure), why not, and its wall time in seconds. The
/// exporter serves each as a collector's status.
struct SourceRead {
  const char* name = "";
  bool ok = true;
  std::string error;
  double seconds = 0;
};

struct SamplerOptions {
  /// Follow /dev/kmsg for new records (the sample's `kernel` signs). The exporter counts the log
  /// since boot in a collector of its own, so it turns this off.
  bool follow_kernel_log = true;
  /// Follow from this mark (records after it appear in the first Take()); absent: from the
  /// sampler's construction.
  std::optional<KmsgMark> kernel_from;
};

class Sampler {
 public:
  /// Loads NVML once; `ctx` must outlive the sampler.
  explicit Sampler(const HostView& ctx, SamplerOptions opts = {});
  /// One record, stamped with the wall clock. Events are left empty (EventDetector adds them).
  Sample Take() { return Take(nullptr, nullptr); }
  /// The same record; also every GPU's reading in `all_gpus` (the record keeps the first) and each
  /// source's status appended to `reads`, where not null.
  Sample Take(GpuSnapshot* all_gpus, std::vector<SourceRead>* reads);

 private:
  const HostView& ctx_;
  GpuReader gpu_;
  EnergyRates energy_;  ///< power averaged from the spbm energy counters between samples
  std::optional<KmsgReader> kmsg_;  ///< the kernel log, positioned after the records already there at start
  std::optional<uint64_t> kmsg_after_;  ///< SamplerOptions::kernel_from: only records after it count
  std::string kmsg_note_;

 public:
  /// Why the kernel log is not followed when /dev/kmsg exists but cannot be read (no root,
  /// dmesg_restrict); "" otherwise. Said once by the command.
  const std::string& kernel_log_note() const { return kmsg_note_; }
};

/// Sum of the per-process GPU memory NVML reports: absent when the process list is not readable or
/// any process's usage is not available (NVML_VALUE_NOT_AVAILABLE); 0 when no process holds any.
std::optional<uint64_t> GpuAttributedBytes(const GpuReading& g);

}  // namespace sparkops
