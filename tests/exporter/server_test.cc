#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>

#include "exporter/collectors.h"
#include "exporter/metrics_cache.h"
#include "exporter/server.h"
#include "exporter_child.h"
#include "http_client.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Child;
using testing::Fixture;
using testing::RunInProcess;
using testing::SparkopsBin;

TEST(ExporterRoute, MethodsAndPaths) {
  int calls = 0;
  auto metrics = [&] {
    ++calls;
    return std::string("sparkops_x 1\n");
  };
  struct Case {
    const char* method;
    const char* path;
    int status;
  } cases[] = {{"GET", "/metrics", 200},     {"HEAD", "/metrics", 200}, {"GET", "/", 200},
               {"POST", "/metrics", 405},    {"PUT", "/", 405},         {"DELETE", "/metrics", 405},
               {"OPTIONS", "/metrics", 405}, {"GET", "/metrics/", 404}, {"GET", "/favicon.ico", 404},
               {"POST", "/nope", 404},       {"GET", "", 404},          {"GET", "/METRICS", 404}};
  for (const Case& c : cases) {
    HttpReply r = Route(c.method, c.path, metrics);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path;
    EXPECT_EQ(r.allow.empty(), c.status != 405) << c.method << " " << c.path;
  }
  EXPECT_EQ(calls, 2);  // the collector runs only for GET/HEAD /metrics
  HttpReply m = Route("GET", "/metrics", metrics);
  EXPECT_EQ(m.content_type, kMetricsContentType);
  EXPECT_EQ(m.body, "sparkops_x 1\n");
  EXPECT_NE(Route("GET", "/", metrics).body.find("href=\"/metrics\""), std::string::npos);
}

TEST(ExporterListen, ParsesAndRejects) {
  auto a = ParseListenAddress("127.0.0.1:9842");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9842);
  auto v6 = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  for (const char* bad :
       {"", "9842", ":9842", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "::1:80", "[::1]9842", "host:port"}) {
    auto r = ParseListenAddress(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message.find("--listen"), std::string::npos);
  }
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("192.168.1.20"));
  EXPECT_FALSE(IsLoopbackHost("::"));
}

TEST(ExporterCli, BadFlagsAreUsageErrors) {
  EXPECT_EQ(RunInProcess({"exporter", "--listen", "nonsense"}).rc, 2);
  EXPECT_NE(RunInProcess({"exporter", "--listen", "nonsense"}).err.find("--listen"), std::string::npos);
  EXPECT_EQ(RunInProcess({"exporter", "--preflight-interval", "-1"}).rc, 2);
  EXPECT_EQ(RunInProcess({"exporter", "--min-interval", "x"}).rc, 2);
}

