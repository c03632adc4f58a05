#include "run/peak_recorder.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/localtime.h"
#include "base/json_text.h"
#include "base/strings.h"

namespace sparkops {

Result<std::string> PlanFromArgs(const std::string& plan_args, const PlanCommand& plan) {
  std::vector<std::string> args;
  for (auto a : Split(plan_args, ' '))
    if (!a.empty()) args.emplace_back(a);
  std::ostringstream out, err;
  const int rc = plan(args, out, err);
  if (rc != 0 && rc != 1) return InputError("--plan-args: " + std::string(Trim(err.str())));
  return out.str();
}

std::string RecordPeak(const HostView& ctx, RunRecorder& rec, const std::string& dir,
                       const std::optional<CgroupPeak>& cgroup) {
  auto zone = LocalZone::Make("UTC", ctx.fs);
  if (!zone) return "no UTC zone";
  auto series = ReadThermalCsv(dir + "/thermal.csv", *zone);
  if (!series) return "peak: " + series.error().message;
  const MeasuredPeaks p = PeaksFromThermal(*series);
  nlohmann::ordered_json j = {{"pool_drop_peak_bytes", OrNull(p.pool_drop)},
                              {"gpu_process_peak_bytes", OrNull(p.gpu_process)}};
  j["cgroup_memory_peak_bytes"] = cgroup ? nlohmann::ordered_json(cgroup->bytes) : nlohmann::ordered_json();
  j["cgroup_memory_peak_source"] = cgroup ? nlohmann::ordered_json(cgroup->source) : nlohmann::ordered_json();
  if (!rec.WriteFile("peak.json", JsonText(j) + "\n")) return "cannot write peak.json";
  return "";
}

}  // namespace sparkops
