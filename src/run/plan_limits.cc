#include "run/plan_limits.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/json_parse.h"

namespace sparkops {

namespace {

constexpr double kGiBd = 1024.0 * 1024 * 1024;
constexpr uint64_t kPage = 4096;

/// A positive finite number of GiB at `j[key]` in bytes, else nullopt.
std::optional<double> Gib(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v <= 0 || v > 1e6) return std::nullopt;
  return v * kGiBd;
}

}  // namespace

Result<PlanLimits> LimitsFromPlan(std::string_view plan_json, std::optional<uint64_t> mem_total) {
  const nlohmann::json plan = ParseJsonOrDiscarded(plan_json);
  if (plan.is_discarded() || !plan.is_object()) return InputError("plan.json: not a JSON object");
  std::optional<double> high = Gib(plan, "verdict_peak_gib");
  if (!high) {
    auto r = plan.find("range");
    if (r != plan.end() && r->is_object() && r->contains("process_peak_gib"))
      high = Gib((*r)["process_peak_gib"], "high");
  }
  if (!high) high = Gib(plan, "process_peak_gib");
  if (!high)
    return InputError("plan.json: no positive peak (verdict_peak_gib, range.process_peak_gib.high, process_peak_gib)");
  PlanLimits l;
  l.high = static_cast<uint64_t>(*high) / kPage * kPage;
  const auto margin = std::max(static_cast<uint64_t>(*high * kLimitMarginShare), kLimitMarginMin);
  l.max = (l.high + margin) / kPage * kPage;
  if (mem_total && *mem_total > 0 && l.max > *mem_total) {
    l.capped = true;
    l.max = *mem_total / kPage * kPage;
    l.high = std::min(l.high, l.max);
  }
  return l;
}

Result<void> WriteMemoryLimits(const std::string& dir, std::optional<uint64_t> high, std::optional<uint64_t> max) {
  // memory.high first: reclaim and throttling start below the hard limit.
  for (auto [name, v] : {std::pair{"memory.high", high}, std::pair{"memory.max", max}}) {
    if (!v) continue;
    const std::string path = dir + "/" + name;
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
      return IoError("cannot write " + path + ": " + std::strerror(errno) +
                     (errno == ENOENT ? " (the memory controller is not enabled for this cgroup)" : ""));
    const std::string text = std::to_string(*v) + "\n";
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int err = errno;
    ::close(fd);
    if (!ok) return IoError("cannot write " + path + ": " + std::strerror(err));
  }
  return {};
}

}  // namespace sparkops
