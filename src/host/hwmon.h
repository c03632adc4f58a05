#pragma once
/// Generic Linux hwmon devices (`/sys/class/hwmon/hwmonN`, kernel Documentation/hwmon/sysfs-interface)
/// and thermal zones (`/sys/class/thermal/thermal_zoneN/{type,temp}`). Channels are kept by their
/// label (never by their number: a driver may hide channels), values in the sysfs units:
/// power µW, energy µJ, temperature m°C.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

/// One channel: `<kind><K>_input` with its `_label` (or "<kind><K>" when unlabeled).
struct HwmonChannel {
  std::string kind;               ///< "power", "energy" or "temp"
  std::string label;              ///< `<kind>K_label`, trimmed; "<kind>K" without one
  int64_t input = 0;              ///< µW, µJ or m°C
  std::optional<int64_t> cap;     ///< `powerK_cap` (µW), when present
};

struct HwmonDevice {
  std::string dir;                         ///< host path, e.g. "/sys/class/hwmon/hwmon3"
  std::string name;                        ///< the `name` file, trimmed
  std::vector<HwmonChannel> channels;      ///< sorted by kind, then channel number
  /// Plain integer attributes besides the channels that a caller asked for (prochot, pl_level).
  std::map<std::string, int64_t> attrs;

  /// The channel of this kind with this label, or null.
  const HwmonChannel* Find(std::string_view kind, std::string_view label) const;
};

/// Pure: a device from its files (file name -> content). Files that are not channels or `name`
/// are ignored, except `extra_attrs` (kept in `attrs` when they hold an integer). A channel whose
/// `_input` is missing or not an integer is skipped (a driver returns errors for channels it
/// cannot read); a label longer than 64 bytes is cut.
HwmonDevice ParseHwmonFiles(const std::map<std::string, std::string>& files,
                            const std::vector<std::string>& extra_attrs = {});

/// Reads every `/sys/class/hwmon/*` device (files at most 4 KiB each, at most 64 devices and 512
/// files each). NotFound when the class directory is missing.
Result<std::vector<HwmonDevice>> ReadHwmonDevices(const HostFs& fs, const std::vector<std::string>& extra_attrs = {});

/// Reads one hwmon-style directory (a device's files), as above.
HwmonDevice ReadHwmonDir(const HostFs& fs, const std::string& dir, const std::vector<std::string>& extra_attrs = {});

struct ThermalZone {
  int index = 0;      ///< N of thermal_zoneN
  std::string type;   ///< `type`, trimmed (acpitz, cpu-thermal, soc_max, ...)
  double temp_c = 0;  ///< `temp` / 1000
};

/// Pure: one zone from its `type` and `temp` texts; absent when temp is not an integer or is
/// outside -273..1000 °C (a sensor error, not a reading).
std::optional<ThermalZone> ParseThermalZone(int index, std::string_view type, std::string_view temp);
/// Every readable `/sys/class/thermal/thermal_zoneN`, by N (at most 256). Empty when none.
std::vector<ThermalZone> ReadThermalZones(const HostFs& fs);

}  // namespace sparkops
