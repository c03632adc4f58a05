#pragma once
/// NVML loaded at run time: the ONE file in sparkops that calls dlopen (no build-time NVML
/// dependency; no NVML header exists in Debian). Declarations follow nvml.h 13.3.29 as quoted in
/// docs/telemetry.md; every symbol except init/count/handle is optional, probed once, and a query
/// that answers NOT_SUPPORTED is not asked again.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/error.h"
#include "host/gpu.h"

namespace sparkops {

/// NVML return codes sparkops distinguishes (nvml.h nvmlReturn_t; stored as int).
namespace nvml_rc {
inline constexpr int kSuccess = 0;
inline constexpr int kNotSupported = 3;
inline constexpr int kNoPermission = 4;
inline constexpr int kNotFound = 6;
inline constexpr int kInsufficientSize = 7;
inline constexpr int kGpuIsLost = 15;
inline constexpr int kResetRequired = 16;
}  // namespace nvml_rc

/// "GPU_IS_LOST (15)"-style name for messages; unknown codes are printed numerically.
std::string NvmlReturnName(int rc);

struct NvmlSymbols;  // function pointers, nvml.cc

/// A loaded and initialised NVML. Destruction calls nvmlShutdown and dlclose.
class Nvml {
 public:
  /// dlopen(path) + nvmlInit_v2 (or legacy nvmlInit). Error message starts with "no NVML: " and says
  /// why: library missing, a required symbol missing, or init failing (with NVML's error string).
  static Result<std::unique_ptr<Nvml>> Open(const std::string& path);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  unsigned device_count() const { return count_; }
  /// Identity and fixed facts (name, uuid, compute capability, driver, max SM clock) into `r`.
  void ReadStatic(unsigned index, GpuReading& r);
  /// Per-sample readings into `r` (temperature, power, limit, clocks, utilization, reasons, energy,
  /// memory, processes). Fields NVML does not give stay absent. Returns "" or, once the GPU is lost
  /// or needs a reset, the reason (later calls keep returning it without asking NVML).
  std::string ReadDynamic(unsigned index, GpuReading& r);

 private:
  Nvml() = default;
  /// Which query a per-device "stop asking" flag refers to.
  enum Query : unsigned {
    kTemp,
    kPower,
    kLimit,
    kClock,
    kUtil,
    kReasons,
    kEnergy,
    kMemory,
    kCompute,
    kGraphics,
    kQueryCount
  };
  struct Device {
    void* handle = nullptr;
    std::array<bool, kQueryCount> unsupported{};
    bool temp_v_bad = false;
    bool no_device_memory = false;  ///< memory NOT_SUPPORTED or total 0: unified memory (GB10)  ///<
 ///< nvmlDeviceGetTemperatureV refused: use the legacy call
    std::string lost;  ///< reason once GPU_IS_LOST / RESET_REQUIRED was seen
  };
  /// Records the outcome of a query; true on success.
  bool Ok(Device& d, Query q, int rc);
  void ReadProcesses(Device& d, Query q, GpuReading& r);

  void* lib_ = nullptr;
  std::unique_ptr<NvmlSymbols> sym_;
  unsigned count_ = 0;
  std::unique_ptr<Device[]> devices_;
};

}  // namespace sparkops
