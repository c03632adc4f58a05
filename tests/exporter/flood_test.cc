// A process flood against a live exporter on the real /proc (issue 29, item 3): 250 processes
// named python3, each holding 1,000 open descriptors (probed for /dev/nvidia*) and a 40 KiB argv.
// Every scrape returns within the collection budget plus 3 s, the body says when the budget ran
// out (sparkops_collection_truncated) and the exporter's RSS stays bounded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "exporter_child.h"
#include "host/hostfs.h"
#include "host/proctable.h"
#include "http_client.h"
#include "test_util.h"

namespace sparkops::testing {
namespace {

constexpr int kProcesses = 250;
constexpr int kFds = 1000;

/// The flood: `/bin/sleep` started as `python3 <40 KiB of zeros>60`, with kFds descriptors each.
class Flood {
 public:
  Flood() {
    rlimit rl{};
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, kFds + 256);
    setrlimit(RLIMIT_NOFILE, &rl);
    fds_ = static_cast<int>(std::min<rlim_t>(kFds, rl.rlim_cur > 256 ? rl.rlim_cur - 256 : 0));
    std::vector<int> held;
    for (int i = 0; i < fds_; ++i) held.push_back(::open("/dev/null", O_RDONLY));  // inherited: no O_CLOEXEC
    const std::string seconds = std::string(40u << 10, '0') + "60";
    char* argv[] = {const_cast<char*>("python3"), const_cast<char*>(seconds.c_str()), nullptr};
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    for (int i = 0; i < kProcesses; ++i) {
      pid_t pid = -1;
      if (posix_spawn(&pid, "/bin/sleep", nullptr, &attr, argv, environ) != 0) break;
      if (pgid_ == 0) {
        pgid_ = pid;
        posix_spawnattr_setpgroup(&attr, pgid_);  // one group: one kill stops them all
      }
      pids_.push_back(pid);
    }
    posix_spawnattr_destroy(&attr);
    for (int fd : held) ::close(fd);
  }
  ~Flood() {
    if (pgid_ > 0) ::kill(-pgid_, SIGKILL);
    for (pid_t p : pids_) ::waitpid(p, nullptr, 0);
  }
  size_t size() const { return pids_.size(); }
  int fds() const { return fds_; }

