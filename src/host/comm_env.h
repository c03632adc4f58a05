#pragma once
/// NCCL/UCX settings for G10's pair link (issue 18), each with where it was set. Real places read:
///   - the shell (the user's environment);
///   - NCCL's own files: `$NCCL_CONF_FILE` or `~/.nccl.conf`, and `/etc/nccl.conf` (KEY=VALUE lines;
///     NCCL loads them in every process, and a variable set in the environment wins);
///   - DeepSpeed's `.deepspeed_env` (name from `$DS_ENV_FILE`) in the home directory, then the
///     working directory: on a multi-node launch DeepSpeed's runner exports each KEY=VALUE line to
///     every node, after (so over) the shell's NCCL_* and UCX_* variables;
///   - a launch script's `export K=V` and `K=V launcher ...` lines (workloads/parallelism.h);
///   - a running launcher's environment (/proc/PID/environ).
/// accelerate's config YAML and DeepSpeed's JSON have no environment section.
#include <string>
#include <string_view>
#include <vector>

#include "host/host_view.h"

namespace sparkops {

/// One variable as set in one place.
struct EnvSetting {
  std::string name;    ///< NCCL_IB_HCA
  std::string value;   ///< rocep1s0f0,roceP2p1s0f0
  std::string source;  ///< "shell", "/home/u/.deepspeed_env line 2", "run.sh line 4", "pid 4101 (torchrun)"
};

/// Whether G10 keeps `name`: NCCL_*, UCX_*, GLOO_SOCKET_IFNAME.
bool IsCommVar(std::string_view name);

struct EnvFile {
  std::vector<EnvSetting> settings;  ///< the NCCL/UCX lines, in file order; source "<name> line N"
  std::vector<int> bad_lines;        ///< lines that are not KEY=VALUE (DeepSpeed's runner stops on them)
};

/// Pure: KEY=VALUE lines as DeepSpeed and NCCL read them: split at the first '=', key and value
/// trimmed, one pair of surrounding quotes dropped; blank lines and '#' lines skipped. A line that
/// is not an identifier '=' printable text (a binary line, a value over 4 KiB) is a bad line.
EnvFile ParseEnvFile(std::string_view text, const std::string& name);

/// The NCCL/UCX settings of the files above that exist, each read bounded (64 KiB) through
/// `host.fs`; `cwd` is the working directory (a host path). A file that cannot be read (too
/// large, a FIFO, a directory) or has bad lines adds one line to `notes` naming it.
std::vector<EnvSetting> ReadCommEnvFiles(const HostView& host, const std::string& cwd, std::vector<std::string>& notes);

/// The NCCL/UCX variables of an environment (the shell's, a process's), source `source`.
std::vector<EnvSetting> CommEnvOf(const Env& env, const std::string& source);

}  // namespace sparkops
