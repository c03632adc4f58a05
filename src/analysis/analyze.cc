#include "analysis/analyze.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <future>

#include "analysis/crash_evidence.h"
#include "analysis/driver_memory.h"
#include "analysis/guard_summary.h"
#include "host/bootid.h"

namespace sparkops {

namespace {
bool IsFile(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// ", after `sparkops run` forwarded <signal> to it at <time>" when events.jsonl records one.
std::string ForwardedSignal(const std::vector<RunEvent>& events) {
  for (const RunEvent& e : events)
    if (e.type == "signal")
      return fmt::format(", after `sparkops run` forwarded {} to it at {}",
                         e.Str("signal").empty() ? "a signal" : e.Str("signal"),
                         FormatUtcMillis(FromUnixMillis(e.t_ms)));
  return "";
}

void CheckEnd(AnalysisResult& r, const HostFs& fs) {
  if (r.in.dir.empty()) return;
  r.end.cause_evidence = DriverMemoryEndEvidence(r.events);  // issue 33
  if (!r.end.cause_evidence.empty()) r.end.cause = "driver_memory_error";
  else if (r.end.cause_evidence = FragmentationEndEvidence(r.events); !r.end.cause_evidence.empty())
    r.end.cause = "fragmentation";
  for (const RunEvent& e : r.events) {
    if (e.type != "exit") continue;
    r.end.status = "exit";
    std::string code = e.Str("code"), sig = e.Str("signal");
    r.end.detail = !sig.empty() ? "the job was killed by signal " + sig
                                : "the job exited with status " + (code.empty() ? "?" : code);
    if (auto g = DescribeGuard(r.events)) r.end.detail += "; " + *g;
    r.end.detail += ForwardedSignal(r.events);
    return;
  }
  if (auto lost = DescribeSupervisorLost(r.events)) {  // issue 30: run killed, the sentinel's records
    r.end.status = "supervisor_lost";
    r.end.detail = lost->detail;
    r.end.sentinel = std::move(lost);
    return;
  }
  if (!r.meta || r.meta->boot_id.empty()) {
    r.end.detail = "no exit record, and meta.json has no boot_id: cannot tell how the run ended";
    return;
  }
  auto now = ReadBootId(fs);
  if (!now) {
    r.end.detail = "no exit record; the current boot id is unreadable (" + now.error().message + ")";
    return;
  }
  if (*now == r.meta->boot_id) {
    r.end.status = "no_exit_record";
    r.end.detail =
        "no exit record and the machine has not rebooted since: the run is still going, or sparkops was stopped before "
        "it could record the exit" +
        ForwardedSignal(r.events);
    return;
  }
  r.end.status = "reboot";
  r.end.detail = fmt::format(
      "no exit record and the boot id changed ({} at start, {} now): the machine rebooted or lost power during the run "
      "(G4: boxes reboot under sustained load)",
      r.meta->boot_id.substr(0, 8), now->substr(0, 8));
  if (r.thermal) {
    const auto& rows = r.thermal->rows;
    size_t from = rows.size() > 3 ? rows.size() - 3 : 0;
    r.end.last_samples.assign(rows.begin() + static_cast<long>(from), rows.end());
  }
  r.end.kernel_lines = CrashKernelLines(fs, r.events, r.meta->boot_id);  // issue 33: what the frozen boot left
}
}  // namespace

Result<AnalyzeInputs> RunDirInputs(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return InputError(dir + ": not a directory");
  AnalyzeInputs in;
  in.dir = dir;
  in.log = dir + "/train.log";
  if (!IsFile(in.log)) return InputError(dir + ": no train.log (not a run directory written by `sparkops run`)");
  if (IsFile(dir + "/thermal.csv")) in.thermal = dir + "/thermal.csv";
  if (IsFile(dir + "/events.jsonl")) in.events = dir + "/events.jsonl";
  if (IsFile(dir + "/meta.json")) in.meta = dir + "/meta.json";
  return in;
}

Result<AnalysisResult> Analyze(const AnalyzeInputs& in, const LocalZone& zone, const HostFs& fs) {
  AnalysisResult r;
  r.in = in;
  r.zone = zone.name().empty() ? "local" : zone.name();
  // The thermal CSV is read on its own thread while the log is parsed (with its own copy of
  // the zone, whose offset cache is not shared between threads): it is the serial part after.
  std::future<Result<ThermalSeries>> thermal;
  if (!in.thermal.empty())
    thermal = std::async(std::launch::async, [path = in.thermal, z = zone] { return ReadThermalCsv(path, z); });
  auto series = ReadStepLog(in.log, zone, {}, in.step_format ? &*in.step_format : nullptr);
  if (!series) return std::unexpected(series.error());
  r.series = std::move(*series);
  if (thermal.valid()) {
    auto t = thermal.get();
    if (!t) return std::unexpected(t.error());
    r.thermal = std::move(*t);
  }
  if (!in.events.empty()) {
    auto text = ReadLocalFile(in.events, 256u << 20);
    if (!text) return std::unexpected(text.error());
    auto ev = ParseEventsJsonl(*text, in.events);
    if (!ev) return std::unexpected(ev.error());
    r.events = std::move(*ev);
  }
  if (!in.meta.empty()) {
    auto text = ReadLocalFile(in.meta, 1u << 20);
    if (!text) return std::unexpected(text.error());
    auto m = ParseRunMeta(*text, in.meta);
    if (!m) return std::unexpected(m.error());
    r.meta = std::move(*m);
  }
  const auto& pts = r.series.points;
  DetectOptions opt;
  opt.cost_is_seconds = !r.series.cost_is_inverse_throughput;
  r.detection = DetectSlowdowns(pts, opt);
  if (const Detection& d = r.detection; d.baseline_moved)  // issue 30: a slow start is not the baseline
    r.warnings.push_back(fmt::format(
        "the steps right after warm-up ({}–{}) are bimodal: {} of them sit in a stretch at ≥ {:g}× the run's fastest "
        "sustained level; the baseline is that fastest window (steps {}–{}) instead, and the slow stretch is judged "
        "like any other",
        pts[d.early_first].step, pts[d.early_last].step, d.early_slow, opt.ratio, pts[d.base_first].step,
        pts[d.base_last].step));
  for (const Slowdown& s : r.detection.slowdowns) {
    SlowdownEvent e;
    e.s = s;
    e.start_step = pts[s.first].step;
    e.end_step = pts[s.last].step;
    // The slowdown began after the previous point: its span starts there.
    e.t0 = s.first > 0 ? pts[s.first - 1].t_ms : pts[s.first].t_ms;
    e.t1 = pts[s.last].t_ms;
    if (e.t0 != kNoTime && e.t1 != kNoTime) {
      e.cls = Classify(r.thermal ? &*r.thermal : nullptr, r.events, e.t0, e.t1);
    } else {
      e.cls.ruled_out.push_back(
          "all causes: not checked — the log has no timestamps to line up with telemetry "
          "(run the job under `sparkops run`, which stamps every line)");
    }
    r.slowdowns.push_back(std::move(e));
  }
  // Telemetry that never overlaps the log is almost always a zone mistake (zone-less nvidia-smi).
  if (r.thermal && !r.thermal->rows.empty() && !pts.empty() && r.series.has_times()) {
    auto timed = [](const StepPoint& p) { return p.t_ms != kNoTime; };
    auto first = std::find_if(pts.begin(), pts.end(), timed);
    auto last = std::find_if(pts.rbegin(), pts.rend(), timed);
    int64_t a = first == pts.end() ? kNoTime : first->t_ms, b = last == pts.rend() ? kNoTime : last->t_ms;
    int64_t ta = r.thermal->rows.front().t_ms, tb = r.thermal->rows.back().t_ms;
    if (a != kNoTime && (tb < a || ta > b))
      r.warnings.push_back(
          fmt::format("the thermal samples ({} – {}) do not overlap the log ({} – {}): if the CSV has zone-less times "
                      "(nvidia-smi), give their zone with --tz",
                      FormatUtcMillis(FromUnixMillis(ta)), FormatUtcMillis(FromUnixMillis(tb)),
                      FormatUtcMillis(FromUnixMillis(a)), FormatUtcMillis(FromUnixMillis(b))));
  }
  if (r.thermal) r.energy = EnergyOfRun(*r.thermal, r.series);
  if (r.energy)  // issue 37: each slowdown's energy, in the run's scope
    for (SlowdownEvent& e : r.slowdowns)
      e.energy = EnergyOfSlowdown(*r.thermal, r.series, r.detection, e.s, r.energy->system.has_value());
  r.attempts = ReadAttempts(r.events, r.series);
  CheckEnd(r, fs);
  return r;
}

std::string AnalysisResult::Verdict() const {
  std::string v;
  if (series.points.empty()) v = "No training steps recognised in the log.";
  else if (!detection.ran) v = "Too few steps to judge step time (" + detection.note + ").";
  else {
    // The headline is the episode that cost the most time, not the first (issue #24), and never a
    // blip (issue 30): blips are counted after it.
    const size_t blips = static_cast<size_t>(
        std::count_if(slowdowns.begin(), slowdowns.end(), [](const SlowdownEvent& e) { return e.s.blip; }));
    const size_t real = slowdowns.size() - blips;
    const size_t top = detection.Largest();
    if (real == 0 || top >= slowdowns.size()) {
      v = fmt::format("Steady: no sustained slowdown over {} steps.", series.points.size());
    } else {
      const auto& s = slowdowns[top];
      v = fmt::format("{} slowdown{}: step time {:.2f}× from step {} — cause: {}.", real, real > 1 ? "s" : "",
                      s.s.ratio, s.start_step, s.cls.cause);
      if (real > 1)
        v.insert(v.size() - 1, series.cost_is_inverse_throughput
                                   ? " (the largest)"
                                   : fmt::format(" (the largest: ~{:.0f} s lost)", s.s.lost));
    }
    if (blips > 0)
      v.insert(v.size() - 1,
               fmt::format("; {} short blip{} besides (under {:g} s, under {:g} % of the run's time lost)", blips,
                           blips > 1 ? "s" : "", DetectOptions{}.blip_seconds, 100 * DetectOptions{}.blip_share));
  }
  if (end.status == "reboot") v += " The run ended in a reboot or power-off.";
  if (end.status == "supervisor_lost")
    v += " The run's supervisor (sparkops run) was killed; its sentinel stopped the job.";
  if (end.cause == "driver_memory_error")
    v += " The driver ran out of memory (NVRM NV_ERR_NO_MEMORY): driver_memory_error.";
  if (end.cause == "fragmentation")
    v += " The guard stopped the job: no free 2 MiB block for the driver while it grew (fragmentation).";
  return v;
}

}  // namespace sparkops
