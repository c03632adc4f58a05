#pragma once
/// Shared test helpers: run sparkops in-process or as a subprocess, fixtures, golden files.
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace sparkops::testing {

struct RunOutput {
  int rc = -1;
  std::string out, err;
};

/// Runs sparkops in-process (Run()) with exactly `env` as its environment.
RunOutput RunInProcess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});
/// Runs the built sparkops binary as a subprocess (for signals, exit codes, real I/O).
RunOutput RunBinary(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                    int timeout_ms = 30000);
/// Where SpawnSparkops sends the child's standard output and error: a file path (created or
/// truncated), or for stdout a descriptor to dup (`out_fd` >= 0); empty = inherited from the test.
/// stdin is /dev/null.
struct SpawnIo {
  std::string out, err = "/dev/null";
  int out_fd = -1;
};
/// Starts the built sparkops (through TargetArgv) without waiting, for tests that signal or
/// kill it themselves; the pid, or -1.
pid_t SpawnSparkops(const std::vector<std::string>& args, const SpawnIo& io = {});

/// tests/fixtures/<name>
std::string Fixture(const std::string& name);
/// <build>/tests/<name>: artifacts built for the tests (stub NVML, fake site-packages, ...).
std::string BuildArtifact(const std::string& name);
std::string SparkopsBin();

/// The command prefix that runs a program built for the target on this host: empty in a native
/// build; in a cross build the CMAKE_CROSSCOMPILING_EMULATOR (e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu).
std::vector<std::string> TargetEmulator();
/// `argv` with TargetEmulator() in front: use it for every test-built program run as a subprocess
/// (RunBinary already does). Scripts and host tools (/bin/sh) are run as they are.
std::vector<std::string> TargetArgv(const std::vector<std::string>& argv);
/// TargetArgv(argv) as one shell word list, each word single-quoted: for `bash -c` scripts that
/// start a test-built program (`exec -a NAME ` + TargetShell({...})). Words must not hold a quote.
std::string TargetShell(const std::vector<std::string>& argv);
/// The architecture the tests (and sparkops) were built for, as CMake names it: "x86_64", "aarch64".
std::string BuildArch();

/// Compares `actual` with tests/golden/<name>; with SPARKOPS_UPDATE_GOLDEN=1 rewrites the file.
/// Returns "" when equal, else a diff-like message.
std::string CheckGolden(const std::string& name, const std::string& actual);

/// A fresh temporary directory removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Write(const std::string& rel, const std::string& content) const;  ///< returns full path

 private:
  std::string path_;
};

std::string ReadFileOrDie(const std::string& path);

/// Sets an environment variable of this process (e.g. read by the stub NVML) for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

}  // namespace sparkops::testing