TEST(ExporterCli, OnceFromFixtureReportsMeminfoInBytes) {
  auto r = RunInProcess({"--root", Fixture("gb10"), "exporter", "--once", "--preflight-interval", "0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("sparkops_memory_total_bytes 130663165952\n"), std::string::npos) << r.out;  // 127600748 kB
  EXPECT_NE(r.out.find("sparkops_memory_available_bytes 121411960832\n"), std::string::npos);      // 118566368 kB
  EXPECT_NE(r.out.find("sparkops_collector_success{collector=\"memory\"} 1\n"), std::string::npos);
  // --root implies no NVML: the GPU collector fails, costing only its own series.
  EXPECT_NE(r.out.find("sparkops_collector_success{collector=\"gpu\"} 0\n"), std::string::npos);
  EXPECT_EQ(r.out.find("sparkops_gpu_temperature_celsius"), std::string::npos);
  EXPECT_EQ(r.out.find("sparkops_preflight_status"), std::string::npos);
}

TEST(ExporterCli, OnceRunsPreflightAndAMissingMeminfoCostsOnlyItsSeries) {
  testing::TempDir empty;  // a host with no /proc at all
  auto r = RunInProcess({"--root", empty.path(), "exporter", "--once"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("sparkops_collector_success{collector=\"memory\"} 0\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("sparkops_memory_total_bytes"), std::string::npos);
  EXPECT_NE(r.out.find("sparkops_preflight_status{check=\"G1\""), std::string::npos);
  EXPECT_NE(r.out.find("sparkops_preflight_status{check=\"G10\""), std::string::npos);
  EXPECT_NE(r.out.find("sparkops_collector_success{collector=\"preflight\"} 1\n"), std::string::npos);
}

TEST(ExporterCache, ReusesBodyWithinMinInterval) {
  HostView ctx{HostOptions{}, HostFs("/"), {}};
  int n = 0;
  MetricsCache cache(ctx, CacheOptions{std::chrono::milliseconds(60000), std::chrono::milliseconds(0)}, [&] {
    Collection c;
    Sample s;
    MemInfo m;
    m.total = static_cast<uint64_t>(++n);
    s.mem = m;
    c.inputs.sample = s;
    return c;
  });
  auto without_age = [](std::string body) { return body.substr(0, body.find("# HELP sparkops_collection_age")); };
  std::string a = cache.Body(), b = cache.Body();
  EXPECT_EQ(without_age(a), without_age(b));
  EXPECT_EQ(cache.collections(), 1u);
  EXPECT_NE(a.find("sparkops_memory_total_bytes 1\n"), std::string::npos);
  CacheOptions every{std::chrono::milliseconds(0), std::chrono::milliseconds(0)};
  every.fresh_wait = std::chrono::milliseconds(10000);  // each scrape waits for the collection it asked for
  MetricsCache fresh(ctx, every, [&] {
    Collection c;
    c.inputs.collectors.push_back({"x", true, 0, ""});
    return c;
  });
  fresh.Body();
  fresh.Body();
  // Each scrape had its own collection; collect-ahead may already have begun a third.
  EXPECT_GE(fresh.collections(), 2u);
  EXPECT_LE(fresh.collections(), 3u);
}

// Issue 29: a slow collection (a process flood) runs on the worker thread; scrapes meanwhile get
// the last complete body (within fresh_wait at most), its age growing, instead of waiting for the
// collection.
TEST(ExporterCache, SlowCollectionServesTheLastBodyAtOnceWithItsAge) {
  HostView ctx{HostOptions{}, HostFs("/"), {}};
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  int n = 0;
  CacheOptions opts{std::chrono::milliseconds(0), std::chrono::milliseconds(0)};
  opts.fresh_wait = std::chrono::milliseconds(100);
  MetricsCache cache(ctx, opts, [&] {
    Collection c;
    MemInfo m;
    {
      std::unique_lock lock(mu);
      m.total = static_cast<uint64_t>(++n);
      if (n >= 2) cv.wait(lock, [&] { return release; });  // the second collection hangs until released
    }
    Sample s;
    s.mem = m;
    c.inputs.sample = s;
    return c;
  });
  auto age = [](const std::string& body) {
    const std::string key = "\nsparkops_collection_age_seconds ";
    auto p = body.find(key);
    return p == std::string::npos ? -1.0 : std::stod(body.substr(p + key.size()));
  };
  std::string first = cache.Body();
  EXPECT_NE(first.find("sparkops_memory_total_bytes 1\n"), std::string::npos);
  EXPECT_GE(age(first), 0.0) << first;
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto t0 = std::chrono::steady_clock::now();
    std::string body = cache.Body();  // asks for collection 2, which hangs
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2)) << "waited for the collection";
    EXPECT_NE(body.find("sparkops_memory_total_bytes 1\n"), std::string::npos);
    EXPECT_GE(age(body), 0.09 * (i + 1)) << "the served body's age grows";
  }
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  std::string later = first;  // a later collection (2, or a newer one: each scrape asks for one)
  for (int i = 0; i < 200 && later.find("sparkops_memory_total_bytes 1\n") != std::string::npos; ++i)
    later = cache.Body();
  EXPECT_EQ(later.find("sparkops_memory_total_bytes 1\n"), std::string::npos);
  EXPECT_NE(later.find("sparkops_memory_total_bytes "), std::string::npos);
  cache.Stop();
}

TEST(ExporterCache, BackgroundPreflightAppearsWithoutScrapesRunningIt) {
  testing::TempDir empty;
  HostView ctx{HostOptions{empty.path(), "none", "none"}, HostFs(empty.path()), {}};
  CacheOptions opts{std::chrono::milliseconds(0), std::chrono::milliseconds(3600000)};
  opts.fresh_wait = std::chrono::milliseconds(10000);  // each scrape waits for the collection it asked for
  MetricsCache cache(ctx, opts);
  cache.StartPreflight();
  std::string body;
  for (int i = 0; i < 100 && body.find("sparkops_preflight_status") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    body = cache.Body();
  }
  // Scrapes never run preflight: its timestamp stays put however often /metrics is read.
  auto stamp = [](const std::string& b) {
    auto p = b.find("\nsparkops_preflight_last_run_timestamp_seconds ");
    return p == std::string::npos ? std::string() : b.substr(p, b.find('\n', p + 1) - p);
  };
  std::string first = stamp(body);
  EXPECT_FALSE(first.empty()) << body;
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(stamp(cache.Body()), first);
  }
  EXPECT_GE(cache.collections(), 21u);
  cache.Stop();
  EXPECT_NE(body.find("sparkops_preflight_status{check=\"G3\""), std::string::npos) << body;
  EXPECT_NE(body.find("sparkops_collector_success{collector=\"preflight\"} 1"), std::string::npos);
}

/// The exporter binary on a free loopback port, stopped with SIGTERM at the end.
class LiveExporter : public ::testing::Test {
 protected:
  void SetUp() override {
    child_ = testing::StartFixtureExporter(port_);
    ASSERT_TRUE(child_->started());
    ASSERT_GT(port_, 0) << "exporter printed no address";
  }
  void TearDown() override {
    if (!child_ || !child_->started()) return;
    auto st = child_->Stop(SIGTERM, 5000);
    ASSERT_TRUE(st.has_value()) << "exporter did not stop on SIGTERM";
    EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << *st;
  }
  /// Sends raw bytes on a fresh connection; returns what came back until the reply's header block
  /// was complete, the server closed, or 1 s passed (the server may hold a half request open).
  std::string Raw(const std::string& bytes) const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string got;
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      timeval tv{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      (void)!send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      char buf[4096];
      for (ssize_t n; got.find("\r\n\r\n") == std::string::npos && (n = read(fd, buf, sizeof buf)) > 0;)
        got.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return got;
  }
  std::unique_ptr<testing::HttpClient> NewClient() const { return std::make_unique<testing::HttpClient>(port_); }
  void ExpectStillServing() const {
    auto res = NewClient()->Get("/metrics");
    ASSERT_TRUE(res) << "exporter stopped answering";
    EXPECT_EQ(res->status, 200);
  }
  std::unique_ptr<Child> child_;
  int port_ = 0;
};

TEST_F(LiveExporter, ServesMetricsAndIndex) {
  auto res = NewClient()->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), kMetricsContentType);
  EXPECT_NE(res->body.find("sparkops_memory_total_bytes 130663165952\n"), std::string::npos);
  auto index = NewClient()->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("/metrics"), std::string::npos);
  auto head = NewClient()->Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
}

