// sparkops guard [--min-available SIZE] [--max-pressure PCT] [--pressure-window S] [--flush-cache]
//                [--grace S] [--prefer RE] [--only RE] [--avoid RE] [--avoid-user U] [--avoid-unit UNIT]
//                [--kernel-signals on|off] [--dry-run] [--notify URL] [--notify-cmd CMD] [--notify-config F]
// The memory guard for jobs not started by `run`: watches the whole host and stops the largest
// process (resident + GPU memory) when MemAvailable falls below the floor or PSI stays high, or
// when the driver logs NVRM NV_ERR_NO_MEMORY (issue 33; guard/kernel_watch.h), or when no free 2 MiB
// block is left for the driver while MemAvailable keeps falling under twice the floor (guard/fragmentation.h).
#include <pwd.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "base/json_text.h"
#include "base/strings.h"
#include "base/timefmt.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/guard_flags.h"
#include "cli/notify_flags.h"
#include "guard/candidates.h"
#include "guard/event.h"
#include "guard/ledger.h"
#include "guard/pidfd.h"
#include "guard/unit_stop.h"
#include "guard/victim.h"
#include "guard/watcher.h"
#include "host/dropcaches.h"
#include "host/gpu.h"
#include "host/pidns.h"
#include "host/proctable.h"
#include "run/job_cgroup.h"

