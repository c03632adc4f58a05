#include "cli/dispatch.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/strings.h"
#include "build_info.h"

namespace sparkops {

Result<std::vector<std::string>> ExtractGlobalOptions(const std::vector<std::string>& args, const Env& env,
                                                      GlobalOptions& opts) {
  auto from_env = [&](const char* name) -> const std::string* {
    auto it = env.find(name);
    return it == env.end() || it->second.empty() ? nullptr : &it->second;
  };
  bool nvml_given = false, smi_given = false, root_given = false, machine_given = false;
  if (auto* v = from_env("SPARKOPS_ROOT")) opts.root = *v, root_given = true;
  if (auto* v = from_env("SPARKOPS_NVML")) opts.nvml = *v, nvml_given = true;
  if (auto* v = from_env("SPARKOPS_NVIDIA_SMI")) opts.nvidia_smi = *v, smi_given = true;
  if (auto* v = from_env("SPARKOPS_MACHINE")) opts.machine = *v, machine_given = true;

  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {  // everything after belongs to the command (e.g. `run -- CMD --json`)
      rest.insert(rest.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    if (a == "--json") {
      opts.json = true;
      continue;
    }
    struct Valued {
      const char* flag;
      std::string* target;
      bool* given;
    } valued[] = {{"--root", &opts.root, &root_given},
                  {"--nvml", &opts.nvml, &nvml_given},
                  {"--nvidia-smi", &opts.nvidia_smi, &smi_given},
                  {"--machine", &opts.machine, &machine_given}};
    bool matched = false;
    for (auto& v : valued) {
      std::string flag = v.flag;
      if (a == flag) {
        if (i + 1 >= args.size()) return InputError(flag + ": needs a value");
        *v.target = args[++i];
      } else if (StartsWith(a, flag + "=")) {
        *v.target = a.substr(flag.size() + 1);
      } else {
        continue;
      }
      if (v.target->empty()) return InputError(flag + ": empty value");
      *v.given = true;
      matched = true;
      break;
    }
    if (!matched) rest.push_back(a);
  }
  if (machine_given) {  // judged as `uname -m` names it; aliases as Python's platform.machine() may give them
    if (opts.machine == "arm64") opts.machine = "aarch64";
    if (opts.machine == "amd64") opts.machine = "x86_64";
    if (opts.machine != "aarch64" && opts.machine != "x86_64")
      return InputError("--machine: unknown machine '" + opts.machine + "' (use aarch64 or x86_64)");
  }
  if (root_given && opts.root != "/") {
    if (!nvml_given) opts.nvml = "none";
    if (!smi_given) opts.nvidia_smi = "none";
  }
  return rest;
}

namespace {

void PrintHelp(std::ostream& out) {
  out << "sparkops " SPARKOPS_VERSION
         " - DGX Spark (GB10) training preflight, memory planning and telemetry\n\n"
         "usage: sparkops [--root DIR] [--nvml PATH|none] [--nvidia-smi PATH|none] [--machine CPU] [--json] COMMAND "
         "[ARGS]\n\n"
         "commands:\n";
  for (const Command& c : Commands()) out << fmt::format("  {:<11} {}\n", c.name, c.summary);
  out << "\nglobal options (also accepted after the command; each has an environment variable):\n"
         "  --root DIR              read host files (/proc, /sys, /etc, ...) under DIR   SPARKOPS_ROOT\n"
         "  --nvml PATH|none        NVML library to dlopen (default libnvidia-ml.so.1)  SPARKOPS_NVML\n"
         "  --nvidia-smi PATH|none  nvidia-smi fallback (default: from PATH)            SPARKOPS_NVIDIA_SMI\n"
         "  --machine aarch64|x86_64  judge Python environments for this CPU (ELF machine, markers)\n"
         "                          instead of this host's                        SPARKOPS_MACHINE\n"
         "  --json                  one JSON document on stdout\n"
         "  --root implies --nvml none --nvidia-smi none unless those are given.\n\n"
         "exit codes: 0 fine, 1 a problem was found, 2 usage or input error.\n"
         "`sparkops help COMMAND` or `sparkops COMMAND --help` shows a command's flags.\n";
}

void PrintVersion(std::ostream& out) {
  out << "sparkops " SPARKOPS_VERSION " (git " SPARKOPS_GIT_REV ", " SPARKOPS_BUILD_ARCH ", " SPARKOPS_COMPILER ")\n";
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : Commands())
    if (name == c.name) return &c;
  return nullptr;
}

/// The nearest command name within a small edit distance, or "".
std::string Nearest(std::string_view name) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const Command& c : Commands()) {
    size_t d = EditDistance(name, c.name);
    if (d < best_d) best_d = d, best = c.name;
  }
  return best_d <= std::max<size_t>(2, name.size() / 3) ? best : std::string();
}

}  // namespace

int Run(const std::vector<std::string>& args, const Env& env, std::ostream& out, std::ostream& err) {
  GlobalOptions opts;
  auto rest = ExtractGlobalOptions(args, env, opts);
  if (!rest) {
    err << "sparkops: " << rest.error().message << "\n";
    return kExitUsage;
  }
  if (rest->empty()) {
    PrintHelp(err);
    return kExitUsage;
  }
  const std::string name = rest->front();
  if (name == "--version" || name == "version") {
    PrintVersion(out);
    return kExitOk;
  }
  if (name == "help" || name == "--help" || name == "-h") {
    if (rest->size() > 1) {
      const Command* c = FindCommand((*rest)[1]);
      if (!c) {
        err << "sparkops help: unknown command '" << (*rest)[1] << "'\n";
        return kExitUsage;
      }
      Context ctx{opts, HostFs(opts.root), env, out, err};
      return c->fn(ctx, {"--help"});
    }
    PrintHelp(out);
    return kExitOk;
  }
  const Command* cmd = FindCommand(name);
  if (cmd && opts.root != "/") {  // a mistyped fixture tree must not read as an empty, healthy machine
    struct stat st {};
    int rc = ::stat(opts.root.c_str(), &st);
    if (rc != 0 || !S_ISDIR(st.st_mode)) {
      err << "sparkops: --root " << opts.root << ": "
          << (rc != 0 ? std::string(std::strerror(errno)) : std::string("not a directory")) << "\n";
      return kExitUsage;
    }
  }
  if (!cmd) {
    err << "sparkops: unknown command '" << name << "'";
    if (std::string n = Nearest(name); !n.empty()) err << ", did you mean '" << n << "'?";
    err << "\nrun 'sparkops help' for the list of commands\n";
    return kExitUsage;
  }
  Context ctx{opts, HostFs(opts.root), env, out, err};
  return cmd->fn(ctx, std::vector<std::string>(rest->begin() + 1, rest->end()));
}

}  // namespace sparkops
