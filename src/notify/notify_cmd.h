#pragma once
/// `run --notify-cmd CMD`: one `/bin/sh -c CMD` per event, the event's JSON on its stdin, the
/// extra variables in its environment, its output to /dev/null, in its own process group; SIGKILL
/// to that group at the timeout or when `stop_fd` becomes readable.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace sparkops {

/// Ok when the command exits 0; else an Io error (exit N, signal, timed out, cannot start).
Result<void> RunNotifyCmd(const std::string& cmd, std::string_view stdin_text,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          std::chrono::milliseconds timeout, int stop_fd);

}  // namespace sparkops
