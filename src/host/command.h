#pragma once
/// Runs an external program (nvidia-smi, cuobjdump, python3 -S) by argv only - never through a
/// shell - in its own process group, with a timeout that kills the whole group.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace sparkops {

struct CommandOptions {
  std::chrono::milliseconds timeout{5000};  ///< default 5 s
  size_t max_output = 8u << 20;             ///< bytes kept per stream; the rest is read and dropped
  /// When set, the child's environment is exactly this (else it inherits ours).
  std::optional<std::map<std::string, std::string>> env;
};

struct CommandResult {
  std::optional<int> exit_code;  ///< absent when killed by a signal
  std::optional<int> signal;     ///< the signal that ended it
  bool timed_out = false;        ///< we killed it after `timeout`
  std::string out, err;
  bool ok() const { return !timed_out && exit_code && *exit_code == 0; }
};

/// NotFound when argv[0] cannot be executed (missing, not executable); Io on fork/pipe failure.
/// A program that runs and fails is a CommandResult, not an Error.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const CommandOptions& opts = {});

}  // namespace sparkops
