#pragma once
/// The notify flags `run`, `guard` and `sample` share: --notify URL, --notify-cmd CMD (both
/// repeatable) and --notify-config FILE|none; resolved into the targets, from the command line or
/// else from the notify config file (notify/notify_config.h, docs/notify.md).
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/context.h"
#include "notify/notifier.h"

namespace sparkops {

struct NotifyFlags {
  NotifyOptions options;    ///< --notify, --notify-cmd
  std::string config_path;  ///< --notify-config ("" = the default places, "none" = no file)

  /// Adds the flags to `app`; each takes one value per use (run's job argv follows them).
  void Add(CLI::App& app);
  /// The targets: the command line's when it names any, else the first config file found (`note`
  /// gets one line naming it). An input error names the flag or the file and line.
  Result<NotifyOptions> Resolve(const Context& ctx, std::ostream& note, std::string_view command) const;
};

}  // namespace sparkops