namespace sparkops {

namespace {

volatile std::sig_atomic_t g_quit = 0;
void OnQuit(int) { g_quit = 1; }

/// Sleeps `s` seconds or until a signal sets g_quit. False when quitting.
bool Nap(double s) {
  timespec ts{static_cast<time_t>(s), static_cast<long>((s - static_cast<double>(static_cast<time_t>(s))) * 1e9)};
  ::nanosleep(&ts, nullptr);  // EINTR on SIGINT/SIGTERM: g_quit is set then
  return !g_quit;
}

/// Every process of this machine (signals go to real PIDs even under --root) with its GPU memory,
/// under the PID this process signals it by. A process /proc shows outside this PID namespace
/// (host/pidns.h) is left out: its number here would name another process. `protect` gets the
/// guard and its ancestors (local PIDs).
std::vector<guard::Candidate> Candidates(const Context& ctx, std::set<uint32_t>& protect) {
  std::vector<guard::Candidate> out;
  std::vector<guard::ProcFacts> facts = guard::ReadAllProcFacts(HostFs("/"));
  std::map<uint32_t, uint32_t> parent;
  for (const auto& f : facts) parent[f.c.pid] = f.ppid;
  std::set<uint32_t> ancestors;  // /proc's PIDs
  for (uint32_t p = PidSpace::Real().self_proc_pid(); p > 1 && ancestors.insert(p).second;) {
    auto it = parent.find(p);
    if (it == parent.end()) break;
    p = it->second;
  }
  std::map<uint32_t, uint64_t> gpu;
  for (const GpuReading& g : ReadGpuSnapshot(ctx).gpus)
    if (g.processes_known)
      for (const GpuProcess& p : g.processes)
        if (p.used_bytes) gpu[p.pid] += *p.used_bytes;
  for (guard::ProcFacts& f : facts) {
    auto local = LocalPidOf(f.c.pid, &f.nspid);
    if (!local) continue;
    if (auto it = gpu.find(f.c.pid); it != gpu.end()) f.c.gpu = it->second;
    if (ancestors.count(f.c.pid)) protect.insert(*local);
    f.c.pid = *local;
    out.push_back(std::move(f.c));
  }
  protect.insert(static_cast<uint32_t>(::getpid()));
  return out;
}

/// The whole unit to stop for `victim` (guard/victim.h's ChooseStop), opened; nullopt with `choice`
/// saying why when the process is stopped alone.
std::optional<guard::UnitStop> UnitToStop(const std::vector<guard::Candidate>& cands, const guard::Candidate& victim,
                                          const guard::VictimRules& rules,
                                          const std::optional<std::pair<std::string, std::string>>& cgroup2,
                                          guard::StopChoice& choice) {
  std::set<std::string> protected_cgroups;  // the guard's, its ancestors', PID 1's
  for (const guard::Candidate& c : cands)
    if ((c.pid == 1 || rules.protect.count(c.pid)) && !c.cgroup.empty()) protected_cgroups.insert(c.cgroup);
  choice = guard::ChooseStop(victim, protected_cgroups, rules);
  if (choice.unit.empty()) return std::nullopt;
  auto dir = cgroup2 ? guard::CgroupDir(cgroup2->first, cgroup2->second, choice.cgroup) : std::nullopt;
  auto unit = dir ? guard::UnitStop::Open(*dir, choice.cgroup, static_cast<pid_t>(victim.pid)) : std::nullopt;
  if (!unit) choice = {"", "", "no cgroup v2 directory of " + choice.unit + " lists it"};
  return unit;
}

/// --avoid-user: a user name or a numeric uid.
std::optional<uint32_t> UidOf(const std::string& user) {
  if (auto n = ParseUint(user); n && *n <= UINT32_MAX) return static_cast<uint32_t>(*n);
  passwd pw{}, *res = nullptr;
  char buf[4096];
  if (::getpwnam_r(user.c_str(), &pw, buf, sizeof buf, &res) != 0 || !res) return std::nullopt;
  return pw.pw_uid;
}

Notifier* g_notifier = nullptr;  ///< --notify targets while CmdGuard runs (null: none)
std::mutex g_out_mu;             ///< stdout: the notifier's thread writes notify_failed lines too

void WriteLine(Context& ctx, const nlohmann::ordered_json& j) {
  std::lock_guard lock(g_out_mu);
  ctx.out << JsonText(j, -1) << "\n";
  ctx.out.flush();
}

void Emit(Context& ctx, const nlohmann::ordered_json& j) {
  WriteLine(ctx, j);
  if (g_notifier) g_notifier->Offer(j);  // never waits: queued for the delivery thread
}

nlohmann::ordered_json Head(const char* type) {
  return {{"time", FormatUtcMillis(std::chrono::system_clock::now())}, {"type", type}};
}

}  // namespace

int CmdGuard(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("guard",
                    "Watch the whole host's memory and stop the largest process (resident + GPU memory) "
                    "before the unified pool runs out. JSON lines on stdout.\n"
                    "Usage: sparkops guard [--min-available SIZE] [--prefer RE] [--avoid RE] [--kernel-signals on|off] "
                    "[--dry-run]");
  GuardFlags flags;
  flags.Add(*app, false);
  double grace = 10;
  std::string prefer, avoid, only;
  std::vector<std::string> avoid_users, avoid_units;
  bool dry_run = false;
  AddNumber(*app, "--grace", grace, kGraceRange, "seconds between SIGTERM and SIGKILL (default 10)");
  app->add_option("--prefer", prefer,
                  "choose first processes whose executable path or command line (first 4 KiB) matches this POSIX ERE");
  app->add_option("--only", only, "choose only among processes whose executable path or command line matches this");
  app->add_option("--avoid", avoid,
                  "never choose processes whose executable path (/proc/PID/exe) or cgroup matches this; anchor it "
                  "('^/usr/sbin/sshd$'): the command line is never used");
  app->add_option("--avoid-user", avoid_users, "never choose this user's processes (name or uid; repeatable)");
  app->add_option("--avoid-unit", avoid_units,
                  "never choose processes of this systemd unit (sshd.service; repeatable); other units are stopped "
                  "whole (docs/memory-guard.md)");
  app->add_flag("--dry-run", dry_run, "log what would be done; signal nothing");
  NotifyFlags notify_flags;
  notify_flags.Add(*app);
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  auto notify = notify_flags.Resolve(ctx, ctx.err, "guard");
  if (!notify) {
    ctx.err << "sparkops guard: " << notify.error().message << "\n";
    return kExitUsage;
  }
  guard::VictimRules rules;
  for (auto [flag, text, dst] :
       {std::tuple{"--prefer", &prefer, &rules.prefer}, std::tuple{"--only", &only, &rules.only},
        std::tuple{"--avoid", &avoid, &rules.avoid}}) {
    if (text->empty()) continue;
    auto p = guard::Pattern::Compile(flag, *text);
    if (!p) {
      ctx.err << "sparkops guard: " << p.error().message << "\n";
      return kExitUsage;
    }
    *dst = std::move(*p);
  }
  for (const std::string& u : avoid_users) {
    auto uid = UidOf(u);
    if (!uid) {
      ctx.err << "sparkops guard: --avoid-user: no such user: '" << u << "'\n";
      return kExitUsage;
    }
    rules.avoid_uids.insert(*uid);
  }
  for (const std::string& u : avoid_units) {
    if (!u.ends_with(".service") && !u.ends_with(".scope")) {
      ctx.err << "sparkops guard: --avoid-unit: not a service or scope unit name: '" << u << "'\n";
      return kExitUsage;
    }
    rules.avoid_units.insert(u);
  }
  if (!dry_run && !guard::Pidfd::Supported()) {
    ctx.err << "sparkops guard: this kernel has no pidfd_open (Linux >= 5.3 needed): the guard signals a process only "
               "through a pidfd, so that no signal reaches a process that took the chosen one's PID; --dry-run still "
               "works\n";
    return kExitProblem;
  }
  auto config = flags.Resolve(ctx, ctx.err);
  if (!config) {
    ctx.err << "sparkops guard: " << config.error().message << "\n";
    return config.error().kind == Error::Kind::kInput ? kExitUsage : kExitProblem;
  }
  const std::string drop_caches = ctx.fs.Path(kDropCachesPath);
  guard::FastReader reader(ctx.fs);
  bool locked = guard::LockMemory(), adjusted = guard::SetOwnOomScoreAdj(guard::kGuardOomScoreAdj);

  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = OnQuit;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  g_quit = 0;

  guard::Ledger initial;
  initial.mode = "host", initial.min_available_bytes = config->floor, initial.max_pressure = config->max_pressure;
  initial.dry_run = dry_run;
  guard::LedgerWriter ledger(guard::ResolveLedgerDir(ctx.Getenv("SPARKOPS_GUARD_LEDGER"), ::geteuid()), initial);
  if (auto e = ledger.error())
    ctx.err << "sparkops guard: no ledger, so the exporter will not count this guard's actions: " << *e << "\n";

  std::optional<guard::KernelWatch> kernel;  // issue 33: followed from now on
  if (config->kernel_signals) {
    std::string note;
    kernel = guard::KernelWatch::Start(ctx.fs, &note);
    if (!note.empty())
      ctx.err << "sparkops guard: " << note << "; NVRM NV_ERR_NO_MEMORY records will not stop anything\n";
  }
  // issue 33: no free 2 MiB block for the driver while the pool shrinks under twice the floor.
  std::optional<guard::FragmentationWatch> fragmentation;
  if (config->kernel_signals) {
    fragmentation.emplace(ctx.fs);
    if (!fragmentation->note().empty()) {
      ctx.err << "sparkops guard: " << fragmentation->note() << "\n";
      fragmentation.reset();
    }
  }

  auto start = Head("guard_start");
  const auto settings = GuardConfigJson(*config);
  for (auto& [k, v] : settings.items()) start[k] = v;
  start["grace_s"] = grace;
  start["dry_run"] = dry_run;
  start["mlockall"] = locked;
  start["oom_score_adj_lowered"] = adjusted;
  if (!ledger.path().empty() && !ledger.error()) start["ledger"] = ledger.path();
  if (config->kernel_signals) start["kernel_log_followed"] = kernel.has_value();
  if (config->kernel_signals) start["fragmentation_watched"] = fragmentation.has_value();
  Emit(ctx, start);

  // Made before the loop's first Emit; its thread starts with the first notice (a stop).
  auto notifier = Notifier::Start(*notify, {ReadHostname(ctx), "", ""}, [&ctx](const nlohmann::ordered_json& f) {
    auto e = Head("notify_failed");
    for (auto& [k, v] : f.items()) e[k] = v;
    WriteLine(ctx, e);  // not Emit: a failure is never told
  });
  struct NotifierScope {
    explicit NotifierScope(Notifier* n) { g_notifier = n; }
    ~NotifierScope() { g_notifier = nullptr; }
  } notifier_scope(notifier.get());

  const auto cgroup2 = [] {  // where a unit's cgroup is, to stop it whole
    auto mi = HostFs("/").Read("/proc/self/mountinfo", 1u << 20);
    return mi ? ParseCgroup2Mount(*mi) : std::nullopt;
  }();
  guard::State state;
  std::string kernel_line;  // a no-memory record not yet acted on (kept while the victim is chosen again)
  std::string buddyinfo;    // a fragmentation stop's evidence not yet acted on (likewise)
  while (!g_quit) {
    std::optional<guard::Reading> r = reader.Read(guard::MonoSeconds());
    if (!r) {
      if (!Nap(guard::kSlowPollS)) break;
      continue;
    }
    guard::Decision d =
        guard::WithKernelSign(guard::Decide(*config, *r, state), kernel ? &*kernel : nullptr, &kernel_line);
    // Off the floor's path: buddyinfo is read only when the readings and the kernel log call for
    // nothing (and then at most once a second, while armed).
    if (d.action == guard::Action::kNone &&
        (!buddyinfo.empty() || (fragmentation && fragmentation->Check(*config, *r, &buddyinfo))))
      d = {guard::Action::kStop, guard::Reason::kFragmentation};
    if (d.action == guard::Action::kNone) {
      if (!Nap(guard::PollInterval(*config, *r))) break;
      continue;
    }
    guard::ActionRecord a = guard::MakeRecord(d, *r, *config);
    if (d.reason == guard::Reason::kKernelNoMemory) a.kernel_line = kernel_line;
    if (d.reason == guard::Reason::kFragmentation) a.buddyinfo = buddyinfo;
    if (d.action == guard::Action::kFlush) {
      a.flush_ok = !dry_run && guard::WriteDropCachesAt(drop_caches.c_str());
      if (!dry_run) ledger.Count("flush", guard::ToString(d.reason));
      auto j = Head("memory_guard");
      const auto fields = guard::GuardEventFields(a, {});
      for (auto& [k, v] : fields.items()) j[k] = v;
      j["dry_run"] = dry_run;
      Emit(ctx, j);
      continue;
    }
    rules.protect.clear();
    const double t_scan = guard::MonoSeconds();
    std::vector<guard::Candidate> cands = Candidates(ctx, rules.protect);
    std::optional<size_t> v = guard::PickVictim(cands, rules);
    const double selection_ms = (guard::MonoSeconds() - t_scan) * 1000;
    auto j = Head("memory_guard");
    if (!v) {
      const auto fields = guard::GuardEventFields(a, {});
      for (auto& [k, val] : fields.items()) j[k] = val;
      j["action"] = "none";
      j.erase("signal");  // nothing was signalled
      j["why"] = "no process may be chosen (--only/--avoid, PID 1, itself, kernel threads, oom_score_adj -1000)";
      Emit(ctx, j);
      state = {};
      kernel_line.clear(), buddyinfo.clear();
      if (fragmentation) fragmentation->Reset();
      if (!Nap(grace > 1 ? grace : 1)) break;
      continue;
    }
    const guard::Candidate& victim = cands[*v];
    guard::StopChoice choice;
    std::optional<guard::UnitStop> unit = UnitToStop(cands, victim, rules, cgroup2, choice);
    // The pidfd names this process (PID and start time checked after opening) until it is closed:
    // neither signal can reach a process that took its PID later.
    int open_err = 0;
    std::optional<guard::Pidfd> pidfd;
    if (!dry_run) {
      auto proc_pid = ProcPidOf(victim.pid);
      if (proc_pid)
        pidfd =
            guard::Pidfd::Open(HostFs("/"), static_cast<pid_t>(victim.pid), *proc_pid, victim.start_ticks, &open_err);
      if (!pidfd && (open_err == ESRCH || !proc_pid)) continue;  // gone or replaced since read: choose again
      if (!pidfd) {
        auto e = Head("error");
        e["pid"] = victim.pid;
        e["error"] = std::string("pidfd_open: ") + std::strerror(open_err);
        Emit(ctx, e);
        if (!Nap(1)) break;
        continue;
      }
    }
    // A unit is stopped whole: SIGTERM to each of its processes, after the grace cgroup.kill.
    size_t unit_processes = 0;
    auto send = [&](int sig) {
      if (unit) unit_processes = unit->Signal(sig);
      if (unit_processes > 0) return 0;
      return pidfd->Signal(sig);  // the process alone, or the unit's members could not be reached
    };
    auto gone = [&](double t) { return unit ? unit->WaitEmpty(t) : pidfd->WaitExit(t); };
    const int term_err = pidfd ? send(SIGTERM) : 0;
    const double t_term = guard::MonoSeconds();
    auto event = [&] {
      auto e = Head("memory_guard");
      const auto fields = guard::GuardEventFields(a, {victim.rss, victim.gpu});
      for (auto& [k, val] : fields.items()) e[k] = val;
      if (dry_run) e["action"] = "would_terminate", e.erase("signal");
      e["pid"] = victim.pid;
      e["start_ticks"] = victim.start_ticks;
      e["exe"] = victim.exe;
      if (victim.uid) e["uid"] = *victim.uid;
      if (!victim.cgroup.empty()) e["cgroup"] = victim.cgroup;
      if (victim.oom_score) e["oom_score"] = *victim.oom_score;
      e["name"] = victim.name;
      e["cmdline"] = victim.cmdline;
      if (!dry_run) e["via"] = unit && a.killed && unit->used_cgroup_kill() ? "cgroup.kill" : "pidfd";
      if (unit) {
        e["unit"] = choice.unit;
        e["unit_cgroup"] = choice.cgroup;
        if (!dry_run) e["unit_processes"] = unit_processes;
      } else if (!guard::UnitOf(victim.cgroup).empty()) {
        e["unit_not_stopped"] = choice.why_process;  // in a unit, stopped alone: why
      }
      if (term_err != 0 && term_err != ESRCH) e["signal_error"] = std::strerror(term_err);
      e["dry_run"] = dry_run;
      e["candidates"] = cands.size();
      e["selection_ms"] = selection_ms;
      return e;
    };
    ledger.Count(dry_run ? "would_terminate" : "terminate", guard::ToString(d.reason));
    Emit(ctx, event());
    bool exited = false;
    while (pidfd && !exited && !g_quit) {
      const double left = grace - (guard::MonoSeconds() - t_term);
      if (left <= 0) break;
      exited = gone(left);
    }
    if (pidfd && !exited && !g_quit && send(SIGKILL) == 0) {
      a.killed = true;
      a.wall = std::chrono::system_clock::now();  // the kill's own reading, not the SIGTERM's
      if (auto now = reader.Read(guard::MonoSeconds())) a.reading = *now;
      ledger.Count("kill", guard::ToString(d.reason));
      Emit(ctx, event());
      exited = gone(grace > 1 ? grace : 1);
    }
    if (pidfd && exited) {
      auto e = Head("victim_exited");
      e["pid"] = victim.pid;
      e["start_ticks"] = victim.start_ticks;
      e["after_s"] = guard::MonoSeconds() - t_term;
      if (unit) e["unit"] = choice.unit;  // every process of it
      Emit(ctx, e);
    }
    state = {};
    if (dry_run && !Nap(grace > 1 ? grace : 1)) break;  // one line per grace period, not per poll
    kernel_line.clear(), buddyinfo.clear();
    if (fragmentation) fragmentation->Reset();  // the next stop needs the pool to shrink again
    // The driver logs a burst of no-memory records for one failure: those that came while the guard
    // stopped this process belong to the episode it acted on, not to a new one.
    if (d.reason == guard::Reason::kKernelNoMemory && kernel) (void)kernel->Poll();
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return kExitOk;
}

}  // namespace sparkops
