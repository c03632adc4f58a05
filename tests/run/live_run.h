#pragma once
// Helpers for tests that drive `sparkops run` as a real child process: its events.jsonl records, a
// fixture --root whose meminfo and PSI the test rewrites while the job runs, and the run itself.
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/strings.h"
#include "host/child.h"
#include "test_util.h"

namespace sparkops::testing {

/// Every record of DIR/events.jsonl (the run has ended: each line must parse).
inline std::vector<nlohmann::json> RunEvents(const std::string& dir) {
  std::vector<nlohmann::json> out;
  const std::string text = ReadFileOrDie(dir + "/events.jsonl");
  for (auto line : SplitLines(text))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

/// The records so far of a run still going: none before run created the file; a line still being
/// written is skipped.
inline std::vector<nlohmann::json> RunEventsSoFar(const std::string& dir) {
  std::vector<nlohmann::json> out;
  std::ifstream in(dir + "/events.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

inline std::vector<nlohmann::json> RunEventsOfType(const std::string& dir, const std::string& type) {
  std::vector<nlohmann::json> out;
  for (auto& e : RunEvents(dir))
    if (e["type"] == type) out.push_back(e);
  return out;
}

/// A fixture root: MemTotal 32 GiB, MemAvailable and page cache as given; PSI full avg10 as given.
struct FakeHost {
  static constexpr uint64_t kGiB = 1ull << 30;
  TempDir d;
  std::string root = d.path() + "/root";
  explicit FakeHost(uint64_t avail, double psi = 0.5) {
    SetMem(avail);
    SetPsi(psi);
    Put("proc/sys/vm/drop_caches", "");
  }
  /// Written whole and renamed into place: the guard never reads a half-written file.
  void Put(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + rel).parent_path());
    std::string tmp = root + "/" + rel + ".tmp";
    std::ofstream(tmp) << text;
    std::filesystem::rename(tmp, root + "/" + rel);
  }
  void SetMem(uint64_t avail, uint64_t cached = 3 * kGiB) const {
    Put("proc/meminfo", "MemTotal: " + std::to_string(32 * kGiB / 1024) +
                            " kB\nMemFree: 1024 kB\nMemAvailable: " + std::to_string(avail / 1024) +
                            " kB\nBuffers: 0 kB\nCached: " + std::to_string(cached / 1024) + " kB\nShmem: 0 kB\n");
  }
  void SetPsi(double full) const {
    Put("proc/pressure/memory", "some avg10=" + std::to_string(full) + " avg60=0.00 avg300=0.00 total=1\nfull avg10=" +
                                    std::to_string(full) + " avg60=0.00 avg300=0.00 total=1\n");
  }
};

struct LiveRun {
  Child child;
  std::string dir;
};

/// `sparkops [--root ROOT] run --out DIR --interval 0.2 FLAGS -- bash -c SCRIPT`, returned once the
/// job printed its first line (so its traps are set).
inline LiveRun StartRun(const std::string& root, const std::string& dir, const std::vector<std::string>& flags,
                        const std::string& script) {
  std::vector<std::string> argv = {SparkopsBin()};
  if (!root.empty()) argv.insert(argv.end(), {"--root", root});
  argv.insert(argv.end(), {"run", "--out", dir, "--interval", "0.2"});
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", "bash", "-c", script});
  auto c = SpawnChild(TargetArgv(argv), false);
  EXPECT_TRUE(c) << (c ? "" : c.error().message);
  LiveRun lr{*c, dir};
  for (int i = 0; i < 2400; ++i) {
    std::error_code ec;
    auto size = std::filesystem::file_size(dir + "/train.log", ec);
    if (!ec && size > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return lr;
}

/// A set of run flags that must be refused, and the flag the message must name.
struct RefusedFlags {
  std::vector<std::string> flags;
  const char* names;
};

/// Each case's `sparkops --root ROOT run --out DIR/rN FLAGS -- true` exits 2 naming its flag.
inline void ExpectRunRefuses(const std::string& root, const std::string& dir, const std::vector<RefusedFlags>& cases) {
  int n = 0;
  for (const RefusedFlags& c : cases) {
    std::vector<std::string> argv = {"--root", root, "run", "--out", dir + "/r" + std::to_string(n++)};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    argv.insert(argv.end(), {"--", "true"});
    auto r = RunBinary(argv);
    EXPECT_EQ(r.rc, 2) << Join(c.flags, " ") << "\n" << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << Join(c.flags, " ") << "\n" << r.err;
  }
}

/// Drains run's output and waits for it; its exit status; `err` gets its stderr.
inline int FinishRun(LiveRun& lr, std::string* err = nullptr) {
  std::string e;
  char buf[4096];
  while (::read(lr.child.out_fd, buf, sizeof buf) > 0) {}
  for (ssize_t n; (n = ::read(lr.child.err_fd, buf, sizeof buf)) > 0;) e.append(buf, static_cast<size_t>(n));
  ::close(lr.child.out_fd), ::close(lr.child.err_fd);
  if (err) *err = e;
  return WaitChild(lr.child);
}

}  // namespace sparkops::testing
