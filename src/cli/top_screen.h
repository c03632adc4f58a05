#pragma once
/// The terminal under `sparkops top` (docs/top.md, "The renderer"): a minimal renderer of its own
/// instead of ncurses/FTXUI (the binary stays glibc-only). Full mode: the alternate screen, the
/// cursor hidden, each frame drawn from the home position with clear-to-end-of-line and
/// clear-to-end-of-screen (no full clear, so no flicker). Plain mode (TERM=dumb, or output that is
/// not a terminal): each frame printed in full after a blank line, no control sequences. Keys are
/// read unbuffered from the terminal; SIGWINCH, SIGINT, SIGTERM and SIGHUP wake the wait.
#include <termios.h>

#include <optional>
#include <string>
#include <vector>

namespace sparkops {

struct TerminalSize {
  int cols = 80, rows = 24;
};

class TopTerminal {
 public:
  /// What WaitKey returns besides a key byte.
  static constexpr int kTimeout = 0, kResize = -1, kStop = -2;

  /// `full`: alternate screen and in-place redraws; `color`: SGR colours (NO_COLOR unset).
  /// Puts `in_fd` in non-canonical, no-echo mode when it is a terminal; installs the handlers.
  TopTerminal(int in_fd, int out_fd, bool full, bool color);
  /// Leaves the alternate screen, shows the cursor, restores the terminal mode and the handlers.
  ~TopTerminal();
  TopTerminal(const TopTerminal&) = delete;
  TopTerminal& operator=(const TopTerminal&) = delete;

  /// The terminal's size (TIOCGWINSZ), else $COLUMNS/$LINES, else 80x24.
  TerminalSize Size() const;
  /// Draws one frame. False when the output is gone (EPIPE, EIO: the terminal closed).
  bool Draw(const std::vector<std::string>& lines);
  /// Waits up to `ms` for a key byte, a resize or a stop signal.
  int WaitKey(int ms);

 private:
  int in_, out_;
  bool full_, color_, raw_ = false;
  struct termios saved_ {};
};

/// Pure: the SGR colour a frame line gets ("" for none): warnings in yellow, alarms in red, the
/// title and table heads in reverse video.
std::string TopLineColor(const std::string& line, size_t index);

}  // namespace sparkops
