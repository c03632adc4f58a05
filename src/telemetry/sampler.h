#pragma once
/// The one sampler behind `sample`, `run` and `exporter`: GPU (NVML, then nvidia-smi, probed once
/// at construction), /proc/meminfo and /proc/pressure/memory under --root.
#include "host/gpu.h"
#include "host/host_view.h"
#include "host/kmsg_reader.h"
#include "host/power_rails.h"
#include "telemetry/sample.h"

namespace sparkops {

class Sampler {
 public:
  /// Loads NVML once; `ctx` must outlive the sampler.
  explicit Sampler(const HostView& ctx);
  /// One record, stamped with the wall clock. Events are left empty (EventDetector adds them).
  Sample Take();

 private:
  const HostView& ctx_;
  GpuReader gpu_;
  EnergyRates energy_;  ///< power averaged from the spbm energy counters between samples
  std::optional<KmsgReader> kmsg_;  ///< the kernel log, positioned after the records already there at start
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
