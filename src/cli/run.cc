// sparkops run [--limit-from-plan] [--out DIR] [--interval S] [--grace S] [--notify URL] [--notify-cmd CMD]
//              [--restart-on guard,crash [--max-restarts N] [--restart-backoff S]] -- CMD ARGS...
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>

#include "analysis/analyze.h"
#include "analysis/oom_signature.h"
#include "base/json_text.h"
#include "base/strings.h"
#include "build_info.h"
#include "checks/check.h"
#include "cli/checkpoint_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/guard_flags.h"
#include "cli/notify_flags.h"
#include "cli/restart_flags.h"
#include "cli/run_memory.h"
#include "host/bootid.h"
#include "host/dropcaches.h"
#include "host/meminfo.h"
#include "memory/ladder.h"
#include "notify/notifier.h"
#include "report/analysis.h"
#include "report/html.h"
#include "run/peak_recorder.h"
#include "run/plan_limits.h"
#include "run/supervisor.h"
#include "telemetry/terminal_text.h"

namespace sparkops {

namespace {

/// MemAvailable this low (GiB) in the last samples, with a SIGKILL, reads as the kernel OOM killer.
constexpr double kNearZeroAvailableGib = 2.0;

std::string DefaultRunDir() {
  std::string ts = FormatUtcMillis(std::chrono::system_clock::now());
  for (char& c : ts)
    if (c == ':') c = '-';
  return "sparkops-runs/" + ts;
}

/// The OOM the job died of, from its output, else from SIGKILL with the pool nearly empty.
std::optional<OomSignature> FindOom(const SuperviseResult& r) {
  std::string tail;
  for (const auto& l : r.tail) tail += l + "\n";
  OomSignature sig = ParseOomSignature(tail);
  if (sig.kind != OomKind::kNone && sig.kind != OomKind::kKilled) return sig;
  if (r.term_signal == SIGKILL && !r.escalated) {
    for (const Sample& s : r.last_samples)
      if (s.mem && s.mem->available && ToGiB(*s.mem->available) < kNearZeroAvailableGib) {
        sig.kind = OomKind::kKilled;
        sig.line = fmt::format("SIGKILL with MemAvailable {:.1f} GiB in the last samples", ToGiB(*s.mem->available));
        return sig;
      }
  }
  if (r.status == 0) return std::nullopt;
  return sig.kind == OomKind::kNone ? std::nullopt : std::optional<OomSignature>(sig);
}

/// G6 before the start: warn (never block) about near-capacity or uncapped servers.
void WarnContention(Context& ctx) {
  HostFacts facts(ctx, PreflightOptions{});
  CheckResult g6 = CheckG6(facts);
  if (g6.status == CheckStatus::kWarn) {
    ctx.err << "sparkops run: warning: G6 " << g6.summary << "\n";
    if (!g6.fix.empty()) ctx.err << "  fix: " << g6.fix << "\n";
  }
}

/// --limit-from-plan: writes the levels into the job's cgroup, says once what holds and what does
/// not, and returns meta.json's `memory_limits`.
nlohmann::ordered_json ApplyLimits(Context& ctx, const JobHold& hold, const PlanLimits& l) {
  nlohmann::ordered_json j = {{"memory_high_bytes", l.high},
                              {"memory_max_bytes", l.max},
                              {"capped_at_memtotal", l.capped}};
  auto set = hold.mode() == JobHold::Mode::kCgroup
                 ? hold.SetLimits(l.high, l.max)
                 : Result<void>(IoError("the job is not in a cgroup of its own (" + hold.why_not_cgroup() + ")"));
  j["set"] = set.has_value();
  if (set) {
    ctx.err << fmt::format(
        "sparkops run: job cgroup limited from the plan: memory.high {:.2f} GiB, memory.max {:.2f} GiB{} "
        "(CPU-side memory; the driver's GPU allocations are not counted)\n",
        ToGiB(l.high), ToGiB(l.max), l.capped ? " (capped at MemTotal)" : "");
  } else {
    j["why_not_set"] = set.error().message;
    ctx.err << "sparkops run: --limit-from-plan: no memory limit set: " << set.error().message
            << "; the run goes on with the memory guard only\n";
  }
  return j;
}

/// meta.json's `attempts` (docs/restart.md): number, pid, start, end, exit, reason, backoff_s.
nlohmann::ordered_json AttemptsMeta(const std::vector<AttemptResult>& attempts) {
  auto out = nlohmann::ordered_json::array();
  for (const AttemptResult& a : attempts) {
    nlohmann::ordered_json exit;
    if (a.term_signal) exit["signal"] = strsignal(*a.term_signal);
    else exit["code"] = a.status;
    out.push_back({{"number", a.number},
                   {"pid", a.pid > 0 ? nlohmann::ordered_json(a.pid) : nlohmann::ordered_json()},
                   {"start", FormatUtcMillis(a.start)},
                   {"end", FormatUtcMillis(a.end)},
                   {"exit", exit},
                   {"reason", ToString(a.end_reason)},
                   {"backoff_s", a.backoff_s ? nlohmann::ordered_json(*a.backoff_s) : nlohmann::ordered_json()}});
  }
  return out;
}

}  // namespace

int CmdRun(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("run",
                    "Supervise a training command: its output with arrival times (train.log), a "
                    "thermal CSV, events, and on exit summary.json and report.html.\n"
                    "Usage: sparkops run [--out DIR] [--interval S] [--notify URL] [--notify-cmd CMD] -- CMD ARGS...");
  std::string out_dir;
  double interval = 30, grace = 10;
  std::vector<std::string> command;
  app->add_option("--out", out_dir, "run directory (default sparkops-runs/<UTC timestamp>)");
  AddNumber(*app, "--interval", interval, kIntervalRange, "seconds between thermal samples and process snapshots");
  AddNumber(*app, "--grace", grace, kGraceRange, "seconds between forwarding SIGINT/SIGTERM/SIGHUP and SIGKILL");
  std::string plan_args;
  app->add_option(
         "--plan-args", plan_args,
         "this job's `plan` flags (MODEL first): plan.json + peak.json in the run directory, for plan --calibrate")
      ->check(NonEmpty());
  std::string plan_from;
  app->add_option("--plan-from", plan_from,
                  "a training config (as plan --from): its plan is recorded as --plan-args' is (combines with them)")
      ->check(NonEmpty());
  bool limit_from_plan = false;
  app->add_flag("--limit-from-plan", limit_from_plan,
                "set the job cgroup's memory.high/memory.max from the plan (--plan-from/--plan-args; "
                "docs/memory-guard.md)");
  NotifyFlags notify_flags;
  notify_flags.Add(*app);
  GuardFlags guard_flags;
  guard_flags.Add(*app, true);
  CheckpointFlags checkpoint_flags;
  checkpoint_flags.Add(*app);
  RestartFlags restart_flags;
  restart_flags.Add(*app);
  app->add_option("command", command, "the job, after --")->required();
  app->allow_extras(false);
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    ctx.err << "sparkops run: no command given after --\n";
    return kExitUsage;
  }
  auto restart = restart_flags.Resolve();
  if (!restart) {
    ctx.err << "sparkops run: " << restart.error().message << "\n";
    return kExitUsage;
  }
  auto notify = notify_flags.Resolve(ctx, ctx.err, "run");
  if (!notify) {
    ctx.err << "sparkops run: " << notify.error().message << "\n";
    return kExitUsage;
  }
  auto plan = [&ctx](const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    GlobalOptions o{ctx.opts};
    o.json = true;
    Context pctx{o, ctx.fs, ctx.env, out, err};
    return CmdPlan(pctx, args);
  };
  if (!plan_from.empty()) {
    // Recorded as plan args ("--from FILE ..."), which are split on spaces when read back.
    if (plan_from.find_first_of(" \t\n") != std::string::npos) {
      ctx.err << "sparkops run: --plan-from '" << plan_from << "': a path without spaces, please\n";
      return kExitUsage;
    }
    plan_args = "--from " + plan_from + (plan_args.empty() ? "" : " " + plan_args);
  }
  std::string plan_json;  // the plan at the pool as it is before the job starts (plan.json)
  if (!plan_args.empty()) {
    auto planned = PlanFromArgs(plan_args, plan);
    if (!planned) {
      ctx.err << "sparkops run: " << planned.error().message << "\n";
      return kExitUsage;
    }
    plan_json = std::move(*planned);
  }
  std::optional<PlanLimits> limits;
  if (limit_from_plan) {
    if (plan_json.empty()) {
      ctx.err << "sparkops run: --limit-from-plan needs the job's plan: give --plan-from FILE or --plan-args\n";
      return kExitUsage;
    }
    auto mi = ReadMemInfo(ctx.fs);
    auto l = LimitsFromPlan(plan_json, mi ? mi->total : std::nullopt);
    if (!l) {
      ctx.err << "sparkops run: --limit-from-plan: " << l.error().message << "\n";
      return kExitUsage;
    }
    limits = *l;
  }
  if (out_dir.empty()) out_dir = DefaultRunDir();
  std::optional<guard::Config> guard_config;
  if (!guard_flags.no_guard) {
    auto g = guard_flags.Resolve(ctx, ctx.err);
    if (!g && g.error().kind == Error::Kind::kInput) {
      ctx.err << "sparkops run: " << g.error().message << "\n";
      return kExitUsage;
    }
    if (!g) ctx.err << "sparkops run: warning: " << g.error().message << "; the memory guard is off\n";
    else guard_config = *g;
  }
  std::error_code abs_ec;
  auto checkpoint = checkpoint_flags.Resolve(ctx, guard_config, std::filesystem::absolute(out_dir, abs_ec).string());
  if (!checkpoint) {
    ctx.err << "sparkops run: " << checkpoint.error().message << "\n";
    return checkpoint.error().kind == Error::Kind::kInput ? kExitUsage : kExitProblem;
  }

