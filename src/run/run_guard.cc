#include "run/run_guard.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>

#include "base/strings.h"
#include "guard/event.h"
#include "guard/ledger.h"
#include "guard/pidfd.h"
#include "host/dropcaches.h"
#include "host/proctable.h"

namespace sparkops::guard {

namespace {

/// The job's processes: every member of `hold`, or without one `pid` (only the process itself).
std::set<uint32_t> JobPids(pid_t pid, const JobHold* hold) {
  std::set<uint32_t> pids;
  if (hold)
    for (pid_t p : hold->Members(pid)) pids.insert(static_cast<uint32_t>(p));
  else pids.insert(static_cast<uint32_t>(pid));
  return pids;
}

/// Sends `sig` through a pidfd to each of `pids` whose SigCgt says it catches it; the pids sent to.
std::vector<uint32_t> SignalCatchers(const std::set<uint32_t>& pids, int sig) {
  HostFs proc("/");
  std::vector<uint32_t> sent;
  for (uint32_t p : pids) {
    const std::string dir = "/proc/" + std::to_string(p);
    auto status = proc.Read(dir + "/status", 64u << 10);
    auto stat_text = proc.Read(dir + "/stat", 8u << 10);
    if (!status || !stat_text || !CatchesSignal(*status, sig)) continue;
    auto st = ParseStat(*stat_text);
    if (!st) continue;
    int err = 0;
    auto fd = Pidfd::Open(proc, static_cast<pid_t>(p), p, st->start_ticks, &err);
    if (fd ? fd->Signal(sig) == 0 : err == ENOSYS && ::kill(static_cast<pid_t>(p), sig) == 0)  // no pidfd (< 5.3)
      sent.push_back(p);
  }
  return sent;
}

void AddCheckpoint(JobGuardOptions& jo, RunRecorder& rec, const CheckpointOptions& ck, const Config& config, pid_t pid,
                   const JobHold* hold) {
  const uint64_t level = CheckpointLevel(ck, config.floor);
  const std::optional<double> psi = CheckpointPsiLevel(ck, config.max_pressure);
  jo.checkpoint_at = level;
  jo.checkpoint_psi = psi;
  jo.checkpoint_grace_s = ck.grace_s;
  auto asked = std::make_shared<double>(0);
  auto noted = std::make_shared<bool>(false);
  jo.request_checkpoint = [&rec, ck, level, psi, pid, hold, asked, noted](const Reading& r) {
    const std::vector<uint32_t> sent = SignalCatchers(JobPids(pid, hold), ck.signal);
    *asked = MonoSeconds();
    if (sent.empty() && *noted) return false;  // said once; the guard tries again later
    nlohmann::ordered_json f = {{"signal", SignalName(ck.signal)},
                                {"trigger", ToString(CheckpointTriggerFor(r, level, psi))},
                                {"checkpoint_at_bytes", level},
                                {"mem_available_bytes", r.available}};
    if (psi) f["checkpoint_psi"] = *psi;
    if (r.psi_full_avg10) f["psi_full_avg10"] = *r.psi_full_avg10;
    f["pids"] = sent;
    if (sent.empty())
      f["note"] = "no process of the job catches " + SignalName(ck.signal) +
                  " yet: nothing was sent; trying again every 5 s (install the handler)";
    *noted = *noted || sent.empty();
    (void)rec.Event(std::chrono::system_clock::now(), "checkpoint_requested", f);
    return !sent.empty();
  };
  jo.checkpoint_saved = [&rec, done = ck.done_path, asked] {
    struct stat st {};
    if (::stat(done.c_str(), &st) != 0) return false;
    (void)rec.Event(std::chrono::system_clock::now(), "checkpoint_saved",
                    {{"seconds", MonoSeconds() - *asked}, {"path", done}});
    return true;
  };
}

}  // namespace

std::unique_ptr<JobGuard> StartRunGuard(const HostView& ctx, RunRecorder& rec, const std::optional<RunGuardOptions>& o,
                                        pid_t pid, const JobHold* hold, const std::optional<KmsgMark>& kernel_from) {
  if (!o) return nullptr;
  JobGuardOptions jo;
  jo.config = o->config;
  jo.grace_s = o->grace_s;
  jo.pgid = pid;
  jo.drop_caches_path = ctx.fs.Path(kDropCachesPath);
  if (hold) {
    jo.signal_job = [hold, pid](int sig) { hold->SignalAll(pid, sig); };
    jo.job_alive = [hold, pid] { return hold->Populated(pid); };
  }
  // The cgroup's memory.current, where the memory controller gives one, covers every descendant.
  auto footprint = [&ctx, pid, hold] {
    Footprint f = JobFootprint(ctx, pid);
    if (auto cur = hold ? hold->MemoryCurrent() : std::nullopt) f.rss = std::max(f.rss.value_or(0), *cur);
    return f;
  };
  jo.footprint = footprint;
  if (o->checkpoint) AddCheckpoint(jo, rec, *o->checkpoint, o->config, pid, hold);
  if (o->config.kernel_signals) {  // issue 33: from the mark on, an NVRM no-memory record stops the job
    std::string note;
    if (auto k = KernelWatch::Start(ctx.fs, &note, kernel_from))
      jo.kernel = std::make_shared<KernelWatch>(std::move(*k));
    else if (!note.empty() && o->notes)
      *o->notes << "sparkops run: memory guard: " << note << "; NVRM NV_ERR_NO_MEMORY records will not stop the job\n";
    auto frag = std::make_shared<FragmentationWatch>(ctx.fs);  // issue 33: no free 2 MiB block while the job grows
    if (frag->note().empty()) jo.fragmentation = std::move(frag);
    else if (o->notes) *o->notes << "sparkops run: memory guard: " << frag->note() << "\n";
  }
  Ledger initial;
  initial.mode = "run", initial.min_available_bytes = o->config.floor, initial.max_pressure = o->config.max_pressure;
  // The run directory, for `top` (issue 37), with links resolved: top refuses a path through a link.
  std::error_code ec;
  if (auto abs = std::filesystem::weakly_canonical(rec.dir(), ec); !ec) {
    std::string dir = abs.string();
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (RunDirOk(dir)) initial.run_dir = dir;  // a name top could not show safely is not advertised
  }
  auto ledger =
      std::make_shared<LedgerWriter>(ResolveLedgerDir(ctx.Getenv("SPARKOPS_GUARD_LEDGER"), ::geteuid()), initial);
  if (auto e = ledger->error(); e && o->notes)
    *o->notes << "sparkops run: no guard ledger, so the exporter will not count this guard's actions: " << *e << "\n";
  return std::make_unique<JobGuard>(ctx.fs, std::move(jo), [&rec, ledger, footprint](const ActionRecord& a) {
    ledger->Count(a.action == Action::kFlush ? "flush" : a.killed ? "kill" : "terminate", ToString(a.reason));
    Footprint f;
    if (a.action == Action::kStop) {  // the larger of the reading at 2x the floor and one right after the signal
      Footprint now = footprint();
      auto larger = [](std::optional<uint64_t> x, std::optional<uint64_t> y) {
        return x && y ? std::max(*x, *y) : x ? x : y;
      };
      f = {larger(a.footprint.rss, now.rss), larger(a.footprint.gpu, now.gpu)};
    }
    (void)rec.Event(a.wall, "memory_guard", GuardEventFields(a, f));
  });
}

}  // namespace sparkops::guard
