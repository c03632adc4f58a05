#include "test_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/dispatch.h"
#include "host/command.h"

extern char** environ;

namespace sparkops::testing {

namespace {
// Guards started by the tests keep no ledger in the real /run (guard/ledger.h) unless a test asks
// for one: set for every child that inherits this environment, and added to explicit ones below.
constexpr const char* kLedgerVar = "SPARKOPS_GUARD_LEDGER";
const bool kNoLedgerByDefault = ::setenv(kLedgerVar, "none", 0) == 0;

std::map<std::string, std::string> WithTestDefaults(std::map<std::string, std::string> env) {
  (void)kNoLedgerByDefault;
  env.emplace(kLedgerVar, "none");  // unless the test set it
  return env;
}
}  // namespace

RunOutput RunInProcess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  std::ostringstream out, err;
  RunOutput r;
  r.rc = Run(args, WithTestDefaults(env), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

RunOutput RunBinary(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                    int timeout_ms) {
  std::vector<std::string> argv = TargetArgv({SparkopsBin()});
  argv.insert(argv.end(), args.begin(), args.end());
  CommandOptions opts;
  opts.timeout = std::chrono::milliseconds(timeout_ms);
  std::map<std::string, std::string> full = WithTestDefaults(env);
  if (!full.count("PATH")) full["PATH"] = "/usr/bin:/bin";
  opts.env = full;
  auto res = RunCommand(argv, opts);
  RunOutput r;
  if (!res) {
    r.err = res.error().message;
    return r;
  }
  r.rc = res->exit_code ? *res->exit_code : (res->signal ? 128 + *res->signal : -1);
  r.out = res->out;
  r.err = res->err;
  return r;
}

std::string Fixture(const std::string& name) { return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/fixtures/" + name; }
std::string BuildArtifact(const std::string& name) { return std::string(SPARKOPS_TEST_BINARY_DIR) + "/" + name; }
std::string SparkopsBin() { return SPARKOPS_BIN; }

std::vector<std::string> TargetEmulator() {
  std::vector<std::string> parts;
  std::string_view spec = SPARKOPS_TEST_EMULATOR;  // '|'-separated (CMake lists cannot pass ';')
  while (!spec.empty()) {
    size_t bar = spec.find('|');
    std::string_view part = spec.substr(0, bar);
    if (!part.empty()) parts.emplace_back(part);
    spec = bar == std::string_view::npos ? std::string_view() : spec.substr(bar + 1);
  }
  return parts;
}

pid_t SpawnSparkops(const std::vector<std::string>& args, const SpawnIo& io) {
  std::vector<std::string> argv = TargetArgv({SparkopsBin()});
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (io.out_fd >= 0) posix_spawn_file_actions_adddup2(&fa, io.out_fd, 1);
  else if (!io.out.empty())
    posix_spawn_file_actions_addopen(&fa, 1, io.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!io.err.empty()) posix_spawn_file_actions_addopen(&fa, 2, io.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

std::vector<std::string> TargetArgv(const std::vector<std::string>& argv) {
  std::vector<std::string> full = TargetEmulator();
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

std::string TargetShell(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : TargetArgv(argv)) s += (s.empty() ? "'" : " '") + a + "'";
  return s;
}

std::string BuildArch() { return SPARKOPS_TEST_BUILD_ARCH; }

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string CheckGolden(const std::string& name, const std::string& actual) {
  std::string path = std::string(SPARKOPS_TEST_SOURCE_DIR) + "/golden/" + name;
  const char* update = std::getenv("SPARKOPS_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return "";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return "golden file missing: " + path + " (run with SPARKOPS_UPDATE_GOLDEN=1)";
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string expected = ss.str();
  if (expected == actual) return "";
  return "golden mismatch for " + name + "\n--- expected\n" + expected + "\n--- actual\n" + actual;
}

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) { setenv(name, value.c_str(), 1); }
ScopedEnv::~ScopedEnv() { unsetenv(name_); }

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "sparkops-test-XXXXXX").string();
  char* p = mkdtemp(tmpl.data());
  if (!p) throw std::runtime_error("mkdtemp failed");
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& rel, const std::string& content) const {
  std::filesystem::path p = std::filesystem::path(path_) / rel;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

}  // namespace sparkops::testing