  WarnContention(ctx);
  auto rec = RunRecorder::Create(out_dir);
  if (!rec) {
    ctx.err << "sparkops run: " << rec.error().message << "\n";
    return kExitUsage;
  }
  // Declared after the recorder, so it is closed (its deliveries drained, bounded) before that goes.
  auto notifier = Notifier::Start(*notify, {ReadHostname(ctx), out_dir, Join(command, " ")},
                                  [&rec](const nlohmann::ordered_json& f) {
                                    (void)rec->Event(std::chrono::system_clock::now(), "notify_failed", f);
                                  });
  if (notifier) rec->Observe([n = notifier.get()](const nlohmann::ordered_json& j) { n->Offer(j); });
  if (!plan_json.empty() && !rec->WriteFile("plan.json", plan_json))
    ctx.err << "sparkops run: warning: cannot write plan.json in " << out_dir << "\n";
  auto boot = ReadBootId(ctx.fs);
  nlohmann::ordered_json meta = {{"start_time", FormatUtcMillis(std::chrono::system_clock::now())},
                                 {"argv", command},
                                 {"pid", nullptr},
                                 {"boot_id", boot ? *boot : std::string()},
                                 {"host", ReadHostname(ctx)},
                                 {"interval_s", interval},
                                 {"sparkops_version", SPARKOPS_VERSION}};
  meta["plan_args"] = plan_args.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(plan_args);
  meta["memory_guard"] = guard_config ? GuardConfigJson(*guard_config) : nlohmann::ordered_json();

