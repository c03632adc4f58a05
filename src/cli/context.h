#pragma once
/// What every command gets: the global options, the host view and the output streams.
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "host/host_view.h"

namespace sparkops {

/// Global options (README, "Global options"), accepted before or after the command name: how to reach the
/// host (host/host_view.h) and the output format.
struct GlobalOptions : HostOptions {
  bool json = false;  ///< --json
  std::string machine = {};  ///< --machine / SPARKOPS_MACHINE: "aarch64", "x86_64"; "" = this host's
};

/// The host view (what lower layers take) plus what only commands see: the format and the streams.
struct Context : HostView {
  Context(const GlobalOptions& o, HostFs host_fs, Env user_env, std::ostream& out_stream, std::ostream& err_stream)
      : HostView{o, std::move(host_fs), std::move(user_env)},
        json(o.json),
        machine(o.machine),
        out(out_stream),
        err(err_stream) {}

  bool json = false;  ///< --json
  std::string machine;  ///< --machine: the CPU preflight judges ("" = this host's)
  std::ostream& out;
  std::ostream& err;
};

/// A command: parses its own flags from `args` (the words after the command name, global
/// options already removed) and returns the exit code.
using CommandFn = int (*)(Context& ctx, const std::vector<std::string>& args);

struct Command {
  const char* name;
  const char* summary;
  CommandFn fn;
};

/// The one table of commands (src/cli/commands.cc).
const std::vector<Command>& Commands();

}  // namespace sparkops
