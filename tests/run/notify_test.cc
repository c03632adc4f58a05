// `run --notify URL` and `--notify-cmd CMD` against the built binary: a loopback HTTP sink gets
// one JSON object per told event (the guard's stop and the exit), a command gets each on stdin, a
// sink that accepts and never answers costs the job nothing, and bad flags exit 2.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/strings.h"
#include "base/timefmt.h"
#include "live_run.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;
using testing::ReadFileOrDie;
using testing::RunBinary;
using testing::TempDir;

std::vector<nlohmann::json> Events(const std::string& dir) { return testing::RunEvents(dir); }

/// A root whose MemAvailable (1 GiB of 32) is below run's default guard floor from the start.
std::string LowMemoryRoot(const std::string& base) {
  auto put = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(base + "/" + rel).parent_path());
    std::ofstream(base + "/" + rel) << text;
  };
  put("proc/meminfo",
      "MemTotal: 33554432 kB\nMemFree: 1024 kB\nMemAvailable: 1048576 kB\nBuffers: 0 kB\nCached: 0 kB\nShmem: 0 kB\n");
  put("proc/pressure/memory",
      "some avg10=0.50 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.50 avg60=0.00 avg300=0.00 total=1\n");
  put("proc/sys/vm/drop_caches", "");
  put("proc/sys/kernel/hostname", "spark-test\n");
  return base;
}

/// An HTTP sink on 127.0.0.1: answers 204 to each POST and keeps its body and arrival time, or
/// (`hang`) accepts and never reads nor answers.
class Sink {
 public:
  explicit Sink(bool hang = false) : hang_(hang) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Sink() {
    stop_ = true;
    thread_.join();
    for (int c : held_) ::close(c);
    ::close(fd_);
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  struct Post {
    std::string head, body;
    SysTime at;
  };
  std::vector<Post> Posts() {
    std::lock_guard lock(mu_);
    return posts_;
  }
  int accepted() const { return accepted_; }
  int port() const { return port_; }

 private:
  void Loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++accepted_;
      if (hang_) {
        held_.push_back(c);
        continue;
      }
      std::string buf;
      char tmp[4096];
      size_t end = std::string::npos;
      while (end == std::string::npos || buf.size() < end + 4 + Length(buf.substr(0, end))) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 5000) <= 0) break;
        ssize_t n = ::recv(c, tmp, sizeof tmp, 0);
        if (n <= 0) break;
        buf.append(tmp, static_cast<size_t>(n));
        end = buf.find("\r\n\r\n");
      }
      const SysTime at = std::chrono::system_clock::now();
      std::string reply = "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(c);
      if (end == std::string::npos) continue;
      std::lock_guard lock(mu_);
      posts_.push_back({buf.substr(0, end), buf.substr(end + 4), at});
    }
  }
  static size_t Length(const std::string& head) {
    auto at = ToLower(head).find("content-length:");
    if (at == std::string::npos) return 0;
    return ParseUint(Trim(std::string_view(head).substr(at + 15, head.find('\r', at) - at - 15))).value_or(0);
  }
  bool hang_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::vector<int> held_;
  std::mutex mu_;
  std::vector<Post> posts_;
  std::thread thread_;
};

double MsBetween(const std::string& iso, SysTime at) {
  auto t = ParseTimestamp(iso);
  return t ? std::chrono::duration<double, std::milli>(at - *t).count() : -1;
}

TEST(RunNotify, LoopbackSinkGetsTheGuardStopAndTheExit) {
  TempDir d;
  const std::string root = LowMemoryRoot(d.path() + "/root"), dir = d.path() + "/r";
  Sink sink;
  auto r = RunBinary({"--root", root, "run", "--out", dir, "--interval", "0.2", "--notify", sink.Url(), "--", "bash",
                      "-c", "sleep 5"},
                     {{"SPARKOPS_GUARD_LEDGER", d.path() + "/ledgers"}});
  EXPECT_EQ(r.rc, 75) << r.err;
  auto posts = sink.Posts();
  ASSERT_EQ(posts.size(), 2u) << ReadFileOrDie(dir + "/events.jsonl");
  std::vector<std::string> told;
  for (const auto& p : posts) {
    EXPECT_TRUE(p.head.starts_with("POST /hook HTTP/1.1\r\n")) << p.head;
    EXPECT_NE(ToLower(p.head).find("content-type: application/json"), std::string::npos) << p.head;
    auto j = nlohmann::json::parse(p.body);  // valid JSON, or the test fails here
    EXPECT_EQ(j["schema"], "sparkops.notify/1");
    EXPECT_EQ(j["run_dir"], dir);
    EXPECT_EQ(j["host"], "spark-test");
    EXPECT_EQ(j["job"], "bash -c sleep 5");
    EXPECT_FALSE(j["text"].get<std::string>().empty());
    EXPECT_EQ(j["text"].get<std::string>().find('\n'), std::string::npos);
    told.push_back(j["event"]);
    if (j["event"] == "memory_guard") {
      EXPECT_EQ(j["action"], "terminate");
      EXPECT_NE(j["text"].get<std::string>().find("memory guard stopped"), std::string::npos) << j["text"];
    }
    std::cout << "[ figure ] " << j["event"] << " delivered " << MsBetween(j["time"], p.at)
              << " ms after its record's time\n";
  }
  EXPECT_EQ(told, (std::vector<std::string>{"memory_guard", "exit"}));
  for (const auto& e : Events(dir)) EXPECT_NE(e["type"], "notify_failed") << e.dump();
}

