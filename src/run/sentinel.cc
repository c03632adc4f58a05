#include "run/sentinel.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "base/json_text.h"
#include "base/timefmt.h"
#include "run/run_recorder.h"
#include "telemetry/line_splitter.h"

namespace sparkops {

namespace {

constexpr int kCtlFd = 3, kOutFd = 4, kErrFd = 5, kLogFd = 6, kEventsFd = 7;

void WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

void Event(int fd, const char* stage, pid_t pgid, double grace_s, std::optional<off_t> log_offset = {}) {
  nlohmann::ordered_json j = {{"time", FormatUtcMillis(std::chrono::system_clock::now())},
                              {"type", "supervisor_lost"},
                              {"stage", stage},
                              {"job_pgid", pgid},
                              {"grace_s", grace_s}};
  if (log_offset) j["train_log_offset"] = *log_offset;
  WriteAll(fd, JsonText(j, -1) + "\n");
}

/// train.log's size when run died (records before it are run's, after it the sentinel's); a
/// record the kill cut short is ended with a newline so the sentinel's first one stays whole.
off_t SealLog(int log) {
  off_t size = ::lseek(log, 0, SEEK_END);
  char last = '\n';
  if (size > 0 && ::pread(log, &last, 1, size - 1) == 1 && last != '\n') WriteAll(log, "\n");
  return size < 0 ? 0 : size;
}

/// The sentinel's life after run died: SIGTERM, record output, SIGKILL after the grace.
[[noreturn]] void Act(pid_t pgid, double grace_s, bool have_err) {
  const int log = kLogFd, ev = kEventsFd;
  Event(ev, "terminate", pgid, grace_s, SealLog(log));
  ::kill(-pgid, SIGTERM);
  using Clock = std::chrono::steady_clock;
  auto kill_at = Clock::now() + std::chrono::milliseconds(static_cast<long>(grace_s * 1000));
  bool killed = false;
  LineSplitter split[2];
  int fds[2] = {kOutFd, have_err ? kErrFd : -1};
  auto emit = [&](char stream) {
    return [&, stream](std::string_view line) {
      WriteAll(log, TrainLogRecord(std::chrono::system_clock::now(), stream, line));
    };
  };
  char buf[65536];
  std::optional<Clock::time_point> give_up;
  for (;;) {
    bool output_open = fds[0] >= 0 || fds[1] >= 0;
    // Output ended: every process holding it has exited, unless one closed it and lives on (then
    // the grace decides). A zombie nobody reaps (no init in a container) still counts as "in the group".
    if (!output_open && (killed || ::kill(-pgid, 0) != 0)) break;
    if (!killed && Clock::now() >= kill_at) {
      ::kill(-pgid, SIGKILL);
      killed = true;
      give_up = Clock::now() + std::chrono::seconds(2);  // a pipe a stray process holds may never end
      Event(ev, "kill", pgid, grace_s);
    }
    if (give_up && Clock::now() >= *give_up) break;
    pollfd p[2];
    int n = 0, which[2];
    for (int i = 0; i < 2; ++i)
      if (fds[i] >= 0) p[n] = {fds[i], POLLIN, 0}, which[n++] = i;
    if (n == 0) {
      ::usleep(50000);
      continue;
    }
    if (::poll(p, static_cast<nfds_t>(n), 50) < 0 && errno != EINTR) break;
    for (int k = 0; k < n; ++k) {
      if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = which[k];
      ssize_t got = ::read(fds[i], buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        split[i].Finish(emit(i == 0 ? 'o' : 'e'));
        ::close(fds[i]);
        fds[i] = -1;
        continue;
      }
      split[i].Feed(std::string_view(buf, static_cast<size_t>(got)), emit(i == 0 ? 'o' : 'e'));
    }
  }
  for (int i = 0; i < 2; ++i)
    if (fds[i] >= 0) split[i].Finish(emit(i == 0 ? 'o' : 'e'));
  Event(ev, "done", pgid, grace_s);
  ::fdatasync(log), ::fdatasync(ev);
  ::_exit(0);
}

}  // namespace

Result<Sentinel> Sentinel::Start(const Child& job, int log_fd, int events_fd, double grace_s) {
  int ctl[2];
  if (::pipe2(ctl, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ctl[0]), ::close(ctl[1]);
    return IoError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // terminal signals for run's group (Ctrl-C) are run's to forward, not ours
    for (int s : {SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGTSTP}) ::signal(s, SIG_IGN);
    ::signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Keep only the control pipe and the job's output: every other descriptor of run is closed.
    int hi_ctl = ::fcntl(ctl[0], F_DUPFD, 100), hi_out = ::fcntl(job.out_fd, F_DUPFD, 100);
    int hi_err = job.err_fd >= 0 ? ::fcntl(job.err_fd, F_DUPFD, 100) : -1;
    int hi_log = ::fcntl(log_fd, F_DUPFD, 100), hi_ev = ::fcntl(events_fd, F_DUPFD, 100);
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
    ::dup2(hi_ctl, kCtlFd), ::dup2(hi_out, kOutFd);
    if (hi_err >= 0) ::dup2(hi_err, kErrFd);
    ::dup2(hi_log, kLogFd), ::dup2(hi_ev, kEventsFd);
    ::close_range(kEventsFd + 1, ~0U, 0);
    if (hi_err < 0) ::close(kErrFd);
    char b = 0;
    ssize_t n;
    while ((n = ::read(kCtlFd, &b, 1)) < 0 && errno == EINTR) {}
    if (n == 1) ::_exit(0);  // disarmed: run ended normally
    Act(job.pid, grace_s, hi_err >= 0);
  }
  ::close(ctl[0]);
  return Sentinel(ctl[1], pid);
}

void Sentinel::Disarm() {
  if (ctl_ >= 0) {
    ssize_t ignored = ::write(ctl_, "x", 1);
    (void)ignored;
    ::close(ctl_);
    ctl_ = -1;
  }
  if (pid_ > 0) {
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
    pid_ = -1;
  }
}

}  // namespace sparkops
