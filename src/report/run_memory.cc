#include "report/run_memory.h"

#include <fmt/format.h>

#include <cmath>

#include "analysis/attempts.h"
#include "base/json_text.h"

namespace sparkops {

namespace {

constexpr double kGiBytes = 1024.0 * 1024 * 1024;

nlohmann::json Opt(const std::optional<double>& v) {
  return v ? nlohmann::json(std::round(*v * 1000) / 1000) : nlohmann::json();
}

/// The first memory_guard event that stopped the last attempt of the job (terminate, else kill), or
/// null: a run that went on after an earlier attempt's stop did not end in it.
const RunEvent* GuardStop(const std::vector<RunEvent>& events) {
  const RunEvent* kill = nullptr;
  for (const RunEvent& e : LastAttemptEvents(events)) {
    if (e.type != "memory_guard") continue;
    if (e.Str("action") == "terminate") return &e;
    if (e.Str("action") == "kill" && !kill) kill = &e;
  }
  return kill;
}

/// The OOM `run` recorded in events.jsonl (its `oom` event), when the log's tail holds no OOM text
/// (a SIGKILL with the pool empty leaves none).
OomSignature FromEvents(const std::vector<RunEvent>& events) {
  OomSignature sig;
  for (const RunEvent& e : events) {
    if (e.type != "oom") continue;
    for (OomKind k : {OomKind::kTorchCuda, OomKind::kCudaRuntime, OomKind::kNvrmNoMemory, OomKind::kKernelOomKiller,
                      OomKind::kKilled})
      if (e.Str("signature") == ToString(k)) sig.kind = k;
    for (OomPhase ph : {OomPhase::kLoad, OomPhase::kDequant, OomPhase::kStep})
      if (e.Str("phase") == ToString(ph)) sig.phase = ph;
    sig.line = e.Str("detail");
    if (sig.kind != OomKind::kNone) return sig;
  }
  return sig;
}

/// The job's own memory (issue 30): its cgroup's peak from the last `exit` record, else the
/// resident size the guard's stop recorded; the pool's fall also holds other processes'.
void JobOwnPeak(const std::vector<RunEvent>& events, const RunEvent* stop, RunMemory* m) {
  for (const RunEvent& e : LastAttemptEvents(events))
    if (e.type == "exit")
      if (auto it = e.record.find("cgroup_memory_peak_bytes"); it != e.record.end() && it->is_number()) {
        m->job_own_gib = it->get<double>() / kGiBytes;
        m->job_own_source = "its cgroup's " + e.Str("cgroup_memory_peak_source");
      }
  if (!m->job_own_gib && stop)
    if (auto it = stop->record.find("job_rss_bytes"); it != stop->record.end() && it->is_number()) {
      m->job_own_gib = it->get<double>() / kGiBytes;
      m->job_own_source = "resident when the guard stopped it";
    }
}

std::string Headline(const RunMemory& m) {
  std::string h =
      m.trigger == "oom"
          ? fmt::format("the job ran out of memory ({} during {})", ToString(m.oom.kind), ToString(m.oom.phase))
      : m.stop_reason == "kernel_nvrm_no_memory"
          ? "the memory guard stopped the job on the driver's NVRM NV_ERR_NO_MEMORY record"
      : m.stop_reason == "fragmentation" ? "the memory guard stopped the job: no free 2 MiB blocks while it grew"
                                         : "the memory guard stopped the job";
  if (m.pool_peak_gib && m.job_own_gib) {
    // the pool's fall is everyone's: the job's share from its own processes, the rest said apart
    const double own = *m.job_own_gib + m.gpu_peak_gib.value_or(0);
    h += fmt::format(
        "; the pool fell by {:.1f} GiB at its lowest (MemAvailable {:.1f} -> {:.1f} GiB), the job's own "
        "processes held {:.1f} GiB ({}{})",
        *m.pool_peak_gib, *m.start_available_gib, *m.lowest_available_gib, *m.job_own_gib, m.job_own_source,
        m.gpu_peak_gib ? " plus NVML's GPU figure" : "");
    if (*m.pool_peak_gib - own >= 0.25)
      h +=
          fmt::format(": {:.1f} GiB of the fall was other processes, the kernel or the driver", *m.pool_peak_gib - own);
  } else if (m.pool_peak_gib) {
    h += fmt::format("; it took {:.1f} GiB of the pool at its peak (MemAvailable {:.1f} -> {:.1f} GiB)",
                     *m.pool_peak_gib, *m.start_available_gib, *m.lowest_available_gib);
  } else {
    h += "; no memory samples with two MemAvailable readings: its peak is not known";
  }
  if (m.budget_gib)
    h += fmt::format(", against a budget of {:.1f} GiB (the plan predicted a {:.1f} GiB peak)", *m.budget_gib,
                     *m.planned_peak_gib);
  else if (m.start_available_gib)
    h += fmt::format(", of the {:.1f} GiB available when it started (no plan: give `run --plan-args` for a budget)",
                     *m.start_available_gib);
  if (m.gpu_peak_gib) h += fmt::format("; NVML attributed at most {:.1f} GiB of GPU memory to it", *m.gpu_peak_gib);
  if (m.guard_floor_gib) h += fmt::format("; the guard's floor was {:.1f} GiB", *m.guard_floor_gib);
  return h;
}

}  // namespace

std::optional<RunMemory> DescribeRunMemory(const AnalysisResult& r, const OomSignature& log_oom,
                                           const std::optional<memory::Plan>& plan) {
  const OomSignature oom = log_oom.kind != OomKind::kNone ? log_oom : FromEvents(r.events);
  const RunEvent* stop = GuardStop(r.events);
  if (oom.kind == OomKind::kNone && !stop) return std::nullopt;
  RunMemory m;
  m.trigger = oom.kind != OomKind::kNone ? "oom" : "memory_guard";
  m.oom = oom;
  memory::PageCacheReading cache;
  cache.when = "at the run's start";
  cache.judged_on_available = oom.kind == OomKind::kNone;  // the guard's stop
  if (r.thermal) {
    const MeasuredPeaks p = PeaksFromThermal(*r.thermal);
    if (p.pool_drop) {
      m.pool_peak_gib = *p.pool_drop / kGiBytes;
      m.start_available_gib = *p.first_available / kGiBytes;
      m.lowest_available_gib = *p.lowest_available / kGiBytes;
    }
    if (p.gpu_process) m.gpu_peak_gib = *p.gpu_process / kGiBytes;
    for (const ThermalRow& row : r.thermal->rows)
      if (row.page_cache_gib) {
        cache.gib = row.page_cache_gib;
        cache.free_gib = row.mem_free_gib;
        cache.available_gib = row.mem_available_gib;
        break;
      }
  }
  if (plan) {
    m.budget_gib = plan->budget.bytes / kGiBytes;
    m.planned_peak_gib = plan->high.peak() / kGiBytes;
  }
  if (stop)
    if (auto it = stop->record.find("min_available_bytes"); it != stop->record.end() && it->is_number())
      m.guard_floor_gib = it->get<double>() / kGiBytes;
  if (stop) m.stop_reason = stop->Str("reason");
  JobOwnPeak(r.events, stop, &m);
  std::optional<OomSignature> sig;
  if (oom.kind != OomKind::kNone) sig = oom;
  // issue 33: after the driver's no-memory record (the guard's stop, or records near the end) the host
  // may wedge: the advice is to save and stop, not to flush first.
  if (m.stop_reason == "kernel_nvrm_no_memory" || m.stop_reason == "fragmentation" ||
      r.end.cause == "driver_memory_error") {
    memory::DriverStopFacts f;
    f.kind = m.stop_reason == "fragmentation" && r.end.cause != "driver_memory_error"
                 ? memory::LadderKind::kFragmentation
                 : memory::LadderKind::kDriverNoMemory;
    f.lowest_available_gib = m.lowest_available_gib;
    f.floor_gib = m.guard_floor_gib;
    m.ladder = memory::BuildDriverErrorLadder(cache, f, plan);
  } else m.ladder = memory::BuildLadder(cache, plan, sig);
  m.headline = Headline(m);
  return m;
}

std::string RunMemoryText(const RunMemory& m) {
  std::string s = fmt::format("memory   {}\n", m.headline);
  if (m.ladder.kind != memory::LadderKind::kOom) {  // every step: the order is the advice
    for (const auto& step : m.ladder.steps)
      s += fmt::format("  {} {}. {}\n     {}\n", step.number == m.ladder.next ? "next:" : "     ", step.number,
                       step.title, step.detail);
    s += fmt::format("  why: {}\n", m.ladder.why_next);
    if (!m.plan_note.empty()) s += fmt::format("  note: {}\n", m.plan_note);
    return s;
  }
  for (const auto& step : m.ladder.steps)
    if (step.number == m.ladder.next)
      s += fmt::format("  next: OOM ladder step {}. {}\n     {}\n", step.number, step.title, step.detail);
  s += fmt::format("  why: {}\n", m.ladder.why_next);
  if (!m.plan_note.empty()) s += fmt::format("  note: {}\n", m.plan_note);
  return s;
}

nlohmann::json RunMemoryJson(const RunMemory& m) {
  nlohmann::json j = {{"trigger", m.trigger},
                      {"headline", m.headline},
                      {"advice", memory::ToString(m.ladder.kind)},
                      {"stop_reason", m.stop_reason.empty() ? nlohmann::json() : nlohmann::json(m.stop_reason)},
                      {"next_step", m.ladder.next},
                      {"why", m.ladder.why_next}};
  j["oom"] = m.trigger == "oom" ? OomSignatureJson(m.oom) : nlohmann::json();
  j["start_available_gib"] = Opt(m.start_available_gib);
  j["lowest_available_gib"] = Opt(m.lowest_available_gib);
  j["pool_peak_gib"] = Opt(m.pool_peak_gib);
  j["gpu_peak_gib"] = Opt(m.gpu_peak_gib);
  j["job_own_gib"] = Opt(m.job_own_gib);
  j["job_own_source"] = m.job_own_source.empty() ? nlohmann::json() : nlohmann::json(m.job_own_source);
  j["budget_gib"] = Opt(m.budget_gib);
  j["planned_peak_gib"] = Opt(m.planned_peak_gib);
  j["guard_floor_gib"] = Opt(m.guard_floor_gib);
  j["plan_note"] = m.plan_note.empty() ? nlohmann::json() : nlohmann::json(m.plan_note);
  j["steps"] = LadderStepsJson(m.ladder);
  return j;
}

nlohmann::json LadderStepsJson(const memory::Ladder& l) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : l.steps) steps.push_back({{"step", s.number}, {"title", s.title}, {"detail", s.detail}});
  return steps;
}

nlohmann::json OomSignatureJson(const OomSignature& s) {
  nlohmann::json j = {{"kind", ToString(s.kind)},
                      {"phase", ToString(s.phase)},
                      {"bitsandbytes", s.bitsandbytes},
                      {"line", s.line}};
  j["tried_gib"] = OrNull(s.tried_gib);
  j["total_gib"] = OrNull(s.total_gib);
  j["free_gib"] = OrNull(s.free_gib);
  j["process_in_use_gib"] = OrNull(s.process_in_use_gib);
  j["allocated_by_torch_gib"] = OrNull(s.allocated_by_torch_gib);
  j["reserved_unallocated_gib"] = OrNull(s.reserved_unallocated_gib);
  if (s.killed_pid) j["killed_pid"] = *s.killed_pid;
  if (s.killed_name) j["killed_name"] = *s.killed_name;
  return j;
}

}  // namespace sparkops
