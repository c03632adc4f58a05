#include "run/supervisor.h"
#include "telemetry/job_tree.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "analysis/step_series.h"
#include "base/number_flag.h"
#include "guard/event.h"
#include "host/child.h"
#include "host/kmsg_reader.h"
#include "host/pidns.h"
#include "host/proctable.h"
#include "run/live_slowdown.h"
#include "run/sentinel.h"
#include "telemetry/line_splitter.h"
#include "telemetry/loop.h"
#include "workloads/workload.h"

namespace sparkops {

namespace {

constexpr size_t kTailLines = 400;
constexpr size_t kLastSamples = 5;

int g_signal_pipe[2] = {-1, -1};
volatile std::sig_atomic_t g_signals = 0;

void OnSignal(int sig) {
  g_signals = g_signals + 1;
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t ignored = ::write(g_signal_pipe[1], &b, 1);
  (void)ignored;
}

/// Process snapshots for contention evidence: every other ML workload that appears (not the job
/// itself or its descendants) becomes a process_start record; one that goes away, process_exit.
class ProcessWatch {
 public:
  ProcessWatch(const HostView& ctx, RunRecorder& rec, pid_t job) : ctx_(ctx), rec_(rec), job_(job) {}

  void Snapshot(const Sample& s) {
    GpuSnapshot gpu;
    if (s.gpu) gpu.gpus.push_back(*s.gpu);
    auto scan = ListWorkloads(ctx_, gpu);
    if (!scan) return;
    std::set<uint32_t> job_tree = JobTree();
    std::map<uint32_t, std::string> now;
    for (const Workload& w : scan->workloads) {
      if (job_tree.count(w.main.pid)) continue;
      now[w.main.pid] = KindName(w.kind);
      if (first_ || seen_.count(w.main.pid)) continue;
      nlohmann::ordered_json f;
      f["pid"] = w.main.pid;
      f["name"] = KindName(w.kind);
      f["kind"] = w.training ? "trainer" : KindName(w.kind);
      f["verdict"] = VerdictName(w.verdict);
      f["cap"] = w.cap.text;
      if (auto b = w.PoolBytes()) f["pool_gib"] = static_cast<double>(*b) / (1u << 30);
      f["cmdline"] = w.main.command;
      (void)rec_.Event(s.time, "process_start", f);
    }
    if (!first_)
      for (const auto& [pid, name] : seen_)
        if (!now.count(pid)) (void)rec_.Event(s.time, "process_exit", {{"pid", pid}, {"name", name}});
    seen_ = std::move(now);
    first_ = false;
  }

 private:
  std::set<uint32_t> JobTree() {
    auto table = ReadProcessTable(ctx_.fs);
    if (!table) return {static_cast<uint32_t>(job_)};
    // The job is this process's child: under the real root, /proc may number it otherwise (host/pidns.h).
    auto root = ProcPidOf(ctx_.fs, static_cast<uint32_t>(job_));
    if (!root) return {};
    return guard::ProcessTree(*table, *root);
  }

  const HostView& ctx_;
  RunRecorder& rec_;
  pid_t job_;
  bool first_ = true;  ///< the first snapshot is the baseline: what ran before the job is not new
  std::map<uint32_t, std::string> seen_;
};

/// Counts the run directory's failed writes (thread-safe: output lines on the main thread, rows on
/// the sampler's). The first failure and the first success after failures become events when the
/// disk lets them through, so a gap in train.log or thermal.csv is never silent.
class WriteFailures {
 public:
  explicit WriteFailures(RunRecorder& rec) : rec_(rec) {}
  void Failed(const std::string& message, bool row) {
    std::lock_guard lock(mu_);
    ++(row ? rows_ : lines_);
    ++gap_;
    if (first_error_.empty()) {
      first_error_ = message;
      (void)rec_.Event(std::chrono::system_clock::now(), "write_error", {{"error", message}});
    }
  }
  void Succeeded() {
    if (gap_.load(std::memory_order_relaxed) == 0) return;  // the common case: no lock
    std::lock_guard lock(mu_);
    if (gap_ == 0) return;
    if (rec_.Event(std::chrono::system_clock::now(), "records_lost",
                   {{"log_lines", lines_ - reported_lines_}, {"thermal_rows", rows_ - reported_rows_}}))
      reported_lines_ = lines_, reported_rows_ = rows_, gap_ = 0;
  }
  void Into(SuperviseResult& res) {
    std::lock_guard lock(mu_);
    res.lost_log_lines = lines_, res.lost_rows = rows_, res.write_error = first_error_;
  }