  // Every descendant of the job, setsid or not, stays in its cgroup (else under run as subreaper).
  // SPARKOPS_RUN_HOLD=subreaper: the fallback even where a cgroup could be made (tests, troubleshooting).
  JobHold hold = ctx.Getenv("SPARKOPS_RUN_HOLD") == "subreaper" ? JobHold::Subreaper("SPARKOPS_RUN_HOLD=subreaper")
                                                                : JobHold::Make();
  if (limits) meta["memory_limits"] = ApplyLimits(ctx, hold, *limits);
  SuperviseOptions so;
  so.hold = &hold;
  so.argv = command;
  so.interval_s = interval;
  so.grace_s = grace;
  so.use_pty = ::isatty(STDOUT_FILENO) == 1;
  if (guard_config) so.guard = guard::RunGuardOptions{*guard_config, grace, &ctx.err, *checkpoint};
  if (*checkpoint) {  // the job's side of the checkpoint request (docs/checkpoint.md)
    ::setenv("SPARKOPS_CHECKPOINT_SIGNAL", guard::SignalName((*checkpoint)->signal).c_str(), 1);
    ::setenv("SPARKOPS_CHECKPOINT_DONE", (*checkpoint)->done_path.c_str(), 1);
    const auto psi = guard::CheckpointPsiLevel(**checkpoint, guard_config->max_pressure);
    meta["checkpoint"] = {{"signal", guard::SignalName((*checkpoint)->signal)},
                          {"checkpoint_at_bytes", guard::CheckpointLevel(**checkpoint, guard_config->floor)},
                          {"checkpoint_psi", psi ? nlohmann::ordered_json(*psi) : nlohmann::ordered_json()},
                          {"grace_s", (*checkpoint)->grace_s},
                          {"done_path", (*checkpoint)->done_path}};
  }
  so.restart = *restart;
  if (restart->enabled()) {
    meta["restart"] = {{"on", restart_flags.on},
                       {"max_restarts", restart->max_restarts},
                       {"backoff_s", restart->backoff_s}};
    // Before each restart: the checkpoint request re-arms (its acknowledgement goes), and with
    // --flush-cache as root the page cache goes (the OOM ladder's first rung, `sparkops flush`).
    const bool may_flush = guard_flags.flush_cache && (IsRoot() || !ctx.fs.is_real_root());
    so.before_restart = [&ctx, &checkpoint, may_flush, max = restart->max_restarts](int next) {
      nlohmann::ordered_json f;
      if (*checkpoint) {
        std::error_code ec;
        std::filesystem::remove((*checkpoint)->done_path, ec);
      }
      if (may_flush) {
        auto done = DropCaches(ctx.fs);
        f["cache_flushed"] = done.has_value();
        if (!done) f["flush_error"] = done.error().message;
      }
      ctx.err << fmt::format("sparkops run: starting the job again (attempt {} of at most {})\n", next, max + 1);
      return f;
    };
  }
  if (!so.use_pty) SetLiveBarEnvironment();  // Rich draws live bars into the pipe (issue #24)
  auto res = Supervise(ctx, *rec, so, [&](pid_t pid) {
    meta["pid"] = pid;
    meta["job_hold"] = {{"mode", hold.ModeName()}};
    if (hold.mode() == JobHold::Mode::kCgroup) meta["job_hold"]["cgroup"] = hold.path();
    else meta["job_hold"]["why_not_cgroup"] = hold.why_not_cgroup();
    if (limits && meta["memory_limits"]["set"] == true && hold.mode() != JobHold::Mode::kCgroup) {
      meta["memory_limits"]["set"] = false;  // the job could not be moved into the limited cgroup
      meta["memory_limits"]["why_not_set"] = hold.why_not_cgroup();
      ctx.err << "sparkops run: --limit-from-plan: no memory limit holds the job: " << hold.why_not_cgroup() << "\n";
    }
    ctx.err << "sparkops run: job held "
            << (hold.mode() == JobHold::Mode::kCgroup ? "in cgroup " + hold.path()
                                                      : "by run as child subreaper (" + hold.why_not_cgroup() + ")")
            << "\n";
    // argv need not be UTF-8 (a Latin-1 file name): bad bytes become U+FFFD, never an exception.
    (void)rec->WriteFile("meta.json", JsonText(meta) + "\n");
  });
  if (!res) {
    ctx.err << "sparkops run: " << res.error().message << "\n";
    (void)rec->Event(std::chrono::system_clock::now(), "exit", {{"code", 127}, {"error", res.error().message}});
    return res.error().kind == Error::Kind::kNotFound ? 127 : kExitProblem;
  }

