#pragma once
/// CLI11 glue for the per-command flag parsers.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/number_flag.h"
#include "cli/context.h"

namespace sparkops {

/// Parses `args` into `app`. Returns an exit code when the command must stop now:
/// 0 after printing --help to ctx.out, 2 after printing a usage error to ctx.err
/// (CLI11's own exit code 109 and friends are never exposed).
std::optional<int> ParseFlags(CLI::App& app, const std::vector<std::string>& args, Context& ctx);

/// Ranges shared by commands: a sampling interval, a run length, a SIGTERM-to-SIGKILL grace.
inline constexpr NumberRange kIntervalRange{0.001, 86400, false, false, "seconds"};
inline constexpr NumberRange kDurationRange{0, 366.0 * 86400, true, false, "seconds"};
inline constexpr NumberRange kGraceRange{0, 3600, false, false, "seconds"};

/// Adds a numeric option read by ParseNumberFlag (NaN, inf, garbage and values outside `range`
/// are usage errors naming the flag, the value and the range); the range is appended to `help`.
/// `target` keeps its default when the flag is absent.
CLI::Option* AddNumber(CLI::App& app, const std::string& name, double& target, const NumberRange& range,
                       const std::string& help);
CLI::Option* AddNumber(CLI::App& app, const std::string& name, int64_t& target, NumberRange range,
                       const std::string& help);
CLI::Option* AddNumber(CLI::App& app, const std::string& name, std::optional<double>& target, const NumberRange& range,
                       const std::string& help);

/// Refuses an empty value given explicitly (`--min-available ""`, an unset shell variable): the
/// default would be used silently otherwise. Chain with ->check(NonEmpty()).
CLI::Validator NonEmpty();

/// A CLI11 app set up the sparkops way (name "sparkops CMD", help flag, no config files).
std::unique_ptr<CLI::App> NewApp(const std::string& command, const std::string& description);

}  // namespace sparkops
