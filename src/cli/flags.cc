#include "cli/flags.h"

#include <algorithm>

#include "base/error.h"

namespace sparkops {

CLI::Validator NonEmpty() {
  return CLI::Validator([](std::string& v) { return v.empty() ? std::string("empty value") : std::string(); }, "",
                        "NonEmpty");
}

std::unique_ptr<CLI::App> NewApp(const std::string& command, const std::string& description) {
  auto app = std::make_unique<CLI::App>(description, "sparkops " + command);
  app->footer(
      "Global options: --root DIR, --nvml PATH|none, --nvidia-smi PATH|none, --machine CPU, --json (see `sparkops "
      "help`).");
  return app;
}

namespace {
/// Registers `name` as a one-value option whose text goes through ParseNumberFlag into `store`.
template <typename Store>
CLI::Option* AddParsed(CLI::App& app, const std::string& name, const NumberRange& range, const std::string& help,
                       Store store) {
  std::string flag = name.substr(0, name.find(','));
  auto* opt = app.add_option_function<std::string>(
      name,
      [flag, range, store](const std::string& text) {
        auto v = ParseNumberFlag(flag, text, range);
        if (!v) throw CLI::ValidationError(v.error().message);
        store(*v);
      },
      help + " (" + DescribeRange(range) + ")");
  opt->type_name(range.integer ? "INT" : "NUM");
  return opt;
}
}  // namespace

CLI::Option* AddNumber(CLI::App& app, const std::string& name, double& target, const NumberRange& range,
                       const std::string& help) {
  return AddParsed(app, name, range, help, [&target](double v) { target = v; });
}

CLI::Option* AddNumber(CLI::App& app, const std::string& name, int64_t& target, NumberRange range,
                       const std::string& help) {
  range.integer = true;
  return AddParsed(app, name, range, help, [&target](double v) { target = static_cast<int64_t>(v); });
}

CLI::Option* AddNumber(CLI::App& app, const std::string& name, std::optional<double>& target, const NumberRange& range,
                       const std::string& help) {
  return AddParsed(app, name, range, help, [&target](double v) { target = v; });
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
