#include "memory/calibrate.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_parse.h"

namespace sparkops::memory {
namespace {

using nlohmann::json;
constexpr double kGiBd = 1024.0 * 1024 * 1024;
constexpr size_t kMaxFile = 4u << 20;

Result<double> Number(const json& j, const char* key, const std::string& file, bool gib) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number())
    return InputError(fmt::format("{}: field '{}' missing or not a number", file, key));
  const double v = it->get<double>() * (gib ? kGiBd : 1);
  if (!std::isfinite(v) || v < 0 || v > 1e15) return InputError(fmt::format("{}: field '{}' out of range", file, key));
  return v;
}

Result<std::string> ReadBounded(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InputError(fmt::format("{}: cannot be read", path));
  std::string s(kMaxFile + 1, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));
  if (s.size() > kMaxFile) return InputError(fmt::format("{}: larger than 4 MiB", path));
  return s;
}

}  // namespace

Result<Calibration> ParseCalibration(std::string_view plan_text, std::string_view peak_text, const std::string& dir) {
  const std::string plan_file = dir + "/plan.json", peak_file = dir + "/peak.json";
  json plan = ParseJsonOrDiscarded(plan_text), peak = ParseJsonOrDiscarded(peak_text);
  if (plan.is_discarded() || !plan.is_object()) return InputError(fmt::format("{}: not a JSON object", plan_file));
  if (peak.is_discarded() || !peak.is_object()) return InputError(fmt::format("{}: not a JSON object", peak_file));
  Calibration c;
  c.dir = dir;
  c.model = plan.value("model", "");
  if (auto o = plan.find("options"); o != plan.end() && o->is_object()) c.method = o->value("method", "");
  auto pp = Number(plan, "process_peak_gib", plan_file, true);
  if (!pp) return std::unexpected(pp.error());
  c.predicted = c.predicted_low = c.predicted_high = *pp;
  if (auto r = plan.find("range"); r != plan.end() && r->is_object() && r->contains("process_peak_gib")) {
    const json& pr = (*r)["process_peak_gib"];
    auto lo = Number(pr, "low", plan_file, true), hi = Number(pr, "high", plan_file, true);
    if (!lo) return std::unexpected(lo.error());
    if (!hi) return std::unexpected(hi.error());
    c.predicted_low = *lo;
    c.predicted_high = *hi;
  }
  const json comps = plan.value("components", json::object());
  for (auto [key, dst] :
       {std::pair{"activations_gib", &c.activations}, {"logits_gib", &c.logits}, {"weights_gib", &c.weights}}) {
    auto v = Number(comps, key, plan_file + " components", true);
    if (!v) return std::unexpected(v.error());
    *dst = *v;
  }
  // The job cgroup's peak comes before the RSS sum (every descendant, shared pages once, page cache
  // it caused) but after the pool-wide figures: on a GB10 it leaves out the driver's GPU allocations.
  std::string cgroup_what = "job cgroup (memory.peak)";
  if (auto src = peak.find("cgroup_memory_peak_source"); src != peak.end() && *src == "memory.current")
    cgroup_what = "job cgroup (largest memory.current sampled)";
  for (auto [key, what] : {std::pair{"pool_drop_peak_bytes", std::string("pool drop (MemAvailable)")},
                           {"gpu_process_peak_bytes", std::string("GPU per-process")},
                           {"cgroup_memory_peak_bytes", cgroup_what},
                           {"process_rss_peak_bytes", std::string("process RSS")}}) {
    auto it = peak.find(key);
    if (it == peak.end() || it->is_null()) continue;
    auto v = Number(peak, key, peak_file, false);
    if (!v) return std::unexpected(v.error());
    c.measured = *v;
    c.measured_what = what;
    return c;
  }
  return InputError(
      fmt::format("{}: no measured peak (pool_drop_peak_bytes, gpu_process_peak_bytes, cgroup_memory_peak_bytes or "
                  "process_rss_peak_bytes)",
                  peak_file));
}

Result<Calibration> ReadCalibration(const std::string& dir) {
  auto plan = ReadBounded(dir + "/plan.json");
  if (!plan) return std::unexpected(plan.error());
  auto peak = ReadBounded(dir + "/peak.json");
  if (!peak) return std::unexpected(peak.error());
  return ParseCalibration(*plan, *peak, dir);
}

}  // namespace sparkops::memory
