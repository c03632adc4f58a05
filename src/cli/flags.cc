#include "cli/flags.h"

#include <algorithm>

#include "base/error.h"

namespace sparkops {

std::unique_ptr<CLI::App> NewApp(const std::string& command, const std::string& description) {
  auto app = std::make_unique<CLI::App>(description, "sparkops " + command);
  app->footer(
      "Global options: --root DIR, --nvml PATH|none, --nvidia-smi PATH|none, --json (see `sparkops help`).");
  return app;
}

std::optional<int> ParseFlags(CLI::App& app, const std::vector<std::string>& args, Context& ctx) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    ctx.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    ctx.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    ctx.err << app.get_name() << ": " << e.what() << "\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace sparkops