  auto now = std::chrono::system_clock::now();
  std::optional<OomSignature> oom = FindOom(*res);
  if (oom)
    (void)rec->Event(now, "oom",
                     {{"signature", ToString(oom->kind)}, {"phase", ToString(oom->phase)}, {"detail", oom->line}});
  nlohmann::ordered_json exit_fields;
  if (res->term_signal) exit_fields["signal"] = strsignal(*res->term_signal);  // either the signal ...
  else exit_fields["code"] = res->status;                                      // ... or the exit status
  std::optional<CgroupPeak> cgroup_peak;  // the job's own memory (CPU-side on a GB10)
  if (auto peak = hold.MemoryPeak()) cgroup_peak = CgroupPeak{*peak, "memory.peak"};
  else if (res->cgroup_current_max) cgroup_peak = CgroupPeak{*res->cgroup_current_max, "memory.current"};
  if (cgroup_peak) {
    exit_fields["cgroup_memory_peak_bytes"] = cgroup_peak->bytes;
    exit_fields["cgroup_memory_peak_source"] = cgroup_peak->source;
  }
  if (restart->enabled() && !res->attempts.empty()) {  // the last attempt's end (docs/restart.md)
    exit_fields["attempt"] = res->attempts.back().number;
    exit_fields["reason"] = ToString(res->attempts.back().end_reason);
    meta["attempts"] = AttemptsMeta(res->attempts);
    (void)rec->WriteFile("meta.json", JsonText(meta) + "\n");
  }
  (void)rec->Event(now, "exit", exit_fields);

