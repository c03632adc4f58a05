#pragma once
/// What every command gets: the global options, the host view and the output streams.
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "host/hostfs.h"

namespace sparkops {

using Env = std::map<std::string, std::string>;

/// Global options (README, "Global options"), accepted before or after the command name.
struct GlobalOptions {
  std::string root = "/";                    ///< --root / SPARKOPS_ROOT
  std::string nvml = "libnvidia-ml.so.1";    ///< --nvml / SPARKOPS_NVML; "none" disables
  std::string nvidia_smi = "nvidia-smi";     ///< --nvidia-smi / SPARKOPS_NVIDIA_SMI; "none" disables
  bool json = false;                         ///< --json
};

struct Context {
  GlobalOptions opts;
  HostFs fs;
  Env env;  ///< the user's environment (VIRTUAL_ENV, PATH, TZ, ...), not the host root's
  std::ostream& out;
  std::ostream& err;

  /// Value of an environment variable, "" when unset.
  std::string Getenv(const std::string& name) const {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  }
  bool nvml_enabled() const { return opts.nvml != "none" && !opts.nvml.empty(); }
  bool nvidia_smi_enabled() const { return opts.nvidia_smi != "none" && !opts.nvidia_smi.empty(); }
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
