#include "notify/notice.h"

#include <fmt/format.h>

#include "base/json_text.h"
#include "base/strings.h"

namespace sparkops {

namespace {

constexpr size_t kJobChars = 60, kLineChars = 160;

std::string Cut(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

std::string Str(const nlohmann::ordered_json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::optional<double> Num(const nlohmann::ordered_json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

double Gib(double bytes) { return bytes / (1024.0 * 1024 * 1024); }

/// The event name a record is told as, or "" when it is never told.
std::string EventOf(const nlohmann::ordered_json& r) {
  std::string type = Str(r, "type");
  if (type == "throttle") return Str(r, "state") == "start" ? "throttle_start" : "";
  if (type == "memory_guard") return Str(r, "action") == "flush" ? "" : type;  // a flush stops nothing
  // A request that reached no process yet is retried; told once it reached one.
  if (type == "checkpoint_requested") return r.contains("pids") && r["pids"].empty() ? "" : type;
  return type;
}

}  // namespace

const std::vector<NotifiedType>& NotifiedTypes() {
  static const std::vector<NotifiedType> kTypes = {
      {"exit", false, "the job ended (its code or signal; an OOM signature recorded before it is named)"},
      {"memory_guard", false,
       "the memory guard stopped (terminate) or killed the job or process, or found nothing it may stop; a flush is "
       "not told"},
      {"restart", false, "run --restart-on starts the job again (the attempt that ended, why, the wait)"},
      {"checkpoint_requested", false,
       "the pool fell under the checkpoint level (or pressure reached it): the job was asked to save"},
      {"checkpoint_saved", false, "the job saved its checkpoint (seconds since the request)"},
      {"slowdown", false, "the steps so far show a sustained slowdown (factor, first step, cause where named)"},
      {"kernel_nvrm_no_memory", false, "NVRM NV_ERR_NO_MEMORY in the kernel log: the precursor of a GB10 wedge"},
      {"kernel_xid", false, "an NVIDIA Xid in the kernel log"},
      {"kernel_oom_kill", false, "the kernel's OOM killer killed a process"},
      {"kernel_hung_task", false, "a task blocked for minutes"},
      {"kernel_lockup", false, "a CPU in a soft or hard lockup"},
      {"throttle_start", true, "the GPU's clocks started being held down (reasons named)"},
      {"prochot_on", true, "PROCHOT: the hardware brake fired"},
      {"thermal_signature", true, "GPU temperature climbing at flat power"},
  };
  return kTypes;
}

std::string NoticeText(std::string_view event, const nlohmann::ordered_json& r, const NoticeContext& ctx,
                       const std::string& oom) {
  const std::string who = ctx.host.empty() ? "sparkops" : ctx.host;
  const std::string job = "`" + Cut(ctx.job, kJobChars) + "`";
  // `sparkops guard` and `sample` watch the host, not one job: their notices name no job.
  const std::string during = ctx.job.empty() ? "" : " during " + job;
  if (event == "exit") {
    std::string how =
        r.contains("signal") ? "ended by signal " + Str(r, "signal") : "exited with code " + Str(r, "code");
    if (!oom.empty()) how += " (out of memory: " + oom + ")";
    return fmt::format("{}: {} {} - {}", who, job, how, ctx.run_dir);
  }
  if (event == "memory_guard") {
    const std::string action = Str(r, "action");
    const std::string what = action == "kill"              ? "killed"
                             : action == "would_terminate" ? "would stop (dry run)"
                             : action == "none"            ? "found nothing it may stop"
                                                           : "stopped";
    std::string whom;  // the host guard (no job): the process it chose
    if (action != "none")
      whom = ctx.job.empty() ? fmt::format(" pid {} ({})", Str(r, "pid"), Cut(Str(r, "name"), kJobChars)) : " " + job;
    std::string line = fmt::format("{}: the memory guard {}{}", who, what, whom);
    if (auto s = Str(r, "signal"); !s.empty()) line += " (" + s + ")";
    auto avail = Num(r, "mem_available_bytes"), floor = Num(r, "min_available_bytes");
    if (Str(r, "reason") == "kernel_nvrm_no_memory")  // issue 33: not a floor crossing
      line += ": the driver logged NVRM NV_ERR_NO_MEMORY (the host may wedge)";
    else if (Str(r, "reason") == "fragmentation")
      line += ctx.job.empty()
                  ? ": no free 2 MiB block for the driver while the host's memory use grew (the host may wedge)"
                  : ": no free 2 MiB block for the driver while the job grew (the host may wedge)";
    else if (Str(r, "reason") == "pressure" && Num(r, "psi_full_avg10"))
      line += fmt::format(": memory pressure, PSI full avg10 {:.1f}%", *Num(r, "psi_full_avg10"));
    else if (avail && floor)
      line += fmt::format(": MemAvailable {:.1f} GiB below the floor {:.1f} GiB", Gib(*avail), Gib(*floor));
    return line;
  }
  if (event == "restart") {
    const std::string why = Str(r, "reason") == "guard" ? "the memory guard stopped it" : "it crashed";
    const std::string how = r.contains("signal") ? "signal " + Str(r, "signal") : "exit " + Str(r, "code");
    auto wait = Num(r, "backoff_s");
    return fmt::format("{}: {} attempt {} ended ({}: {}); starting attempt {}{}", who, job, Str(r, "attempt"), why, how,
                       Str(r, "next_attempt"), wait ? fmt::format(" in {:g} s", *wait) : "");
  }
  if (event == "checkpoint_requested") {
    const bool pressure = Str(r, "trigger") == "pressure";
    std::string line =
        fmt::format("{}: {}: {} asked to checkpoint ({})", who,
                    pressure ? "memory pressure is high" : "the pool is running low", job, Str(r, "signal"));
    if (auto psi = Num(r, "psi_full_avg10"); pressure && psi) line += fmt::format(", PSI full avg10 {:.0f}%", *psi);
    if (auto avail = Num(r, "mem_available_bytes")) line += fmt::format(", MemAvailable {:.1f} GiB", Gib(*avail));
    return line;
  }
  if (event == "checkpoint_saved") {
    auto s = Num(r, "seconds");
    return fmt::format("{}: {} saved its checkpoint{}", who, job, s ? fmt::format(" in {:.1f} s", *s) : "");
  }
  if (event == "slowdown") {
    std::string line = fmt::format("{}: {} slowed down", who, job);
    if (auto x = Num(r, "ratio")) line += fmt::format(": step time {:.2f}x", *x);
    if (auto from = Num(r, "start_step")) line += fmt::format(" from step {:.0f}", *from);
    if (auto c = Str(r, "cause"); !c.empty()) line += " (cause: " + c + ")";
    return line;
  }
  if (event == "throttle_start") {
    std::string line = fmt::format("{}: GPU clocks throttled ({})", who, Str(r, "reasons"));
    if (auto t = Num(r, "gpu_temp_c")) line += fmt::format(", GPU {:.0f} C", *t);
    if (auto c = Num(r, "sm_clock_mhz")) line += fmt::format(", SM {:.0f} MHz", *c);
    return line + during;
  }
  if (event == "prochot_on") return fmt::format("{}: PROCHOT on: the hardware brake fired{}", who, during);
  if (event == "thermal_signature") return fmt::format("{}: GPU temperature climbing at flat power{}", who, during);
  if (StartsWith(event, "kernel_")) {
    std::string line = Str(r, "line");
    return fmt::format("{}: kernel log ({}): {}", who, event, line.empty() ? "no text" : Cut(line, kLineChars));
  }
  return fmt::format("{}: {}{}", who, event, during);
}

nlohmann::ordered_json NoticeJson(std::string_view event, const std::string& text, const nlohmann::ordered_json& r,
                                  const NoticeContext& ctx) {
  nlohmann::ordered_json j;
  j["schema"] = kNotifySchema;
  j["event"] = event;
  j["time"] = Str(r, "time");
  // `sparkops guard` and `sample` notices belong to no run: no run_dir and no job.
  if (!ctx.run_dir.empty()) j["run_dir"] = ctx.run_dir;
  if (!ctx.host.empty()) j["host"] = ctx.host;  // absent when unknown (a --root tree without one)
  if (!ctx.job.empty()) j["job"] = ctx.job;
  j["text"] = text;
  for (auto it = r.begin(); it != r.end(); ++it)
    if (it.key() != "type" && !j.contains(it.key())) j[it.key()] = it.value();
  return j;
}

std::optional<Notice> NoticeFilter::Select(const nlohmann::ordered_json& record,
                                           std::chrono::steady_clock::time_point now) {
  if (!record.is_object()) return std::nullopt;
  if (Str(record, "type") == "oom") oom_ = Str(record, "signature");
  const std::string event = EventOf(record);
  const NotifiedType* t = nullptr;
  for (const NotifiedType& n : NotifiedTypes())
    if (n.event == event) t = &n;
  if (!t) return std::nullopt;
  if (t->rate_limited) {
    auto it = last_.find(event);
    if (it != last_.end() && now - it->second < kRateLimit) return std::nullopt;
    last_[event] = now;
  }
  Notice n;
  n.event = event;
  n.text = NoticeText(event, record, ctx_, event == "exit" ? oom_ : "");
  n.body = JsonText(NoticeJson(event, n.text, record, ctx_), -1);
  return n;
}

}  // namespace sparkops
