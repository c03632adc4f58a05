#include "analysis/guard_summary.h"

#include <fmt/format.h>

#include "analysis/attempts.h"
#include "base/timefmt.h"

namespace sparkops {

namespace {

std::optional<double> GiB(const RunEvent& e, const char* key) {
  auto it = e.record.find(key);
  if (it == e.record.end() || !it->is_number()) return std::nullopt;
  return it->get<double>() / (1024.0 * 1024 * 1024);
}

}  // namespace

std::optional<std::string> DescribeGuard(const std::vector<RunEvent>& events) {
  const RunEvent* stop = nullptr;
  bool killed = false, lost = false;
  int flushes = 0;
  for (const RunEvent& e : events)
    if (e.type == "supervisor_lost") lost = true;
  for (const RunEvent& e : LastAttemptEvents(events)) {  // an earlier attempt's stop is in the attempts
    if (e.type != "memory_guard") continue;
    std::string a = e.Str("action");
    if (a == "flush") ++flushes;
    if (a == "terminate" && !stop) stop = &e;
    if (a == "kill") killed = true, stop = stop ? stop : &e;
  }
  std::string out;
  if (stop) {
    std::string why;
    auto avail = GiB(*stop, "mem_available_bytes"), floor = GiB(*stop, "min_available_bytes");
    if (stop->Str("reason") == "kernel_nvrm_no_memory") {  // issue 33
      why = "the driver logged NVRM NV_ERR_NO_MEMORY (" + stop->Str("kernel_line").substr(0, 200) + ")";
    } else if (stop->Str("reason") == "fragmentation") {  // issue 33
      why = "no free 2 MiB block for the driver while the job grew (" + stop->Str("buddyinfo").substr(0, 400) + ")";
    } else if (stop->Str("reason") == "pressure") {
      auto psi = stop->record.find("psi_full_avg10");
      why = psi != stop->record.end() && psi->is_number()
                ? fmt::format("memory pressure (PSI full avg10 {:.1f}%) lasted the whole window", psi->get<double>())
                : "memory pressure lasted the whole window";
    } else if (avail && floor) {
      why = fmt::format("MemAvailable {:.1f} GiB under the {:.1f} GiB floor", *avail, *floor);
    } else {
      why = "MemAvailable under the floor";
    }
    out = fmt::format("the memory guard stopped the job ({}): {}",
                      killed ? "SIGTERM, then SIGKILL after the grace" : "SIGTERM", why);
    std::string held;
    if (auto rss = GiB(*stop, "job_rss_bytes")) held = fmt::format("{:.1f} GiB resident", *rss);
    if (auto gpu = GiB(*stop, "job_gpu_bytes"))
      held += fmt::format("{}{:.1f} GiB of GPU memory", held.empty() ? "" : " + ", *gpu);
    if (!held.empty()) out += "; the job held " + held;
  }
  if (flushes > 0)
    out += fmt::format("{}the guard flushed the page cache {} time{}", out.empty() ? "" : "; ", flushes,
                       flushes == 1 ? "" : "s");
  if (lost)
    out += std::string(out.empty() ? "" : "; ") +
           "sparkops run itself was killed; its sentinel stopped the job (SIGTERM, SIGKILL after the grace)";
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<SentinelEnd> DescribeSupervisorLost(const std::vector<RunEvent>& events) {
  std::optional<SentinelEnd> out;
  for (const RunEvent& e : events) {
    if (e.type != "supervisor_lost") continue;
    std::string stage = e.Str("stage");
    if (stage == "terminate" && !out) {
      out.emplace();
      out->lost_ms = e.t_ms;
      auto g = e.record.find("grace_s");
      if (g != e.record.end() && g->is_number()) out->grace_s = g->get<double>();
    } else if (out && stage == "kill" && !out->kill_ms) {
      out->kill_ms = e.t_ms;
    } else if (out && stage == "done" && !out->done_ms) {
      out->done_ms = e.t_ms;
    }
  }
  if (!out) return out;
  auto at = [](int64_t ms) { return FormatUtcMillis(FromUnixMillis(ms)); };
  std::string grace = out->grace_s ? fmt::format("the {:g} s grace", *out->grace_s) : "the grace";
  std::string d = fmt::format(
      "sparkops run itself was killed (no exit record); its sentinel stopped the job: SIGTERM to its process group at "
      "{}",
      at(out->lost_ms));
  if (out->kill_ms) d += fmt::format(", SIGKILL after {} at {}", grace, at(*out->kill_ms));
  if (out->done_ms)
    d += fmt::format(
        "; the job was gone at {} ({}; its exit status is not recorded: only run, its parent, could read it)",
        at(*out->done_ms), out->kill_ms ? "killed" : "it ended within " + grace);
  else d += "; the sentinel has not recorded the job's end (it may still be stopping, or the sentinel was killed too)";
  out->detail = std::move(d);
  return out;
}

std::string GuardMarkerLabel(const RunEvent& e) {
  if (e.type == "supervisor_lost") return e.Str("stage") == "terminate" ? "run killed: job stopped" : "";
  if (e.type != "memory_guard") return "";
  std::string a = e.Str("action");
  auto avail = GiB(e, "mem_available_bytes");
  std::string at = avail ? fmt::format(" at {:.1f} GiB free", *avail) : "";
  if (a == "flush") return "guard: flush" + at;
  if (a == "kill") return "guard: SIGKILL";
  if (a == "terminate") return "guard: SIGTERM" + at;
  return "";
}

}  // namespace sparkops
