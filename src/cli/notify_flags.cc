#include "cli/notify_flags.h"

#include <fmt/format.h>

#include "cli/flags.h"
#include "notify/notify_config.h"

namespace sparkops {

void NotifyFlags::Add(CLI::App& app) {
  app.add_option("--notify", options.urls,
                 "POST one JSON object per event to this http:// URL (repeatable; HTTPS: --notify-cmd with curl)")
      ->check(NonEmpty())
      ->allow_extra_args(false);  // one value per --notify: run's job argv follows
  app.add_option("--notify-cmd", options.cmds,
                 "run this /bin/sh command per event, the event's JSON on stdin (repeatable; docs/notify.md)")
      ->check(NonEmpty())
      ->allow_extra_args(false);
  app.add_option("--notify-config", config_path,
                 "the notify config file when no --notify/--notify-cmd is given (default "
                 "~/.config/sparkops/notify.conf, then /etc/sparkops/notify.conf; none: no file)")
      ->check(NonEmpty())
      ->allow_extra_args(false);
}

Result<NotifyOptions> NotifyFlags::Resolve(const Context& ctx, std::ostream& note, std::string_view command) const {
  NotifyOptions o = options;
  if (o.urls.empty() && o.cmds.empty()) {
    for (const std::string& path : NotifyConfigPaths(config_path, ctx.env)) {
      auto text = ReadNotifyConfigFile(path, !config_path.empty());
      if (!text) return InputError("--notify-config: " + text.error().message);
      if (!*text) continue;
      auto targets = ParseNotifyConfig(**text, path);
      if (!targets) return InputError("--notify-config: " + targets.error().message);
      o.urls = std::move(targets->urls);
      o.cmds = std::move(targets->cmds);
      if (!o.urls.empty() || !o.cmds.empty())
        note << "sparkops " << command << ": notify targets from " << path << " (" << o.urls.size() << " URL, "
             << o.cmds.size() << " command)\n";
      break;
    }
  }
  if (auto v = ValidateNotifyOptions(o); !v) return std::unexpected(v.error());
  return o;
}

}  // namespace sparkops
