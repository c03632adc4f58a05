#pragma once
/// CLI11 glue for the per-command flag parsers.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"

namespace sparkops {

/// Parses `args` into `app`. Returns an exit code when the command must stop now:
/// 0 after printing --help to ctx.out, 2 after printing a usage error to ctx.err
/// (CLI11's own exit code 109 and friends are never exposed).
std::optional<int> ParseFlags(CLI::App& app, const std::vector<std::string>& args, Context& ctx);

/// A CLI11 app set up the sparkops way (name "sparkops CMD", help flag, no config files).
std::unique_ptr<CLI::App> NewApp(const std::string& command, const std::string& description);

}  // namespace sparkops