TEST(RunNotify, CommandGetsEachEventOnStdinWithItsName) {
  TempDir d;
  const std::string root = LowMemoryRoot(d.path() + "/root"), dir = d.path() + "/r", out = d.path() + "/told";
  auto r = RunBinary({"--root", root, "run", "--out", dir, "--interval", "0.2", "--notify-cmd",
                      "printf '%s %s\\n' \"$SPARKOPS_EVENT\" \"$SPARKOPS_RUN_DIR\" >> " + out + ".env; cat >> " + out +
                          "; echo noise; echo noise >&2",
                      "--notify-cmd", "cat >> " + out + ".2", "--", "bash", "-c", "sleep 5"},
                     {{"SPARKOPS_GUARD_LEDGER", d.path() + "/ledgers"}});
  EXPECT_EQ(r.rc, 75) << r.err;
  EXPECT_EQ(r.out.find("noise"), std::string::npos) << "the command's output goes to /dev/null";
  EXPECT_EQ(r.err.find("noise"), std::string::npos);
  EXPECT_EQ(ReadFileOrDie(out + ".env"), "memory_guard " + dir + "\nexit " + dir + "\n");
  const std::string told = ReadFileOrDie(out);
  auto lines = SplitLines(told);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["event"], "memory_guard");
  auto exit = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(exit["event"], "exit");
  EXPECT_EQ(exit["schema"], "sparkops.notify/1");
  EXPECT_TRUE(exit.contains("signal") || exit.contains("code")) << exit.dump();
  EXPECT_EQ(SplitLines(ReadFileOrDie(out + ".2")).size(), lines.size()) << "--notify-cmd repeats: each gets each";
}

TEST(RunNotify, HangingSinkCostsTheJobNothingAndIsAnEvent) {
  TempDir d;
  const std::string dir = d.path() + "/r";
  Sink sink(/*hang=*/true);
  const auto start = std::chrono::steady_clock::now();
  auto r = RunBinary({"--root", testing::Fixture("gb10"), "run", "--no-guard", "--out", dir, "--interval", "0.2",
                      "--notify", sink.Url(), "--", "bash", "-c", "sleep 0.5; exit 4"},
                     {}, 120000);
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.rc, 4) << r.err;
  auto meta = nlohmann::json::parse(ReadFileOrDie(dir + "/meta.json"));
  std::optional<SysTime> job_end;
  std::vector<nlohmann::json> failed;
  for (const auto& e : Events(dir)) {
    if (e["type"] == "exit") job_end = ParseTimestamp(e["time"].get<std::string>());
    if (e["type"] == "notify_failed") failed.push_back(e);
  }
  ASSERT_TRUE(job_end);
  const double job_s =
      std::chrono::duration<double>(*job_end - *ParseTimestamp(meta["start_time"].get<std::string>())).count();
  EXPECT_LT(job_s, 5.0) << "the job (0.5 s) is not held up by the sink";
  ASSERT_EQ(failed.size(), 1u) << ReadFileOrDie(dir + "/events.jsonl");
  EXPECT_EQ(failed[0]["event"], "exit");
  EXPECT_EQ(failed[0]["target"], "http://127.0.0.1:" + std::to_string(sink.port())) << "the origin, never the path";
  EXPECT_NE(failed[0]["why"].get<std::string>().find("abandoned"), std::string::npos)
      << "the drain bound (10 s) ended it, not the tries: " << failed[0].dump();
  EXPECT_GE(sink.accepted(), 1);
  // 10 s of drain after the job; the bound is generous for a loaded machine, and below the 18 s
  // that three unanswered tries with their backoff would take.
  EXPECT_LT(run_s, 30.0);
  std::cout << "[ figure ] hanging sink: job " << job_s << " s, run " << run_s << " s\n";
}

TEST(RunNotify, BadFlagsExitTwoNamingTheFlag) {
  TempDir d;
  struct Case {
    std::vector<std::string> flags;
    const char* says;
  } cases[] = {
      {{"--notify", "https://hooks.example.org/x"}, "--notify-cmd 'curl"},
      {{"--notify", "http://"}, "no host"},
      {{"--notify", "http://h:0/"}, "bad port"},
      {{"--notify", "http://h:99999/"}, "bad port"},
      {{"--notify", "ftp://h/"}, "not an http"},
      {{"--notify", ""}, "--notify"},
      {{"--notify-cmd", ""}, "--notify-cmd"},
      {{"--notify-cmd", "   "}, "--notify-cmd"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {"--root", testing::Fixture("gb10"), "run", "--out", d.path() + "/r"};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    argv.insert(argv.end(), {"--", "true"});
    auto r = RunBinary(argv);
    EXPECT_EQ(r.rc, 2) << c.flags[1] << ": " << r.err;
    EXPECT_NE(r.err.find(c.flags[0]), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(d.path() + "/r")) << "nothing is started";
  }
}

}  // namespace
}  // namespace sparkops