 private:
  RunRecorder& rec_;
  std::mutex mu_;
  uint64_t lines_ = 0, rows_ = 0, reported_lines_ = 0, reported_rows_ = 0;
  std::atomic<uint64_t> gap_{0};
  std::string first_error_;
};

}  // namespace

Result<SuperviseResult> Supervise(const HostView& ctx, RunRecorder& rec, const SuperviseOptions& o,
                                  const std::function<void(pid_t)>& on_start) {
  if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return IoError("pipe: cannot create");
  struct sigaction sa {
  }, ign{}, old_int{}, old_term{}, old_hup{}, old_pipe{};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGHUP, &sa, &old_hup);
  // A live-view reader that goes away must cost the live view only (LiveView's thread gets EPIPE):
  // dying of SIGPIPE would also close the job's output pipe and so kill the job at its next
  // write. (The job gets SIG_DFL back.)
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ::sigaction(SIGPIPE, &ign, &old_pipe);
  auto restore = [&] {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    ::sigaction(SIGHUP, &old_hup, nullptr);
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
    ::close(g_signal_pipe[0]), ::close(g_signal_pipe[1]);
  };

  SuperviseResult res;
  std::mutex mu;  // res.last_samples, res.cgroup_current_max
  WriteFailures writes(rec);
  std::atomic<bool> stop{false};
  std::atomic<pid_t> job_pid{0};  // the current attempt's job, for the sampler's process snapshots
  std::optional<KmsgMark> first_mark;  // issue 33: the sampler follows the kernel log from the first spawn
  std::thread sampler_thread;     // started with the first attempt; runs across all of them
  auto start_sampler = [&] {
    sampler_thread = std::thread([&] {
      SamplerOptions so;
      so.kernel_from = first_mark;
      Sampler sampler(ctx, so);
      if (!sampler.kernel_log_note().empty())  // issue 33: said once, in the run's events
        (void)rec.Event(std::chrono::system_clock::now(), "kernel_log_unreadable",
                        nlohmann::ordered_json{{"detail", sampler.kernel_log_note()}});
      EventDetector detector;
      std::optional<ProcessWatch> watch;
      std::optional<JobContention> contention;
      pid_t watched = 0;
      LoopOptions lo;
      lo.interval_s = o.interval_s;
      uint64_t pending_lost = 0;  // rows lost since the last one written: marked on the next
      // Issue 34: a live slowdown verdict from the steps so far (one `slowdown` event per episode).
      auto utc = LocalZone::Make("UTC", ctx.fs);
      std::optional<LiveSlowdown> slow;
      if (utc) slow.emplace(rec.dir() + "/train.log", rec.dir() + "/thermal.csv", rec.dir() + "/events.jsonl", *utc);
      (void)SampleLoop(sampler, detector, lo, StopFlags{nullptr, &stop}, [&](const Sample& taken) -> Result<void> {
        if (const pid_t job = job_pid.load(); job != watched) {  // a new attempt: its own process tree
          watched = job;
          watch.emplace(ctx, rec, job);
          contention.emplace(static_cast<uint32_t>(job), static_cast<uint32_t>(::getpid()));  // issue #24
        }
        Sample s = taken;
        auto hot = contention->Fill(ctx.fs, s);
        if (pending_lost > 0) s.events.push_back("rows_lost:" + std::to_string(pending_lost));
        auto w = rec.Thermal(s);
        if (hot) (void)rec.Event(s.time, "host_contention", *hot);
        if (!w) {
          ++pending_lost;
          writes.Failed(w.error().message, /*row=*/true);
        } else {
          pending_lost = 0;
          writes.Succeeded();
        }
        watch->Snapshot(s);
        if (slow)
          for (auto& f : slow->Check(guard::MonoSeconds())) (void)rec.Event(s.time, "slowdown", f);
        const auto cur = o.hold ? o.hold->MemoryCurrent() : std::nullopt;
        std::lock_guard lock(mu);
        if (cur) res.cgroup_current_max = std::max(res.cgroup_current_max.value_or(0), *cur);
        res.last_samples.push_back(s);
        if (res.last_samples.size() > kLastSamples) res.last_samples.erase(res.last_samples.begin());
        return {};  // keep sampling: rows resume when the disk has room again
      });
    });
  };
  auto finish = [&] {
    stop = true;
    if (sampler_thread.joinable()) sampler_thread.join();
    writes.Into(res);
    restore();
  };