 private:
  std::vector<pid_t> pids_;
  pid_t pgid_ = 0;
  int fds_ = 0;
};

/// The exporter on the real machine (no --root: it must see the flood), `extra` flags.
std::unique_ptr<Child> StartHostExporter(int& port, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {SparkopsBin(), "exporter", "--listen", "127.0.0.1:0", "--preflight-interval", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto child = std::make_unique<Child>(TargetArgv(argv));
  port = 0;
  if (auto line = child->ReadLine(10000); line && line->find("http://127.0.0.1:") != std::string::npos)
    port = std::stoi(line->substr(line->find("http://127.0.0.1:") + 17));
  return child;
}

struct Scrape {
  long ms = -1;
  std::string body;
};
Scrape TimedScrape(int port) {
  auto t0 = std::chrono::steady_clock::now();
  HttpClient c(port);
  c.set_read_timeout(30);
  auto r = c.Get("/metrics");
  Scrape s;
  if (!r || r->status != 200) return s;
  s.ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  s.body = r->body;
  return s;
}

class ExporterFlood : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { flood_ = new Flood(); }
  static void TearDownTestSuite() {
    delete flood_;
    flood_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(flood_->size(), static_cast<size_t>(kProcesses)) << "could not start the flood"; }
  /// Scrapes 1.1 s apart against an exporter with `flags` until three bodies of a finished collection
  /// came back (at most six scrapes; the first scrape may get a "still collecting" comment); each
  /// scrape must return within `budget_ms` + 3 s. Returns the complete bodies; prints times and RSS.
  std::vector<Scrape> Scrapes(const std::vector<std::string>& flags, long budget_ms) {
    int port = 0;
    auto child = StartHostExporter(port, flags);
    EXPECT_GT(port, 0) << "exporter printed no address";
    std::vector<Scrape> out;
    if (port <= 0) return out;
    uint64_t rss_peak = 0;
    std::string times;
    for (int i = 0; i < 6 && out.size() < 3; ++i) {
      if (i) std::this_thread::sleep_for(std::chrono::milliseconds(1100));
      Scrape s = TimedScrape(port);
      EXPECT_GE(s.ms, 0) << "scrape " << i << " failed";
      EXPECT_LT(s.ms, budget_ms + 3000) << "scrape " << i << " waited past the budget";
      times += " " + std::to_string(s.ms);
      if (s.body.find("sparkops_collector_success{collector=\"workloads\"}") != std::string::npos)
        out.push_back(std::move(s));
      if (auto p = ReadProcess(HostFs("/"), static_cast<uint32_t>(child->pid())); p && p->rss_bytes)
        rss_peak = std::max(rss_peak, *p->rss_bytes);
    }
    rss_ = rss_peak;
    std::printf("flood of %zu processes x %d fds, flags [%s]: scrapes%s ms, exporter RSS %.1f MiB\n", flood_->size(),
                flood_->fds(), flags.empty() ? "" : flags[0].c_str(), times.c_str(), rss_peak / 1048576.0);
    EXPECT_TRUE(child->Stop(SIGTERM, 10000).has_value());
    return out;
  }
  static Flood* flood_;
  uint64_t rss_ = 0;
};
Flood* ExporterFlood::flood_ = nullptr;

bool Has(const std::string& body, const std::string& line) { return body.find(line + "\n") != std::string::npos; }

TEST_F(ExporterFlood, TinyTimeBudgetTruncatesAndScrapesStayFast) {
  auto s = Scrapes({"--collection-budget-ms", "1"}, 1);
  ASSERT_FALSE(s.empty()) << "no collection finished";
  for (const Scrape& x : s) {
    EXPECT_TRUE(Has(x.body, "sparkops_collection_truncated{reason=\"time\"} 1")) << x.body.substr(0, 400);
    EXPECT_TRUE(Has(x.body, "sparkops_collection_truncated{reason=\"bytes\"} 0"));
    EXPECT_TRUE(Has(x.body, "sparkops_collector_success{collector=\"workloads\"} 1"));  // short, not failed
  }
}

/// RSS bounds of the exporter under the flood, natively. AddressSanitizer's shadow and quarantine
/// (freed memory is held back) put the same run at 230-420 MiB (measured in the sanitize stage), so
/// that build only checks a 640 MiB ceiling, as tests/cli/bounded_parsers_test.cc does.
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kByteBudgetRss = 640ull << 20, kDefaultBudgetRss = 640ull << 20;
#else
constexpr uint64_t kByteBudgetRss = 48ull << 20, kDefaultBudgetRss = 64ull << 20;
#endif

TEST_F(ExporterFlood, ByteBudgetTruncatesOnTheArgvs) {
  auto s = Scrapes({"--collection-budget-bytes", "65536"}, 2000);
  ASSERT_FALSE(s.empty()) << "no collection finished";
  for (const Scrape& x : s) EXPECT_TRUE(Has(x.body, "sparkops_collection_truncated{reason=\"bytes\"} 1"));
  EXPECT_LT(rss_, kByteBudgetRss);
}

TEST_F(ExporterFlood, DefaultBudgetBoundsScrapesAndMemory) {
  auto s = Scrapes({}, 2000);
  ASSERT_FALSE(s.empty()) << "no collection finished";
  for (const Scrape& x : s) {
    // Either reason may end it on a slow machine; the family is there, as a state set.
    EXPECT_NE(x.body.find("sparkops_collection_truncated{reason=\"time\"} "), std::string::npos);
    EXPECT_NE(x.body.find("sparkops_collection_truncated{reason=\"bytes\"} "), std::string::npos);
  }
  // 16 MiB of reads at most, argvs cut at 32 KiB, the heap trimmed after each collection.
  EXPECT_LT(rss_, kDefaultBudgetRss);
}

TEST(ExporterFloodCli, BudgetFlagsAreCheckedAndOnceSaysNotTruncated) {
  for (const char* bad : {"0", "-1", "nan", "inf", "1.5", "3600001", "x"}) {
    auto r = RunInProcess({"exporter", "--collection-budget-ms", bad});
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_NE(r.err.find("--collection-budget-ms"), std::string::npos) << r.err;
  }
  for (const char* bad : {"0", "65535", "-65536", "2e9", "nan", "16MiB"}) {
    auto r = RunInProcess({"exporter", "--collection-budget-bytes", bad});
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_NE(r.err.find("--collection-budget-bytes"), std::string::npos) << r.err;
  }
  auto once = RunInProcess({"--root", Fixture("gb10"), "exporter", "--once", "--preflight-interval", "0",
                            "--collection-budget-ms", "60000", "--collection-budget-bytes", "65536"});
  EXPECT_EQ(once.rc, 0) << once.err;
  EXPECT_TRUE(Has(once.out, "sparkops_collection_truncated{reason=\"time\"} 0")) << once.out;
  EXPECT_TRUE(Has(once.out, "sparkops_collection_truncated{reason=\"bytes\"} 0"));
  RunInProcess({"--root", Fixture("gb10"), "exporter", "--once"});  // the defaults again for later tests
}

}  // namespace
}  // namespace sparkops::testing
