// Exporter fault cases (docs/reliability.md): slow clients (slowloris-style, one header byte per
// second) are cut at the request deadline and do not block other scrapes, and 1,000 concurrent
// connections are all answered with the exporter's memory bounded (RSS read through the process
// table, host/proctable.h).
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/resource.h>

#include <atomic>
#include <memory>
#include <thread>

#include "exporter/server.h"
#include "exporter_child.h"
#include "host/hostfs.h"
#include "host/proctable.h"
#include "test_util.h"

namespace sparkops::testing {
namespace {

class ExporterFault : public ::testing::Test {
 public:
  void SetUp() override {
    child_ = testing::StartFixtureExporter(port_);
    ASSERT_TRUE(child_->started());
    ASSERT_GT(port_, 0) << "exporter printed no address";
  }
  void TearDown() override {
    if (child_ && child_->started()) {
      EXPECT_TRUE(child_->Stop(SIGTERM, 10000).has_value());
    }
  }
  int Connect(bool nonblocking) const {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
      close(fd);
      return -1;
    }
    return fd;
  }
  /// One scrape on a fresh connection; milliseconds it took, or -1 when it failed.
  long TimedScrape() const {
    auto t0 = std::chrono::steady_clock::now();
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10, 0);
    auto r = c.Get("/metrics");
    if (!r || r->status != 200) return -1;
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  }
  std::optional<uint64_t> ExporterRss() const {
    auto p = ReadProcess(HostFs("/"), static_cast<uint32_t>(child_->pid()));
    return p ? p->rss_bytes : std::nullopt;
  }
  std::unique_ptr<Child> child_;
  int port_ = 0;
};

using ExporterFaultScraper = ExporterFault;

