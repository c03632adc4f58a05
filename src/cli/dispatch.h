#pragma once
/// The whole program as a function: main() only calls Run().
#include <ostream>
#include <string>
#include <vector>

#include "cli/context.h"

namespace sparkops {

/// Runs sparkops with `args` (argv without argv[0]) and the given environment; returns the exit code.
int Run(const std::vector<std::string>& args, const Env& env, std::ostream& out, std::ostream& err);

/// Splits global options out of `args` (stops at "--"). Applies the environment variables,
/// then the flags; `--root` implies `--nvml none --nvidia-smi none` unless those were given.
/// Returns the remaining words, or an Input error naming the flag.
Result<std::vector<std::string>> ExtractGlobalOptions(const std::vector<std::string>& args, const Env& env,
                                                      GlobalOptions& opts);

}  // namespace sparkops
