#pragma once
/// Terminal control in a job's output (issue #24). When `run`'s own output is not a terminal the
/// job gets pipes, and Rich (Lightning's default bar when `rich` is installed) then draws nothing
/// until a task ends; the environment Rich honours makes it draw live bars into the pipe, each
/// redraw a "\r\x1b[2K" + the bar. train.log keeps every byte as printed (docs/run-directory.md:
/// '\r' ends a record); analyze's step parsers read each record without its control sequences
/// (analysis/step_series.cc), so coloured lines and bars from a job on a pty are steps too.
#include <string>
#include <string_view>

namespace sparkops {

/// `text` without ANSI control sequences: CSI (ESC '[' parameters final-byte), OSC (ESC ']' ...
/// BEL or ESC '\'), and two-byte ESC sequences. Returns `text` itself (no copy) when it holds no ESC.
std::string_view StripTerminalControls(std::string_view text, std::string* storage);

/// Sets, for a job `run` starts on pipes, the environment variables that make Rich draw live
/// progress into a pipe: TTY_COMPATIBLE=1, TTY_INTERACTIVE=1 (rich >= 14 reads both), NO_COLOR=1
/// and COLUMNS=120; a variable the user already set is left alone. tqdm needs nothing (it draws
/// into pipes). Changes this process's environment (inherited by the child).
void SetLiveBarEnvironment();

}  // namespace sparkops
