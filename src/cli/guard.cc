// sparkops guard [--min-available SIZE] [--max-pressure PCT] [--pressure-window S] [--flush-cache]
//                [--grace S] [--prefer RE] [--avoid RE] [--only RE] [--dry-run]
// The memory guard for jobs not started by `run`: watches the whole host and stops the largest
// process (resident + GPU memory) when MemAvailable falls below the floor or PSI stays high.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <map>

#include "base/json_text.h"
#include "base/strings.h"
#include "base/timefmt.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/guard_flags.h"
#include "guard/event.h"
#include "guard/ledger.h"
#include "guard/victim.h"
#include "guard/watcher.h"
#include "host/dropcaches.h"
#include "host/gpu.h"
#include "host/pidns.h"
#include "host/proctable.h"

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
/// (host/pidns.h) is left out: its number here would name another process.
std::vector<guard::Candidate> Candidates(const Context& ctx) {
  std::vector<guard::Candidate> out;
  auto table = ReadProcessTable(HostFs("/"));
  if (!table) return out;
  std::map<uint32_t, uint64_t> gpu;
  for (const GpuReading& g : ReadGpuSnapshot(ctx).gpus)
    if (g.processes_known)
      for (const GpuProcess& p : g.processes)
        if (p.used_bytes) gpu[p.pid] += *p.used_bytes;
  for (const ProcessInfo& p : *table) {
    auto local = LocalPidOf(p.pid, &p.nspid);
    if (!local) continue;
    guard::Candidate c{*local, p.name, Join(p.argv, " "), p.rss_bytes, std::nullopt};
    if (auto it = gpu.find(p.pid); it != gpu.end()) c.gpu = it->second;
    out.push_back(std::move(c));
  }
  return out;
}

void Emit(Context& ctx, const nlohmann::ordered_json& j) {
  ctx.out << JsonText(j, -1) << "\n";
  ctx.out.flush();
}

nlohmann::ordered_json Head(const char* type) {
  return {{"time", FormatUtcMillis(std::chrono::system_clock::now())}, {"type", type}};
}

std::optional<std::regex> Regex(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return std::regex(text, std::regex::extended);
}

}  // namespace

int CmdGuard(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("guard",
                    "Watch the whole host's memory and stop the largest process (resident + GPU memory) "
                    "before the unified pool runs out. JSON lines on stdout.\n"
                    "Usage: sparkops guard [--min-available SIZE] [--prefer RE] [--avoid RE] [--dry-run]");
  GuardFlags flags;
  flags.Add(*app, false);
  double grace = 10;
  std::string prefer, avoid, only;
  bool dry_run = false;
  AddNumber(*app, "--grace", grace, kGraceRange, "seconds between SIGTERM and SIGKILL (default 10)");
  app->add_option("--prefer", prefer, "choose processes whose command line matches this (POSIX ERE) first");
  app->add_option("--avoid", avoid, "never choose processes whose command line matches this");
  app->add_option("--only", only, "choose only among processes whose command line matches this");
  app->add_flag("--dry-run", dry_run, "log what would be done; signal nothing");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  guard::VictimRules rules;
  try {
    rules.prefer = Regex(prefer), rules.avoid = Regex(avoid), rules.only = Regex(only);
  } catch (const std::regex_error& e) {
    ctx.err << "sparkops guard: bad regular expression in --prefer/--avoid/--only: " << e.what() << "\n";
    return kExitUsage;
  }
  rules.self = static_cast<uint32_t>(::getpid());
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

  auto start = Head("guard_start");
  const auto settings = GuardConfigJson(*config);
  for (auto& [k, v] : settings.items()) start[k] = v;
  start["grace_s"] = grace;
  start["dry_run"] = dry_run;
  start["mlockall"] = locked;
  start["oom_score_adj_lowered"] = adjusted;
  if (!ledger.path().empty() && !ledger.error()) start["ledger"] = ledger.path();
  Emit(ctx, start);

  guard::State state;
  while (!g_quit) {
    std::optional<guard::Reading> r = reader.Read(guard::MonoSeconds());
    if (!r) {
      if (!Nap(guard::kSlowPollS)) break;
      continue;
    }
    guard::Decision d = guard::Decide(*config, *r, state);
    if (d.action == guard::Action::kNone) {
      if (!Nap(guard::PollInterval(*config, *r))) break;
      continue;
    }
    guard::ActionRecord a = guard::MakeRecord(d, *r, *config);
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
    std::vector<guard::Candidate> cands = Candidates(ctx);
    std::optional<size_t> v = guard::PickVictim(cands, rules);
    auto j = Head("memory_guard");
    if (!v) {
      const auto fields = guard::GuardEventFields(a, {});
      for (auto& [k, val] : fields.items()) j[k] = val;
      j["action"] = "none";
      j.erase("signal");  // nothing was signalled
      j["why"] = "no process may be chosen (--only/--avoid, PID 1, itself, kernel threads)";
      Emit(ctx, j);
      state = {};
      if (!Nap(grace > 1 ? grace : 1)) break;
      continue;
    }
    const guard::Candidate& victim = cands[*v];
    if (!dry_run) ::kill(static_cast<pid_t>(victim.pid), SIGTERM);
    auto event = [&] {
      auto e = Head("memory_guard");
      const auto fields = guard::GuardEventFields(a, {victim.rss, victim.gpu});
      for (auto& [k, val] : fields.items()) e[k] = val;
      if (dry_run) e["action"] = "would_terminate", e.erase("signal");
      e["pid"] = victim.pid;
      e["name"] = victim.name;
      e["cmdline"] = victim.cmdline;
      e["dry_run"] = dry_run;
      return e;
    };
    ledger.Count(dry_run ? "would_terminate" : "terminate", guard::ToString(d.reason));
    Emit(ctx, event());
    double until = guard::MonoSeconds() + grace;
    while (!dry_run && guard::ProcessAlive(victim.pid) && guard::MonoSeconds() < until && !g_quit) Nap(0.05);
    if (!dry_run && guard::ProcessAlive(victim.pid) && !g_quit) {
      ::kill(static_cast<pid_t>(victim.pid), SIGKILL);
      a.killed = true;
      a.wall = std::chrono::system_clock::now();  // the kill's own reading, not the SIGTERM's
      if (auto now = reader.Read(guard::MonoSeconds())) a.reading = *now;
      ledger.Count("kill", guard::ToString(d.reason));
      Emit(ctx, event());
    }
    state = {};
    if (dry_run && !Nap(grace > 1 ? grace : 1)) break;  // one line per grace period, not per poll
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return kExitOk;
}

}  // namespace sparkops
