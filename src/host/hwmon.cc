#include "host/hwmon.h"

#include <algorithm>
#include <charconv>

#include "base/strings.h"

namespace sparkops {
namespace {

constexpr size_t kMaxFileBytes = 4096;
constexpr size_t kMaxDevices = 64, kMaxFiles = 512, kMaxZones = 256;
constexpr size_t kMaxLabel = 64;

std::optional<int64_t> ParseIntText(std::string_view s) { return ParseInt(Trim(s)); }

/// "power12_input" -> {"power", 12, "input"}; false for other names.
bool SplitChannelFile(std::string_view f, std::string* kind, int* n, std::string* attr) {
  for (std::string_view k : {"power", "energy", "temp"}) {
    if (!StartsWith(f, k)) continue;
    std::string_view rest = f.substr(k.size());
    size_t us = rest.find('_');
    if (us == 0 || us == std::string_view::npos) return false;
    int v = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + us, v);
    if (ec != std::errc() || p != rest.data() + us || v < 0) return false;
    *kind = std::string(k), *n = v, *attr = std::string(rest.substr(us + 1));
    return true;
  }
  return false;
}

bool IsChannelAttr(std::string_view a) { return a == "input" || a == "label" || a == "cap"; }

}  // namespace

const HwmonChannel* HwmonDevice::Find(std::string_view kind, std::string_view label) const {
  for (const auto& c : channels)
    if (c.kind == kind && c.label == label) return &c;
  return nullptr;
}

HwmonDevice ParseHwmonFiles(const std::map<std::string, std::string>& files,
                            const std::vector<std::string>& extra_attrs) {
  HwmonDevice d;
  struct Raw {
    std::optional<int64_t> input, cap;
    std::optional<std::string> label;
  };
  std::map<std::pair<std::string, int>, Raw> raw;  // (kind, n) sorted
  for (const auto& [fname, text] : files) {
    if (fname == "name") {
      d.name = std::string(Trim(text));
      continue;
    }
    std::string kind, attr;
    int n = 0;
    if (SplitChannelFile(fname, &kind, &n, &attr) && IsChannelAttr(attr)) {
      Raw& r = raw[{kind, n}];
      if (attr == "label") {
        std::string l(Trim(text));
        if (l.size() > kMaxLabel) l.resize(kMaxLabel);
        r.label = l;
      } else {
        (attr == "input" ? r.input : r.cap) = ParseIntText(text);
      }
      continue;
    }
    if (std::find(extra_attrs.begin(), extra_attrs.end(), fname) != extra_attrs.end())
      if (auto v = ParseIntText(text)) d.attrs[fname] = *v;
  }
  for (const auto& [key, r] : raw) {
    if (!r.input) continue;
    std::string label = r.label && !r.label->empty() ? *r.label : key.first + std::to_string(key.second);
    d.channels.push_back({key.first, label, *r.input, key.first == "power" ? r.cap : std::nullopt});
  }
  return d;
}

HwmonDevice ReadHwmonDir(const HostFs& fs, const std::string& dir, const std::vector<std::string>& extra_attrs) {
  std::map<std::string, std::string> files;
  if (auto names = fs.List(dir)) {
    std::sort(names->begin(), names->end());
    for (const std::string& f : *names) {
      if (files.size() >= kMaxFiles) break;
      std::string kind, attr;
      int n = 0;
      bool wanted = f == "name" || (SplitChannelFile(f, &kind, &n, &attr) && IsChannelAttr(attr)) ||
                    std::find(extra_attrs.begin(), extra_attrs.end(), f) != extra_attrs.end();
      if (!wanted) continue;
      if (auto t = fs.Read(dir + "/" + f, kMaxFileBytes)) files[f] = std::move(*t);
    }
  }
  HwmonDevice d = ParseHwmonFiles(files, extra_attrs);
  d.dir = dir;
  return d;
}

Result<std::vector<HwmonDevice>> ReadHwmonDevices(const HostFs& fs, const std::vector<std::string>& extra_attrs) {
  auto names = fs.List("/sys/class/hwmon");
  if (!names) return std::unexpected(names.error());
  std::sort(names->begin(), names->end());
  std::vector<HwmonDevice> out;
  for (const std::string& n : *names) {
    if (!StartsWith(n, "hwmon")) continue;
    if (out.size() >= kMaxDevices) break;
    out.push_back(ReadHwmonDir(fs, "/sys/class/hwmon/" + n, extra_attrs));
  }
  return out;
}

std::optional<ThermalZone> ParseThermalZone(int index, std::string_view type, std::string_view temp) {
  auto mc = ParseIntText(temp);
  if (!mc || *mc < -273000 || *mc > 1000000) return std::nullopt;
  std::string t(Trim(type));
  if (t.size() > kMaxLabel) t.resize(kMaxLabel);
  return ThermalZone{index, t.empty() ? "zone" + std::to_string(index) : t, static_cast<double>(*mc) / 1000.0};
}

std::vector<ThermalZone> ReadThermalZones(const HostFs& fs) {
  std::vector<ThermalZone> out;
  auto names = fs.List("/sys/class/thermal");
  if (!names) return out;
  for (const std::string& n : *names) {
    if (!StartsWith(n, "thermal_zone") || out.size() >= kMaxZones) continue;
    auto idx = ParseInt(std::string_view(n).substr(12));
    if (!idx || *idx < 0 || *idx > 1'000'000) continue;
    std::string dir = "/sys/class/thermal/" + n;
    auto temp = fs.Read(dir + "/temp", kMaxFileBytes);
    if (!temp) continue;  // some zones refuse reads (EINVAL/ENODATA): no reading, no zone
    auto type = fs.Read(dir + "/type", kMaxFileBytes);
    if (auto z = ParseThermalZone(static_cast<int>(*idx), type ? *type : std::string(), *temp)) out.push_back(*z);
  }
  std::sort(out.begin(), out.end(), [](const ThermalZone& a, const ThermalZone& b) { return a.index < b.index; });
  return out;
}

}  // namespace sparkops
