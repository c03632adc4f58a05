#include "run/peak_recorder.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/localtime.h"
#include "base/json_text.h"
#include "base/strings.h"

namespace sparkops {
namespace {
constexpr double kGiBd = 1024.0 * 1024 * 1024;
}

MeasuredPeaks PeaksFromThermal(const ThermalSeries& s) {
  MeasuredPeaks p;
  std::optional<double> first, lowest, gpu;
  for (const auto& r : s.rows) {
    if (r.mem_available_gib) {
      if (!first) first = r.mem_available_gib;
      lowest = std::min(lowest.value_or(*r.mem_available_gib), *r.mem_available_gib);
    }
    if (r.gpu_attributed_gib) gpu = std::max(gpu.value_or(0.0), *r.gpu_attributed_gib);
  }
  int readings = 0;
  for (const auto& r : s.rows) readings += r.mem_available_gib ? 1 : 0;
  if (readings >= 2) p.pool_drop = std::max(0.0, *first - *lowest) * kGiBd;
  if (gpu) p.gpu_process = *gpu * kGiBd;
  return p;
}

Result<std::string> PlanFromArgs(const std::string& plan_args, const PlanCommand& plan) {
  std::vector<std::string> args;
  for (auto a : Split(plan_args, ' '))
    if (!a.empty()) args.emplace_back(a);
  std::ostringstream out, err;
  const int rc = plan(args, out, err);
  if (rc != 0 && rc != 1) return InputError("--plan-args: " + std::string(Trim(err.str())));
  return out.str();
}

std::string RecordPlanAndPeak(const HostView& ctx, RunRecorder& rec, const std::string& dir, const std::string& plan_args,
                              const PlanCommand& plan) {
  auto planned = PlanFromArgs(plan_args, plan);
  if (!planned) return planned.error().message;
  if (!rec.WriteFile("plan.json", *planned)) return "cannot write plan.json";
  auto zone = LocalZone::Make("UTC", ctx.fs);
  if (!zone) return "no UTC zone";
  auto series = ReadThermalCsv(dir + "/thermal.csv", *zone);
  if (!series) return "peak: " + series.error().message;
  const MeasuredPeaks p = PeaksFromThermal(*series);
  auto val = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::ordered_json j = {{"pool_drop_peak_bytes", val(p.pool_drop)}, {"gpu_process_peak_bytes", val(p.gpu_process)}};
  if (!rec.WriteFile("peak.json", JsonText(j) + "\n")) return "cannot write peak.json";
  return "";
}

}  // namespace sparkops