  // The report: the same analysis `sparkops analyze DIR` gives.
  std::string verdict;
  std::optional<RunMemory> memory;  // the OOM or guard stop with its numbers and the ladder
  if (auto in = RunDirInputs(out_dir)) {
    auto zone = LocalZone::Make("UTC", ctx.fs);
    if (zone) {
      if (auto a = Analyze(*in, *zone, ctx.fs)) {
        memory = RunMemoryOf(ctx, *a);
        nlohmann::json summary = RenderAnalysisJson(*a);
        summary["memory"] = memory ? RunMemoryJson(*memory) : nlohmann::json();
        summary["job_cgroup_memory_peak"] =
            cgroup_peak ? nlohmann::json{{"bytes", cgroup_peak->bytes}, {"source", cgroup_peak->source}}
                        : nlohmann::json();
        (void)rec->WriteFile("summary.json", JsonText(summary) + "\n");
        (void)rec->WriteFile("report.html", RenderHtmlReport(*a, memory ? &*memory : nullptr));
        verdict = a->Verdict();
      } else {
        verdict = "cannot analyse the run: " + a.error().message;
      }
    }
  }
  const std::string peak_note = plan_args.empty() ? "" : RecordPeak(ctx, *rec, out_dir, cgroup_peak);
  res->live->Close();  // the rest of the job's output first, then run's own lines
  if (!peak_note.empty()) ctx.err << "sparkops run: " << peak_note << "\n";
  if (!verdict.empty()) ctx.err << "sparkops run: " << verdict << "\n";
  ctx.err << fmt::format("sparkops run: job exited with status {}; run directory {}\n", res->status, out_dir);
  if (res->lost_log_lines + res->lost_rows > 0) {
    ctx.err << fmt::format(
        "sparkops run: the run directory is incomplete: {} output lines and {} thermal rows "
        "could not be written ({}); events.jsonl marks the gaps\n",
        res->lost_log_lines, res->lost_rows, res->write_error);
    if (res->status == 0) return kExitProblem;  // the job's own failure, when it failed, stays its status
  }
  if (oom || memory) {
    const memory::Ladder ladder =
        memory ? memory->ladder : memory::BuildLadder(ReadMemInfo(ctx.fs), std::nullopt, *oom);
    if (memory) ctx.err << "sparkops run: " << memory->headline << "\n";
    else
      ctx.err << fmt::format("sparkops run: out of memory ({} during {})\n", ToString(oom->kind), ToString(oom->phase));
    if (ladder.kind != memory::LadderKind::kOom) {  // issue 33: every step, in order: the order is the advice
      ctx.err << "sparkops run: after a driver-side sign the host may wedge; in order:\n";
      for (const auto& s : ladder.steps) ctx.err << fmt::format("  {}. {}\n     {}\n", s.number, s.title, s.detail);
    } else {
      ctx.err << "sparkops run: next step of the OOM ladder:\n";
      for (const auto& s : ladder.steps)
        if (s.number == ladder.next) ctx.err << fmt::format("  {}. {}\n     {}\n", s.number, s.title, s.detail);
    }
    ctx.err << "  (all steps: sparkops analyze " << out_dir << ")\n";
  }
  if (res->guard_stop && res->guard_stop->reason == guard::Reason::kKernelNoMemory) {  // issue 33
    ctx.err << fmt::format(
        "sparkops run: the memory guard stopped the job (the driver logged NVRM NV_ERR_NO_MEMORY: the host may wedge "
        "next): {}; exit {}\n",
        res->guard_stop->kernel_line, kExitMemoryGuard);
    return kExitMemoryGuard;
  }
  if (res->guard_stop && res->guard_stop->reason == guard::Reason::kFragmentation) {  // issue 33
    ctx.err << fmt::format(
        "sparkops run: the memory guard stopped the job (no free 2 MiB block for the driver while the job grew: "
        "its next large allocation may fail with NV_ERR_NO_MEMORY and the host may wedge): {}; exit {}\n",
        res->guard_stop->buddyinfo, kExitMemoryGuard);
    return kExitMemoryGuard;
  }
  if (res->guard_stop) {
    const auto& g = *res->guard_stop;
    ctx.err << fmt::format(
        "sparkops run: the memory guard stopped the job ({}): MemAvailable {:.2f} GiB, floor "
        "{:.2f} GiB{}; exit {}\n",
        g.reason == guard::Reason::kPressure ? "memory pressure" : "below the floor", ToGiB(g.reading.available),
        ToGiB(g.floor),
        g.reading.psi_full_avg10 ? fmt::format(", PSI full avg10 {:.1f}%", *g.reading.psi_full_avg10) : std::string(),
        kExitMemoryGuard);
    return kExitMemoryGuard;
  }
  return res->status;
}

}  // namespace sparkops
