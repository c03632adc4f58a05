#include "run/live_slowdown.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "analysis/classify.h"
#include "analysis/run_dir.h"
#include "analysis/thermal.h"
#include "host/hostfs.h"

namespace sparkops {

namespace {
constexpr size_t kReadChunk = 4u << 20;  ///< bytes read at a time
constexpr size_t kMaxChunks = 16;        ///< per check at most (64 MiB; the rest at the next check)
}  // namespace

std::vector<size_t> NewEpisodes(const Detection& d, const std::vector<StepPoint>& points,
                                std::vector<ToldEpisode>* told) {
  std::vector<size_t> fresh;
  for (size_t i = 0; i < d.slowdowns.size(); ++i) {
    const Slowdown& s = d.slowdowns[i];
    if (s.first >= points.size() || s.last >= points.size()) continue;
    const int64_t a = points[s.first].step, b = points[s.last].step;
    bool seen = false;
    for (ToldEpisode& t : *told)
      if (a <= t.last_step && b >= t.first_step) {  // the same episode, grown (or moved a little)
        t.last_step = std::max(t.last_step, b);
        seen = true;
      }
    bool after_all = std::all_of(told->begin(), told->end(), [a](const ToldEpisode& t) { return a > t.last_step; });
    if (seen || !after_all) continue;
    told->push_back({a, b});
    fresh.push_back(i);
  }
  return fresh;
}

LiveSlowdown::LiveSlowdown(std::string log_path, std::string thermal_path, std::string events_path,
                           const LocalZone& zone, double every_s)
    : log_path_(std::move(log_path)),
      thermal_path_(std::move(thermal_path)),
      events_path_(std::move(events_path)),
      zone_(zone),
      every_s_(every_s),
      builder_(zone_) {}

void LiveSlowdown::ReadNew() {
  int fd = ::open(log_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::string buf(kReadChunk, '\0');
  for (size_t round = 0; round < kMaxChunks; ++round) {  // caught up, or at most kMaxChunks per check
    ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(offset_));
    if (n <= 0) break;
    std::string_view got(buf.data(), static_cast<size_t>(n));
    const size_t end = got.rfind('\n');
    if (end == std::string_view::npos) {  // no whole line yet; a line longer than a chunk is skipped
      if (got.size() == buf.size()) offset_ += got.size();
      break;
    }
    std::string_view whole = got.substr(0, end + 1);
    for (size_t start = 0; start < whole.size();) {
      const size_t nl = whole.find('\n', start);
      ForEachRecord(whole.substr(start, nl - start),
                    [&](std::string_view text, int64_t arrival) { builder_.Add(text, arrival); });
      start = nl + 1;
    }
    offset_ += end + 1;
    if (got.size() < buf.size()) break;
  }
  ::close(fd);
}

std::vector<nlohmann::ordered_json> LiveSlowdown::Check(double now_s) {
  if (last_check_ && now_s - *last_check_ < every_s_) return {};
  if (!last_check_) {  // the first call starts the clock: nothing to judge yet
    last_check_ = now_s;
    return {};
  }
  last_check_ = now_s;
  ReadNew();
  StepSeriesBuilder copy = builder_;  // Finish consumes; the points so far are kept for the next check
  const StepSeries series = copy.Finish();
  DetectOptions opt;
  opt.cost_is_seconds = !series.cost_is_inverse_throughput;
  const Detection d = DetectSlowdowns(series.points, opt);
  const std::vector<size_t> fresh = NewEpisodes(d, series.points, &told_);
  if (fresh.empty()) return {};
  std::optional<ThermalSeries> thermal;
  if (auto t = ReadThermalCsv(thermal_path_, zone_)) thermal = std::move(*t);
  std::vector<RunEvent> events;
  if (auto text = ReadLocalFile(events_path_, 64u << 20))
    if (auto ev = ParseEventsJsonl(*text, events_path_)) events = std::move(*ev);
  std::vector<nlohmann::ordered_json> out;
  const auto& pts = series.points;
  for (size_t i : fresh) {
    const Slowdown& s = d.slowdowns[i];
    nlohmann::ordered_json f = {{"start_step", pts[s.first].step}, {"ratio", s.ratio}};
    if (opt.cost_is_seconds) f["baseline_s"] = d.baseline, f["level_s"] = s.level;
    const int64_t t0 = s.first > 0 ? pts[s.first - 1].t_ms : pts[s.first].t_ms, t1 = pts[s.last].t_ms;
    if (t0 != kNoTime && t1 != kNoTime) {
      const Classification c = Classify(thermal ? &*thermal : nullptr, events, t0, t1);
      if (c.cause != "unknown") f["cause"] = c.cause;
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace sparkops
