#include "host/power_rails.h"

#include <algorithm>
#include <cmath>

#include "base/strings.h"

namespace sparkops {
namespace {

constexpr double kMicro = 1e6;

bool IsLimiter(const std::string& l) {
  const auto& v = PowerLimiters();
  return std::find(v.begin(), v.end(), l) != v.end();
}

bool Contains(const std::string& hay, std::string_view needle) {
  return ToLower(hay).find(needle) != std::string::npos;
}

/// Keeps the hottest of the sensors `match` accepts.
void Hottest(const std::map<std::string, double>& temps, bool (*match)(const std::string&), std::optional<double>* out,
             std::string* sensor) {
  for (const auto& [name, c] : temps)
    if (match(name) && (!*out || c > **out)) *out = c, *sensor = name;
}

void ReadSpbm(const HwmonDevice& d, PowerReading& r) {
  r.spbm = true;
  bool ewma_layout = false;
  for (const auto& c : d.channels) ewma_layout |= c.kind == "power" && StartsWith(c.label, "ewma_");
  r.spbm_layout = ewma_layout ? "ewma" : "cap";
  for (const auto& c : d.channels) {
    if (c.kind == "power") {
      double w = static_cast<double>(c.input) / kMicro;
      if (StartsWith(c.label, "ewma_") && IsLimiter(c.label.substr(5))) {
        r.ewma_w[c.label.substr(5)] = w;
      } else if (IsLimiter(c.label)) {
        if (c.cap) r.caps_w[c.label] = static_cast<double>(*c.cap) / kMicro;
        if (ewma_layout) {
          if (!c.cap) r.caps_w[c.label] = w;  // v0.3.0: the channel is the limit itself
        } else {
          r.ewma_w[c.label] = w;               // original driver: the EWMA, its cap beside it
        }
      } else if (StartsWith(c.label, "budget_")) {
        r.budgets_w[c.label.substr(7)] = w;
      } else {
        r.rails_w[c.label] = w;
      }
    } else if (c.kind == "energy") {
      if (c.input >= 0) r.energy_uj[c.label] = static_cast<uint64_t>(c.input);
    } else if (c.kind == "temp" && c.label != "tj_max_c") {  // tj_max_c is headroom, not a temperature
      r.temps_c[c.label] = static_cast<double>(c.input) / 1000.0;
    }
  }
  if (auto it = d.attrs.find("prochot"); it != d.attrs.end()) r.prochot = it->second;
  if (auto it = d.attrs.find("pl_level"); it != d.attrs.end()) r.pl_level = it->second;
}

}  // namespace

const std::vector<std::string>& PowerLimiters() {
  static const std::vector<std::string> v = {"pl1", "pl2", "syspl1", "syspl2"};
  return v;
}

std::optional<double> PowerReading::Rail(const std::string& label) const {
  auto it = rails_w.find(label);
  return it == rails_w.end() ? std::nullopt : std::optional<double>(it->second);
}
std::optional<double> PowerReading::Ewma(const std::string& l) const {
  auto it = ewma_w.find(l);
  return it == ewma_w.end() ? std::nullopt : std::optional<double>(it->second);
}
std::optional<double> PowerReading::Cap(const std::string& l) const {
  auto it = caps_w.find(l);
  return it == caps_w.end() ? std::nullopt : std::optional<double>(it->second);
}
std::optional<double> PowerReading::SocPkgW() const {
  if (auto it = avg_w.find("pkg"); it != avg_w.end()) return it->second;
  return Rail("soc_pkg");
}
std::optional<double> PowerReading::CpuW() const {
  auto a = avg_w.find("cpu_p"), b = avg_w.find("cpu_e");
  if (a != avg_w.end() && b != avg_w.end()) return a->second + b->second;
  auto p = Rail("cpu_p"), e = Rail("cpu_e");
  if (p && e) return *p + *e;
  return std::nullopt;
}
bool PowerReading::empty() const { return !spbm && temps_c.empty() && !prochot && !pl_level; }

PowerReading InterpretPower(const std::vector<HwmonDevice>& devices, const std::vector<ThermalZone>& zones,
                            const std::map<std::string, int64_t>& acpi_attrs) {
  PowerReading r;
  const HwmonDevice* spbm = nullptr;
  for (const auto& d : devices)
    if (d.name == kSpbmName && !spbm) spbm = &d;
  if (spbm) ReadSpbm(*spbm, r);
  if (spbm || !acpi_attrs.empty()) {  // the ACPI device directory: sparkview's layout
    if (auto it = acpi_attrs.find("prochot"); !r.prochot && it != acpi_attrs.end()) r.prochot = it->second;
    if (auto it = acpi_attrs.find("pl_level"); !r.pl_level && it != acpi_attrs.end()) r.pl_level = it->second;
  }
  if (spbm) {
    Hottest(
        r.temps_c, [](const std::string& n) { return StartsWith(n, "cpu_"); }, &r.cpu_temp_c, &r.cpu_temp_sensor);
    if (auto it = r.temps_c.find("soc"); it != r.temps_c.end()) r.soc_temp_c = it->second, r.soc_temp_sensor = "soc";
  }
  // Generic sources: every other hwmon temperature and every thermal zone.
  std::map<std::string, double> generic;
  auto put = [&](std::string name, double c) {
    if (r.temps_c.count(name) || generic.count(name)) {
      for (int i = 2;; ++i)
        if (!r.temps_c.count(name + "#" + std::to_string(i)) && !generic.count(name + "#" + std::to_string(i))) {
          name += "#" + std::to_string(i);
          break;
        }
    }
    generic[name] = c;
  };
  for (const auto& d : devices) {
    if (&d == spbm) continue;
    for (const auto& c : d.channels) {
      if (c.kind != "temp") continue;
      double t = static_cast<double>(c.input) / 1000.0;
      if (t < -273 || t > 1000) continue;
      put((d.name.empty() ? "hwmon" : d.name) + "_" + c.label, t);
    }
  }
  for (const auto& z : zones) put("zone" + std::to_string(z.index) + "_" + z.type, z.temp_c);
  // CPU: sensors named cpu (cpu-thermal zones, "CPU" labels), x86 coretemp/k10temp packages.
  auto cpu_like = [](const std::string& n) {
    return Contains(n, "cpu") || StartsWith(n, "coretemp_") || StartsWith(n, "k10temp_");
  };
  auto soc_like = [](const std::string& n) { return Contains(n, "soc"); };
  if (!r.cpu_temp_c) Hottest(generic, cpu_like, &r.cpu_temp_c, &r.cpu_temp_sensor);
  if (!r.soc_temp_c) Hottest(generic, soc_like, &r.soc_temp_c, &r.soc_temp_sensor);
  r.temps_c.insert(generic.begin(), generic.end());
  return r;
}

PowerReading ReadPowerReading(const HostFs& fs) {
  static const std::vector<std::string> kAttrs = {"prochot", "pl_level"};
  std::vector<HwmonDevice> devs;
  if (auto d = ReadHwmonDevices(fs, kAttrs)) devs = std::move(*d);
  std::map<std::string, int64_t> acpi;
  for (const auto& d : devs) {
    if (d.name != kSpbmName) continue;
    if (d.attrs.count("prochot") && d.attrs.count("pl_level")) break;
    // The hwmon's parent device (its `device` link), then the ACPI device by its fixed name.
    for (const std::string& dir : {d.dir + "/device", std::string(kSpbmAcpiDir)}) {
      HwmonDevice a = ReadHwmonDir(fs, dir, kAttrs);
      for (const auto& [k, v] : a.attrs) acpi.emplace(k, v);
    }
    break;
  }
  return InterpretPower(devs, ReadThermalZones(fs), acpi);
}

std::optional<uint64_t> EnergyDeltaUj(uint64_t prev_uj, uint64_t cur_uj, double dt_s, double max_w) {
  if (cur_uj >= prev_uj) return cur_uj - prev_uj;
  if (prev_uj >= kEnergyWrapUj || !(dt_s > 0)) return std::nullopt;
  uint64_t wrapped = kEnergyWrapUj - prev_uj + cur_uj;
  if (static_cast<double>(wrapped) > max_w * dt_s * kMicro) return std::nullopt;  // a reset
  return wrapped;
}

void EnergyRates::Update(PowerReading& r, double t_s) {
  std::map<std::string, std::pair<uint64_t, double>> next;
  for (const auto& [rail, uj] : r.energy_uj) {
    auto it = prev_.find(rail);
    if (it != prev_.end() && uj == it->second.first) {
      next[rail] = it->second;  // not advanced since: the firmware has not updated it (~100 ms, mJ steps)
      continue;
    }
    if (it != prev_.end()) {
      double dt = t_s - it->second.second;
      if (dt > 0)
        if (auto d = EnergyDeltaUj(it->second.first, uj, dt)) r.avg_w[rail] = static_cast<double>(*d) / kMicro / dt;
    }
    next[rail] = {uj, t_s};
  }
  prev_ = std::move(next);
}

}  // namespace sparkops