  const bool attempts = o.restart.enabled();
  using Clock = std::chrono::steady_clock;
  for (int attempt = 1;; ++attempt) {
    ::setenv("SPARKOPS_ATTEMPT", std::to_string(attempt).c_str(), 1);  // the job's side (docs/restart.md)
    AttemptResult ar;
    ar.number = attempt;
    ar.start = std::chrono::system_clock::now();
    // issue 33: the kernel log's mark before the spawn: a record the job's first milliseconds bring
    // counts (the guard and the sampler start after the spawn). Unreadable: they start from their own start.
    std::optional<KmsgMark> kmsg_mark;
    if (auto m = KmsgMarkNow(ctx.fs)) kmsg_mark = *m;
    if (attempt == 1) first_mark = kmsg_mark;
    auto child = SpawnChild(o.argv, o.use_pty, o.hold ? o.hold->procs_fd() : -1);
    if (!child) {
      if (attempt == 1) {
        finish();
        return std::unexpected(child.error());
      }
      (void)rec.Event(std::chrono::system_clock::now(), "attempt_start",
                      {{"attempt", attempt}, {"pid", nullptr}, {"error", child.error().message}});
      ar.end = ar.start, ar.status = 127, ar.end_reason = AttemptEnd::kCrash;
      res.status = 127, res.term_signal.reset(), res.guard_stop.reset(), res.tail.clear();
      res.attempts.push_back(ar);
      break;
    }
    ar.pid = child->pid;
    // run killed (kill -9): the sentinel stops the job with the grace, its output still reaching train.log.
    auto sentinel = Sentinel::Start(*child, rec.log_fd(), rec.events_fd(), o.grace_s);
    if (o.hold && sentinel) o.hold->Exclude(sentinel->pid());  // run's own helper, not the job's
    if (o.hold && o.hold->mode() == JobHold::Mode::kCgroup && !o.hold->Holds(child->pid))
      o.hold->FallBack("the job could not be moved into " + o.hold->path());
    on_start(child->pid);
    if (attempts) {
      (void)rec.Event(ar.start, "attempt_start", {{"attempt", attempt}, {"pid", child->pid}});
      (void)rec.Log(ar.start, 'o', AttemptMarkerText(attempt));
    }
    job_pid = child->pid;
    if (!sampler_thread.joinable()) start_sampler();  // after the first sentinel's fork, as the live view
    if (!res.live) res.live = std::make_unique<LiveView>(o.live_out_fd, o.live_err_fd);
    // The guard (and its checkpoint request) is armed afresh on each attempt's job.
    auto mem_guard = guard::StartRunGuard(ctx, rec, o.guard, child->pid, o.hold, kmsg_mark);
    res.tail.clear();
    res.escalated = false;
    const bool forwarded_before = res.forwarded.has_value();

    LineSplitter split_out, split_err;
    auto record = [&](char stream) {
      return [&, stream](std::string_view line) {
        if (auto w = rec.Log(std::chrono::system_clock::now(), stream, line); !w)
          writes.Failed(w.error().message, /*row=*/false);
        else writes.Succeeded();
        res.tail.emplace_back(line.substr(0, 4096));
        if (res.tail.size() > kTailLines) res.tail.pop_front();
      };
    };
    auto on_out = record('o'), on_err = record('e');
    int fds[2] = {child->out_fd, child->err_fd};
    std::optional<int> exit_status;
    std::optional<Clock::time_point> kill_at, drain_until;
    char buf[65536];
    for (;;) {
      if (!exit_status) {
        if (auto st = PollChild(*child)) {
          exit_status = st;
          drain_until = Clock::now() + std::chrono::milliseconds(500);  // output still in flight
        }
      }
      if (exit_status && ((fds[0] < 0 && fds[1] < 0) || Clock::now() >= *drain_until)) break;
      if (kill_at && Clock::now() >= *kill_at && !res.escalated) {
        SignalChildGroup(*child, SIGKILL);
        res.escalated = true;
      }
      pollfd p[3];
      int idx[3];
      nfds_t n = 0;
      p[n] = {g_signal_pipe[0], POLLIN, 0}, idx[n++] = -1;
      for (int i = 0; i < 2; ++i)
        if (fds[i] >= 0) p[n] = {fds[i], POLLIN, 0}, idx[n++] = i;
      int r = ::poll(p, n, 100);
      if (r < 0 && errno != EINTR) break;
      for (nfds_t k = 0; r > 0 && k < n; ++k) {
        if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (idx[k] < 0) {
          unsigned char sig;
          while (::read(g_signal_pipe[0], &sig, 1) == 1) {
            if (!res.forwarded) {
              res.forwarded = sig;
              SignalChildGroup(*child, sig);
              kill_at = Clock::now() + SecondsToDuration(o.grace_s);
              (void)rec.Event(std::chrono::system_clock::now(), "signal",
                              {{"signal", strsignal(sig)}, {"action", "forwarded to the job"}});
            } else if (!res.escalated) {
              SignalChildGroup(*child, SIGKILL);  // a second Ctrl-C escalates
              res.escalated = true;
            }
          }
          continue;
        }
        int i = idx[k];
        ssize_t got = ::read(fds[i], buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {  // EOF (or EIO on a pty whose job has exited)
          (i == 0 ? split_out : split_err).Finish(i == 0 ? on_out : on_err);
          ::close(fds[i]);
          fds[i] = -1;
          continue;
        }
        res.live->Show(i, std::string_view(buf, static_cast<size_t>(got)));
        (i == 0 ? split_out : split_err)
            .Feed(std::string_view(buf, static_cast<size_t>(got)), i == 0 ? on_out : on_err);
      }
    }
    for (int i = 0; i < 2; ++i)
      if (fds[i] >= 0) {
        (i == 0 ? split_out : split_err).Finish(i == 0 ? on_out : on_err);
        ::close(fds[i]);
      }
    if (!exit_status) exit_status = WaitChild(*child);
    res.guard_stop.reset();
    if (mem_guard) {
      mem_guard->Stop();
      if (mem_guard->stopped_job()) res.guard_stop = mem_guard->stop_record();
    }
    SignalChildGroup(*child, SIGKILL);  // nothing of the job outlives it (ESRCH when none is left)
    if (sentinel) sentinel->Disarm();
    ar.end = std::chrono::system_clock::now();
    ar.status = res.status = *exit_status;
    res.term_signal.reset();
    if (res.status > 128) ar.term_signal = res.term_signal = res.status - 128;
    ar.end_reason =
        ClassifyAttempt(res.status, res.forwarded.has_value() && !forwarded_before, res.guard_stop.has_value());
    if (!attempts || res.forwarded || !ShouldRestart(o.restart, ar.end_reason, attempt)) {
      res.attempts.push_back(ar);
      break;
    }
    ar.backoff_s = RestartBackoff(o.restart, attempt + 1);
    res.attempts.push_back(ar);
    nlohmann::ordered_json f = {{"attempt", attempt}, {"reason", ToString(ar.end_reason)}};
    if (ar.term_signal) f["signal"] = strsignal(*ar.term_signal);
    else f["code"] = ar.status;
    f["backoff_s"] = *ar.backoff_s;
    f["next_attempt"] = attempt + 1;
    if (o.before_restart) {
      const nlohmann::ordered_json more = o.before_restart(attempt + 1);  // kept alive for the loop
      for (const auto& [k, v] : more.items()) f[k] = v;
    }
    (void)rec.Event(ar.end, "restart", f);
    // The backoff: a signal to run now ends the run (the last attempt's status stays run's).
    const auto until = Clock::now() + SecondsToDuration(*ar.backoff_s);
    while (!res.forwarded && Clock::now() < until) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      pollfd p{g_signal_pipe[0], POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 1, 100))) > 0) {
        unsigned char sig;
        if (::read(g_signal_pipe[0], &sig, 1) == 1) {
          res.forwarded = sig;
          (void)rec.Event(std::chrono::system_clock::now(), "signal",
                          {{"signal", strsignal(sig)}, {"action", "no restart: run stops"}});
        }
      }
    }
    if (res.forwarded) break;
  }
  finish();
  return res;
}

}  // namespace sparkops
