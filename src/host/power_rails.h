#pragma once
/// Power rails, power limits, PROCHOT and CPU/SoC temperatures outside NVML (issue 18; facts in
/// docs/telemetry.md, "Power rails"; driver: github.com/antheas/spark_hwmon). Sources, all optional:
///  - the community `spbm` hwmon driver on DGX Spark (found by its `name`, channels by label):
///    rails (µW), energy counters (µJ), limiter EWMAs and caps, temperatures (m°C), and the
///    `prochot` / `pl_level` attributes in the hwmon directory or the ACPI device directory
///    `/sys/bus/platform/devices/NVDA8800:00`;
///  - thermal zones and generic hwmon temperatures (any Linux host).
/// Every map holds only what was read: absent means not reported, never 0.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/hostfs.h"
#include "host/hwmon.h"

namespace sparkops {

inline constexpr const char* kSpbmName = "spbm";
inline constexpr const char* kSpbmAcpiDir = "/sys/bus/platform/devices/NVDA8800:00";
/// The firmware's energy counters are 32-bit millijoules: they wrap at 2^32 mJ.
inline constexpr uint64_t kEnergyWrapUj = (uint64_t{1} << 32) * 1000;
/// The four limiters, in the order they are shown.
const std::vector<std::string>& PowerLimiters();

struct PowerReading {
  bool spbm = false;                        ///< the spbm hwmon device was found
  /// "ewma" when the driver has `ewma_*` channels (v0.3.0: `pl1`... are the limits), "cap" when
  /// `pl1`... are the EWMAs with `powerK_cap` (the original driver); "" without spbm.
  std::string spbm_layout;
  std::map<std::string, double> rails_w;    ///< spbm rails (sys_total, soc_pkg, dc_input, gpu, ...), W
  std::map<std::string, double> budgets_w;  ///< budget_cpu, budget_gpu, ..., W
  std::map<std::string, double> ewma_w;     ///< limiter -> EWMA power the controller sees, W
  std::map<std::string, double> caps_w;     ///< limiter -> its cap, W
  std::map<std::string, uint64_t> energy_uj;  ///< spbm energy counters (pkg, cpu_e, cpu_p, gpu), µJ
  /// rail -> W averaged from the energy counter since the previous reading (filled by EnergyRates).
  std::map<std::string, double> avg_w;
  /// sensor -> °C: spbm labels (cpu_p_clu0, soc, gpu, tj_max, ...), thermal zones as
  /// "zone<N>_<type>", other hwmon temperatures as "<name>_<label>".
  std::map<std::string, double> temps_c;
  std::optional<int64_t> prochot;           ///< 0 normal, non-zero: the hardware brake is on
  std::optional<int64_t> pl_level;          ///< the power-limit level in force
  std::optional<double> cpu_temp_c, soc_temp_c;  ///< hottest CPU sensor; the SoC sensor
  std::string cpu_temp_sensor, soc_temp_sensor;  ///< where they came from

  /// A rail by label, W.
  std::optional<double> Rail(const std::string& label) const;
  /// Package power: the `pkg` energy average, else the `soc_pkg` rail.
  std::optional<double> SocPkgW() const;
  /// CPU power: cpu_p + cpu_e (energy averages, else rails), only when both are known.
  std::optional<double> CpuW() const;
  std::optional<double> Ewma(const std::string& limiter) const;
  std::optional<double> Cap(const std::string& limiter) const;
  /// True when nothing at all was read.
  bool empty() const;
};

/// Pure: the reading from the hwmon devices (with `prochot`/`pl_level` in `attrs` when the hwmon
/// directory has them), the thermal zones, and the ACPI device's attributes (used when the hwmon
/// directory lacks them).
PowerReading InterpretPower(const std::vector<HwmonDevice>& devices, const std::vector<ThermalZone>& zones,
                            const std::map<std::string, int64_t>& acpi_attrs);

/// Reads all of the above under the HostFs root.
PowerReading ReadPowerReading(const HostFs& fs);

/// Pure: energy used between two counter readings, µJ. A decrease is a 32-bit mJ wrap when the
/// wrapped delta stays plausible (at most `max_w` over `dt_s`), else a reset: absent, never negative.
std::optional<uint64_t> EnergyDeltaUj(uint64_t prev_uj, uint64_t cur_uj, double dt_s, double max_w = 2000);

/// Turns successive energy counters into average power (fills PowerReading::avg_w). A counter
/// that has not moved since the last reading is not a 0 W average: the firmware updates it about
/// every 100 ms in mJ steps, so between two close readings it stands still. That rail gets no
/// average (its instantaneous rail stands), and its next change is averaged from the last change.
class EnergyRates {
 public:
  /// `t_s`: a monotonic time of the reading, seconds.
  void Update(PowerReading& r, double t_s);

 private:
  std::map<std::string, std::pair<uint64_t, double>> prev_;  ///< rail -> counter µJ, when it last changed (s)
};

}  // namespace sparkops
