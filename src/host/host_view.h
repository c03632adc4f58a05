#pragma once
/// HostView: the one seam through which every layer below cli/ reads the machine. The command
/// layer builds it from the global flags (--root, --nvml, --nvidia-smi) and the user's
/// environment, and passes it down; nothing below cli/ knows about flags or output streams.
#include <map>
#include <string>

#include "host/hostfs.h"

namespace sparkops {

using Env = std::map<std::string, std::string>;

/// How the machine is reached: its file tree, its NVML library, its nvidia-smi.
struct HostOptions {
  std::string root = "/";                  ///< --root / SPARKOPS_ROOT
  std::string nvml = "libnvidia-ml.so.1";  ///< --nvml / SPARKOPS_NVML; "none" disables
  std::string nvidia_smi = "nvidia-smi";   ///< --nvidia-smi / SPARKOPS_NVIDIA_SMI; "none" disables
};

struct HostView {
  HostOptions opts;
  HostFs fs;  ///< every host path, resolved under opts.root
  Env env;    ///< the user's environment (VIRTUAL_ENV, PATH, TZ, ...), not the host root's

  /// Value of an environment variable, "" when unset.
  std::string Getenv(const std::string& name) const {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  }
  bool nvml_enabled() const { return opts.nvml != "none" && !opts.nvml.empty(); }
  bool nvidia_smi_enabled() const { return opts.nvidia_smi != "none" && !opts.nvidia_smi.empty(); }
};

/// The machine's host name: gethostname(2) on the real root; under another root, its
/// /proc/sys/kernel/hostname (whitespace trimmed). "" when there is none.
std::string ReadHostname(const HostView& host);

}  // namespace sparkops