/// `n` clients trickle a request one byte per second while five scrapes are timed. Every slow
/// client must be disconnected by the server at the request deadline (ServerLimits), counted from
/// its accept, and every scrape answered within 2 s.
void SlowClientsAndScrapes(ExporterFaultScraper& f, int n) {
  const long deadline_ms = ServerLimits{}.request_deadline_ms;
  std::atomic<bool> stop{false};
  std::vector<long> closed_after_ms(static_cast<size_t>(n), -1);  // connect -> closed by the server
  std::vector<std::thread> slow;
  for (int i = 0; i < n; ++i)
    slow.emplace_back([&, i] {
      const auto t0 = std::chrono::steady_clock::now();
      int fd = f.Connect(false);
      const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(64, 's');
      for (size_t k = 0; k < req.size() && !stop && fd >= 0; ++k) {
        if (send(fd, &req[k], 1, MSG_NOSIGNAL) != 1) break;
        // One byte per second; meanwhile watch for the server closing the connection.
        bool closed = false;
        for (int w = 0; w < 10 && !stop && !closed; ++w) {
          pollfd p{fd, POLLIN, 0};
          if (poll(&p, 1, 100) > 0) {
            char c;
            closed = recv(fd, &c, 1, MSG_DONTWAIT) <= 0;  // EOF or reset: no reply is sent to it
          }
        }
        if (closed) {
          closed_after_ms[static_cast<size_t>(i)] =
              std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
          break;
        }
      }
      if (fd >= 0) close(fd);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the slow clients hold their threads
  long worst = 0;
  for (int i = 0; i < 5; ++i) {
    long ms = f.TimedScrape();
    EXPECT_GE(ms, 0) << "scrape " << i << " failed while " << n << " slow clients were connected";
    EXPECT_LT(ms, 2000) << "scrape " << i << " waited behind the slow clients";
    worst = std::max(worst, ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  // The scrapes took about 3 s: every slow client has reached its deadline by now.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  stop = true;
  for (auto& t : slow) t.join();
  for (int i = 0; i < n; ++i) {
    const long ms = closed_after_ms[static_cast<size_t>(i)];
    if (ms < 0) {
      ADD_FAILURE() << "slow client " << i << " was never closed by the server";
      continue;
    }
    EXPECT_GE(ms, deadline_ms - 100) << "slow client " << i << " was closed before the request deadline";
    EXPECT_LT(ms, deadline_ms + 3000) << "slow client " << i << " was closed late";
  }
  std::printf("%d slow clients: slowest scrape %ld ms; request deadline %ld ms\n", n, worst, deadline_ms);
}

// Fewer slow clients than worker threads (8): scrapes find a free thread at once.
TEST_F(ExporterFault, SlowlorisClientsDoNotBlockScrapes) { SlowClientsAndScrapes(*this, 3); }

// Twice as many slow clients as worker threads: every thread is held until the request deadline
// (2 s after the accept), then freed; the queued slow clients are past their deadline when a
// thread takes them, so the scrapes queued behind them wait at most until the deadline.
// (cpp-httplib 0.11 alone has only a 5 s per-read timeout, which a client sending a byte a second
// never trips: without the deadline these scrapes time out.)
TEST_F(ExporterFault, MoreSlowClientsThanWorkersDoNotBlockScrapes) { SlowClientsAndScrapes(*this, 16); }

// A keep-alive connection that trickles its second request is cut at that request's deadline,
// counted from its first byte; the first request was answered normally.
TEST_F(ExporterFault, SlowSecondRequestOnAKeepAliveConnectionIsCutAtTheDeadline) {
  const long deadline_ms = ServerLimits{}.request_deadline_ms;
  int fd = Connect(false);
  ASSERT_GE(fd, 0);
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  std::string got;
  char buf[8192];
  while (got.find("\r\n\r\n") == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    ASSERT_GT(poll(&p, 1, 5000), 0) << "no reply to the first request";
    ssize_t k = recv(fd, buf, sizeof buf, 0);
    ASSERT_GT(k, 0);
    got.append(buf, static_cast<size_t>(k));
  }
  EXPECT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << got.substr(0, 80);
  const size_t body = std::stoul(got.substr(got.find("Content-Length: ") + 16));
  while (got.size() < got.find("\r\n\r\n") + 4 + body) {
    ssize_t k = recv(fd, buf, sizeof buf, 0);
    ASSERT_GT(k, 0);
    got.append(buf, static_cast<size_t>(k));
  }
  // Well inside the keep-alive timeout (2 s), the second request starts, one byte per 300 ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t0 = std::chrono::steady_clock::now();
  long closed_after = -1;
  for (size_t k = 0; k < req.size() - 2 && closed_after < 0; ++k) {
    if (send(fd, &req[k], 1, MSG_NOSIGNAL) != 1) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 300) > 0 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) <= 0)
      closed_after =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  }
  close(fd);
  ASSERT_GE(closed_after, 0) << "the server never closed the slow keep-alive connection";
  EXPECT_GE(closed_after, deadline_ms - 100);
  EXPECT_LT(closed_after, deadline_ms + 3000);
  EXPECT_GE(TimedScrape(), 0);
}

TEST_F(ExporterFault, ThousandConcurrentConnectionsAnsweredWithBoundedMemory) {
  constexpr int kConns = 1000;
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < kConns + 200) {
    rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, kConns + 200);
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur < kConns + 100) GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << rl.rlim_max << " is too low";
  ASSERT_GE(TimedScrape(), 0);
  const auto rss_before = ExporterRss();

  // All connections opened at once (most wait in the listen backlog), then every one sends a
  // request and reads its reply.
  std::vector<int> fds;
  for (int i = 0; i < kConns; ++i) fds.push_back(Connect(true));
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  std::vector<size_t> sent(kConns, 0);
  std::vector<std::string> got(kConns);
  std::vector<bool> done(kConns, false);
  int finished = 0;
  uint64_t rss_peak = rss_before.value_or(0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (finished < kConns && std::chrono::steady_clock::now() < deadline) {
    std::vector<pollfd> pfds;
    std::vector<int> idx;
    for (int i = 0; i < kConns; ++i) {
      if (done[i] || fds[i] < 0) continue;
      pfds.push_back({fds[i], static_cast<short>(sent[i] < req.size() ? POLLOUT : POLLIN), 0});
      idx.push_back(i);
    }
    if (pfds.empty()) break;
    if (poll(pfds.data(), pfds.size(), 200) < 0) break;
    for (size_t k = 0; k < pfds.size(); ++k) {
      const int i = idx[k];
      if (pfds[k].revents & POLLOUT) {
        ssize_t n = send(fds[i], req.data() + sent[i], req.size() - sent[i], MSG_NOSIGNAL);
        if (n > 0) sent[i] += static_cast<size_t>(n);
      } else if (pfds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[8192];
        ssize_t n = read(fds[i], buf, sizeof buf);
        if (n > 0) {
          got[i].append(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EAGAIN) {
          done[i] = true;
          ++finished;
        }
      }
    }
    if (auto r = ExporterRss()) rss_peak = std::max(rss_peak, *r);
  }
  int ok = 0;
  for (int i = 0; i < kConns; ++i) {
    ok += got[i].rfind("HTTP/1.1 200", 0) == 0;
    if (fds[i] >= 0) close(fds[i]);
  }
  EXPECT_EQ(ok, kConns);
  EXPECT_GE(TimedScrape(), 0) << "exporter stopped serving after the burst";
  ASSERT_TRUE(rss_before.has_value());
  // Bounded: 8 threads and a 64-slot queue; the backlog lives in the kernel, not the process.
  EXPECT_LT(rss_peak, *rss_before + (64u << 20)) << "RSS before " << *rss_before << " peak " << rss_peak;
  std::printf("exporter RSS before %.1f MiB, peak during %d connections %.1f MiB\n", *rss_before / 1048576.0, kConns,
              rss_peak / 1048576.0);
}

}  // namespace
}  // namespace sparkops::testing