TEST_F(LiveExporter, UnknownPathsAndMethods) {
  auto c = NewClient();
  auto nf = c->Get("/debug/pprof");
  ASSERT_TRUE(nf);
  EXPECT_EQ(nf->status, 404);
  auto post = c->Post("/metrics", std::string(512, 'x'), "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  auto del = NewClient()->Delete("/");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  ExpectStillServing();
}

TEST_F(LiveExporter, MalformedRequestsKeepItServing) {
  struct Case {
    std::string bytes;
    const char* want;  // status line prefix expected, or "" for "closed without a reply is fine"
  } cases[] = {
      {"garbage\r\n\r\n", ""},
      {"GET /metrics HTTP/9.9\r\n\r\n", "HTTP/1.1 400"},
      {"BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400"},
      {"GET /" + std::string(20000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", ""},
      {"GET /metrics HTTP/1.1\r\nX-Big: " + std::string(20000, 'b') + "\r\n\r\n", ""},
      {"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n", "HTTP/1.1 4"},
      {std::string("\x00\x01\x02\xff\r\n\r\n", 8), ""},
      {"GET /metrics HTTP/1.1\r\n", ""},  // truncated: no blank line
  };
  for (const Case& c : cases) {
    std::string got = Raw(c.bytes);
    if (*c.want) {
      EXPECT_EQ(got.rfind(c.want, 0), 0u) << got.substr(0, 80);
    }
    EXPECT_EQ(got.find("HTTP/1.1 200"), std::string::npos) << c.bytes.substr(0, 40);
    ExpectStillServing();
  }
}

TEST_F(LiveExporter, ManyConcurrentClientsAllAnswered) {
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  // 100 clients at once, three keep-alive requests each: all answered.
  for (int i = 0; i < 100; ++i)
    ts.emplace_back([&] {
      auto c = NewClient();
      for (int j = 0; j < 3; ++j) {
        auto r = c->Get("/metrics");
        if (r && r->status == 200) ++ok;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 300);
}

TEST(ExporterBinary, WideBindWarnsAndSigintStops) {
  testing::TempDir dir;
  const std::string err = dir.path() + "/stderr";
  Child child(testing::TargetArgv({SparkopsBin(), "--root", Fixture("gb10"), "exporter", "--listen", "0.0.0.0:0",
                                   "--preflight-interval", "0"}),
              err);
  ASSERT_TRUE(child.started());
  ASSERT_TRUE(child.ReadLine(10000).has_value());
  auto st = child.Stop(SIGINT, 5000);
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0);
  std::string text = testing::ReadFileOrDie(err);
  EXPECT_NE(text.find("warning: listening on 0.0.0.0:0, not loopback"), std::string::npos) << text;
}

TEST(ExporterBinary, PortInUseIsAProblemExit) {
  Child first(testing::TargetArgv(
      {SparkopsBin(), "--root", Fixture("gb10"), "exporter", "--listen", "127.0.0.1:0", "--preflight-interval", "0"}));
  auto line = first.ReadLine(10000);
  ASSERT_TRUE(line.has_value());
  std::string port = line->substr(line->find("127.0.0.1:") + 10);
  port = port.substr(0, port.find('/'));
  auto r = testing::RunBinary({"--root", Fixture("gb10"), "exporter", "--listen", "127.0.0.1:" + port}, {}, 10000);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("cannot bind 127.0.0.1:" + port + ": Address already in use"), std::string::npos) << r.err;
  EXPECT_TRUE(first.Stop(SIGTERM, 5000).has_value());
}

// An address that is not this machine's (TEST-NET-1, RFC 5737) is a usage error, like a malformed one.
TEST(ExporterBinary, AddressNotOfThisMachineIsAUsageError) {
  for (const char* listen : {"192.0.2.1:9842", "[2001:db8::1]:9842"}) {
    auto r = testing::RunBinary({"--root", Fixture("gb10"), "exporter", "--listen", listen}, {}, 10000);
    EXPECT_EQ(r.rc, 2) << listen << ": " << r.err;
    EXPECT_NE(r.err.find("not an address of this machine"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

/// Sends `bytes` on a new connection, half-closes it, and returns everything the server sent
/// before it closed (or 5 s passed).
std::string RawExchange(int port, const std::string& bytes) {
  int fd = testing::ConnectLoopback(port);
  if (fd < 0) return "<no connection>";
  for (size_t sent = 0; sent < bytes.size();) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (a 431 before the end of a flood)
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string got;
  char buf[4096];
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return got;
}

/// The status codes of every reply in `got` (a metrics body never holds "HTTP/1.1 ").
std::vector<int> StatusCodes(const std::string& got) {
  std::vector<int> out;
  for (size_t at = got.find("HTTP/1.1 "); at != std::string::npos; at = got.find("HTTP/1.1 ", at + 1))
    out.push_back(std::atoi(got.substr(at + 9, 3).c_str()));
  return out;
}

// The committed fuzz corpus of the request parser (fuzz/corpus/http_request) and a set of hostile
// heads, each sent raw to a live exporter: every reply starts with a well-formed status line of an
// expected code, and the exporter still serves a normal scrape after all of them.
TEST(ExporterBinary, RawRequestsFromTheFuzzCorpusGetWellFormedStatusLines) {
  Child ex(testing::TargetArgv({SparkopsBin(), "--root", Fixture("gb10"), "--nvml", "none", "--nvidia-smi", "none",
                                "exporter", "--listen", "127.0.0.1:0", "--preflight-interval", "0"}));
  auto line = ex.ReadLine(10000);
  ASSERT_TRUE(line.has_value());
  const int port = std::atoi(line->substr(line->find("127.0.0.1:") + 10).c_str());
  ASSERT_GT(port, 0);
  struct Case {
    std::string name, bytes;
    std::vector<int> want;  // every reply's code; empty: any well-formed reply, or none
  };
  std::vector<Case> cases = {
      {"scrape", "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", {200}},
      {"head", "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", {200}},
      {"http/1.0", "GET /metrics HTTP/1.0\r\n\r\n", {200}},
      {"not found", "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", {404}},
      {"post", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", {405}},
      {"no path", "GET ? HTTP/1.1\r\n\r\n", {400}},
      {"no version", "GET /metrics\r\n\r\n", {400}},
      {"garbage", std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + "\r\n\r\n", {400}},
      {"nul in path", std::string("GET /met\0rics HTTP/1.1\r\n\r\n", 26), {}},
      {"huge head", "GET /metrics HTTP/1.1\r\nX: " + std::string(64 * 1024, 'a') + "\r\n\r\n", {431}},
      {"lf only", "GET /metrics HTTP/1.1\nHost: x\n\n", {}},
      {"incomplete", "GET /metrics HTTP/1.1\r\nHost:", {}},
  };
  const std::map<std::string, std::vector<int>> corpus_want = {{"body", {405}},
                                                               {"pipelined_10", {200, 200}},
                                                               {"prometheus_scrape", {200}}};
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(SPARKOPS_TEST_SOURCE_DIR) + "/../fuzz/corpus/http_request")) {
    auto it = corpus_want.find(e.path().filename().string());
    cases.push_back({"corpus " + e.path().filename().string(), testing::ReadFileOrDie(e.path().string()),
                     it == corpus_want.end() ? std::vector<int>{} : it->second});
  }
  const std::set<int> known = {200, 400, 404, 405, 408, 413, 414, 431, 501, 505};
  for (const Case& c : cases) {
    const std::string got = RawExchange(port, c.bytes);
    const std::vector<int> codes = StatusCodes(got);
    if (!got.empty()) {
      ASSERT_FALSE(codes.empty()) << c.name << ": not an HTTP reply: " << got.substr(0, 200);
    }
    if (!got.empty()) {
      EXPECT_EQ(got.rfind("HTTP/1.1 ", 0), 0u) << c.name;
    }
    for (int code : codes) EXPECT_TRUE(known.count(code)) << c.name << ": status " << code;
    if (!c.want.empty()) {
      EXPECT_EQ(codes, c.want) << c.name << ": " << got.substr(0, 200);
    }
    // One reply to anything but HEAD: its body is exactly Content-Length bytes (a reject once said
    // "Content-Length: 0" before its 12-byte body: the length was read after the body was moved).
    if (codes.size() == 1 && c.name != "head") {
      const size_t end = got.find("\r\n\r\n"), cl = got.find("Content-Length: ");
      ASSERT_NE(end, std::string::npos) << c.name;
      ASSERT_LT(cl, end) << c.name << ": no Content-Length";
      EXPECT_EQ(std::strtoull(got.c_str() + cl + 16, nullptr, 10), got.size() - end - 4) << c.name << ": " << got;
    }
    std::printf("%-28s -> %zu replies%s%s\n", c.name.c_str(), codes.size(), codes.empty() ? "" : ", first ",
                codes.empty() ? "" : std::to_string(codes.front()).c_str());
  }
  EXPECT_EQ(StatusCodes(RawExchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")), std::vector<int>{200});
  EXPECT_TRUE(ex.Stop(SIGTERM, 5000).has_value());
}

}  // namespace
}  // namespace sparkops
