#include "cli/top_screen.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "base/strings.h"

namespace sparkops {

namespace {

int g_wake[2] = {-1, -1};  ///< self-pipe: the signal handler writes 'W' (resize) or 'S' (stop)

void OnSignal(int sig) {
  int saved = errno;
  char c = sig == SIGWINCH ? 'W' : 'S';
  if (g_wake[1] >= 0) [[maybe_unused]]
    auto n = write(g_wake[1], &c, 1);
  errno = saved;
}

constexpr int kSignals[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[4];
struct sigaction g_old_pipe;

bool WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

TopTerminal::TopTerminal(int in_fd, int out_fd, bool full, bool color)
    : in_(in_fd), out_(out_fd), full_(full), color_(color && full) {
  if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < 4; ++i) sigaction(kSignals[i], &sa, &g_old[i]);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &g_old_pipe);
  if (isatty(in_) && tcgetattr(in_, &saved_) == 0) {
    struct termios t = saved_;
    t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // ISIG stays: Ctrl-C is SIGINT
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    raw_ = tcsetattr(in_, TCSANOW, &t) == 0;
  }
  if (full_) WriteAll(out_, "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J");
}

TopTerminal::~TopTerminal() {
  if (full_) WriteAll(out_, "\x1b[0m\x1b[?25h\x1b[?1049l");
  if (raw_) tcsetattr(in_, TCSANOW, &saved_);
  for (size_t i = 0; i < 4; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
  sigaction(SIGPIPE, &g_old_pipe, nullptr);
  for (int& fd : g_wake) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

TerminalSize TopTerminal::Size() const {
  struct winsize ws {};
  if (ioctl(out_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) return {ws.ws_col, ws.ws_row};
  TerminalSize s;
  auto env = [](const char* name, int fallback) {
    const char* v = std::getenv(name);
    auto n = v ? ParseUint(v) : std::nullopt;
    return n && *n >= 10 && *n <= 10000 ? static_cast<int>(*n) : fallback;
  };
  s.cols = env("COLUMNS", 80);
  s.rows = env("LINES", 24);
  return s;
}

bool TopTerminal::Draw(const std::vector<std::string>& lines) {
  std::string buf;
  if (full_) {
    buf = "\x1b[H";
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string sgr = color_ ? TopLineColor(lines[i], i) : "";
      buf += sgr + lines[i] + (sgr.empty() ? "" : "\x1b[0m") + "\x1b[K";
      if (i + 1 < lines.size()) buf += "\r\n";
    }
    buf += "\x1b[J";
  } else {
    buf = "\n";
    for (const auto& l : lines) buf += l + "\n";
  }
  return WriteAll(out_, buf);
}

int TopTerminal::WaitKey(int ms) {
  struct pollfd fds[2] = {{g_wake[0], POLLIN, 0}, {raw_ ? in_ : -1, POLLIN, 0}};
  int n = poll(fds, 2, ms);
  if (n <= 0) return kTimeout;
  if (fds[0].revents & POLLIN) {
    char c[16];
    ssize_t got = read(g_wake[0], c, sizeof c);
    for (ssize_t i = 0; i < got; ++i)
      if (c[i] == 'S') return kStop;
    return kResize;
  }
  if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) return kStop;  // the terminal went away
  if (fds[1].revents & POLLIN) {
    char c = 0;
    ssize_t got = read(in_, &c, 1);
    if (got == 0) return kStop;
    return got == 1 && c != 0 ? static_cast<unsigned char>(c) : kTimeout;
  }
  return kTimeout;
}

std::string TopLineColor(const std::string& line, size_t index) {
  if (index == 0 || StartsWith(line, "    PID")) return "\x1b[7m";
  if (line.find("BELOW") != std::string::npos || line.find("PROCHOT ON") != std::string::npos) return "\x1b[31m";
  if (line.find("uncapped") != std::string::npos || line.find("near-capacity") != std::string::npos) return "\x1b[33m";
  return "";
}

}  // namespace sparkops
