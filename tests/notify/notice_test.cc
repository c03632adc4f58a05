// notify/: the URL parser, the status line, the request, the notice's line and JSON, the filter
// (which records are told, at most one per rate-limited type per 10 minutes), and the queue.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "notify/http_post.h"
#include "notify/notice.h"
#include "notify/notifier.h"

namespace sparkops {
namespace {

using nlohmann::ordered_json;
using namespace std::chrono_literals;

TEST(NotifyUrl, Parses) {
  struct Case {
    const char* url;
    const char* host;
    int port;
    const char* path;
  } cases[] = {
      {"http://127.0.0.1:8080/hook", "127.0.0.1", 8080, "/hook"},
      {"http://example.org", "example.org", 80, "/"},
      {"HTTP://Example.org/a/b?x=1#frag", "Example.org", 80, "/a/b?x=1"},
      {"http://h?x=1", "h", 80, "/?x=1"},
      {"http://[::1]:9/p", "::1", 9, "/p"},
      {"http://[fe80::1]", "fe80::1", 80, "/"},
  };
  for (const Case& c : cases) {
    auto u = ParseHttpUrl(c.url);
    ASSERT_TRUE(u) << c.url << ": " << u.error().message;
    EXPECT_EQ(u->host, c.host) << c.url;
    EXPECT_EQ(u->port, c.port) << c.url;
    EXPECT_EQ(u->path, c.path) << c.url;
  }
  EXPECT_EQ(ParseHttpUrl("http://[::1]:9/secret")->Origin(), "http://[::1]:9");
  EXPECT_EQ(ParseHttpUrl("http://h/secret-token")->Origin(), "http://h:80");
}

TEST(NotifyUrl, RefusesWithTheReason) {
  struct Case {
    const char* url;
    const char* why;
  } cases[] = {
      {"https://hooks.example.org/x", "--notify-cmd"},
      {"HTTPS://h", "HTTPS"},
      {"ftp://h/x", "not an http"},
      {"h:80", "not an http"},
      {"http://", "no host"},
      {"http:///path", "no host"},
      {"http://:80/", "no host"},
      {"http://h:0/", "bad port"},
      {"http://h:65536", "bad port"},
      {"http://h:x", "bad port"},
      {"http://h:", "bad port"},
      {"http://u:p@h/", "credentials"},
      {"http://h /x", "spaces"},
      {"http://[::1/", "unclosed"},
      {"http://[::1]x/", "after"},
  };
  for (const Case& c : cases) {
    auto u = ParseHttpUrl(c.url);
    ASSERT_FALSE(u) << c.url;
    EXPECT_NE(u.error().message.find(c.why), std::string::npos) << c.url << ": " << u.error().message;
  }
}

TEST(NotifyUrl, StatusLineAndRequest) {
  EXPECT_EQ(ParseStatusLine("HTTP/1.1 204 No Content\r"), 204);
  EXPECT_EQ(ParseStatusLine("HTTP/1.0 500"), 500);
  EXPECT_EQ(ParseStatusLine("HTTP/1.1 200 OK"), 200);
  for (const char* bad : {"", "HTTP/2 200 OK", "HTTP/1.1 2000 x", "HTTP/1.1 abc", "SSH-2.0-OpenSSH", "HTTP/1.1 099 x"})
    EXPECT_FALSE(ParseStatusLine(bad)) << bad;
  auto u = ParseHttpUrl("http://h:8080/hook?k=v");
  std::string req = PostRequest(*u, "{}");
  EXPECT_TRUE(req.starts_with("POST /hook?k=v HTTP/1.1\r\nHost: h:8080\r\n")) << req;
  EXPECT_NE(req.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_NE(req.find("Content-Length: 2\r\n"), std::string::npos);
  EXPECT_TRUE(req.ends_with("\r\n\r\n{}"));
  EXPECT_NE(PostRequest(*ParseHttpUrl("http://h/"), "").find("Host: h\r\n"), std::string::npos);
}

const NoticeContext kCtx{"spark-01", "runs/a", "python train.py --lr 1e-4"};

ordered_json Rec(const std::string& s) { return ordered_json::parse(s); }

TEST(NotifyNotice, TextOfEachKind) {
  EXPECT_EQ(NoticeText("exit", Rec(R"({"time":"t","type":"exit","code":0})"), kCtx),
            "spark-01: `python train.py --lr 1e-4` exited with code 0 - runs/a");
  EXPECT_EQ(NoticeText("exit", Rec(R"({"type":"exit","signal":"Killed"})"), kCtx, "cuda_oom"),
            "spark-01: `python train.py --lr 1e-4` ended by signal Killed (out of memory: cuda_oom) - runs/a");
  EXPECT_EQ(NoticeText("memory_guard",
                       Rec(R"({"type":"memory_guard","action":"terminate","reason":"min_available","signal":"SIGTERM",
                              "mem_available_bytes":2147483648,"min_available_bytes":8589934592})"),
                       kCtx),
            "spark-01: the memory guard stopped `python train.py --lr 1e-4` (SIGTERM): MemAvailable 2.0 GiB below "
            "the floor 8.0 GiB");
  EXPECT_EQ(NoticeText("memory_guard", Rec(R"({"action":"kill","reason":"pressure","psi_full_avg10":31.25})"), kCtx),
            "spark-01: the memory guard killed `python train.py --lr 1e-4`: memory pressure, PSI full avg10 31.2%");
  // issue 33: a driver-side stop is no floor crossing (MemAvailable was far above the floor).
  EXPECT_EQ(NoticeText("memory_guard", Rec(R"({"action":"terminate","reason":"kernel_nvrm_no_memory","signal":"SIGTERM",
                              "mem_available_bytes":21474836480,"min_available_bytes":8589934592})"),
                       kCtx),
            "spark-01: the memory guard stopped `python train.py --lr 1e-4` (SIGTERM): the driver logged NVRM "
            "NV_ERR_NO_MEMORY (the host may wedge)");
  EXPECT_EQ(NoticeText("memory_guard", Rec(R"({"action":"terminate","reason":"fragmentation","signal":"SIGTERM",
                              "mem_available_bytes":12884901888,"min_available_bytes":8589934592})"),
                       kCtx),
            "spark-01: the memory guard stopped `python train.py --lr 1e-4` (SIGTERM): no free 2 MiB block for the "
            "driver while the job grew (the host may wedge)");
  // The host guard (no job): the process it chose, and the host's growth, not a job's.
  EXPECT_EQ(NoticeText("memory_guard", Rec(R"({"action":"terminate","reason":"fragmentation","signal":"SIGTERM",
                              "pid":4821,"name":"python3"})"),
                       NoticeContext{"spark-01", "", ""}),
            "spark-01: the memory guard stopped pid 4821 (python3) (SIGTERM): no free 2 MiB block for the driver "
            "while the host's memory use grew (the host may wedge)");
  EXPECT_EQ(NoticeText("throttle_start", Rec(R"({"reasons":"sw_thermal","gpu_temp_c":87,"sm_clock_mhz":1200})"), kCtx),
            "spark-01: GPU clocks throttled (sw_thermal), GPU 87 C, SM 1200 MHz during `python train.py --lr 1e-4`");
  EXPECT_EQ(NoticeText("kernel_xid", Rec(R"({"code":79,"line":"NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off"})"),
                       kCtx),
            "spark-01: kernel log (kernel_xid): NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off");
  EXPECT_EQ(NoticeText("checkpoint_requested",
                       Rec(R"({"type":"checkpoint_requested","signal":"SIGUSR1","mem_available_bytes":12884901888,
                              "pids":[42]})"),
                       kCtx),
            "spark-01: the pool is running low: `python train.py --lr 1e-4` asked to checkpoint (SIGUSR1), "
            "MemAvailable 12.0 GiB");
  EXPECT_EQ(NoticeText("checkpoint_requested",
                       Rec(R"({"type":"checkpoint_requested","signal":"SIGUSR1","trigger":"pressure",
                              "mem_available_bytes":21474836480,"psi_full_avg10":25.5,"pids":[42]})"),
                       kCtx),
            "spark-01: memory pressure is high: `python train.py --lr 1e-4` asked to checkpoint (SIGUSR1), PSI full "
            "avg10 26%, MemAvailable 20.0 GiB");
  EXPECT_EQ(NoticeText("slowdown", Rec(R"({"type":"slowdown","start_step":52,"ratio":2.97,"cause":"thermal"})"), kCtx),
            "spark-01: `python train.py --lr 1e-4` slowed down: step time 2.97x from step 52 (cause: thermal)");
  EXPECT_EQ(NoticeText("slowdown", Rec(R"({"type":"slowdown","start_step":7,"ratio":1.5})"), kCtx),
            "spark-01: `python train.py --lr 1e-4` slowed down: step time 1.50x from step 7");
  EXPECT_EQ(NoticeText("checkpoint_saved", Rec(R"({"type":"checkpoint_saved","seconds":41.25})"), kCtx),
            "spark-01: `python train.py --lr 1e-4` saved its checkpoint in 41.2 s");
  NoticeFilter f(kCtx);
  EXPECT_FALSE(f.Select(Rec(R"({"type":"checkpoint_requested","pids":[]})"), std::chrono::steady_clock::now()))
      << "a request that reached no process yet is not told";
  EXPECT_TRUE(f.Select(Rec(R"({"type":"checkpoint_requested","pids":[42]})"), std::chrono::steady_clock::now()));
  EXPECT_TRUE(f.Select(Rec(R"({"type":"checkpoint_saved","seconds":1})"), std::chrono::steady_clock::now()));
  NoticeContext long_job = kCtx;
  long_job.job = std::string(100, 'x');
  EXPECT_NE(NoticeText("prochot_on", {}, long_job).find(std::string(60, 'x') + "...`"), std::string::npos);
}

// `sparkops guard` and `sample` watch the host: their notices name the process chosen, not a job.
TEST(NotifyNotice, HostNoticesNameTheProcessAndNoJob) {
  const NoticeContext host{"spark-01", "", ""};
  EXPECT_EQ(NoticeText("memory_guard", Rec(R"({"type":"memory_guard","action":"terminate","signal":"SIGTERM","pid":4242,
                              "name":"python3","mem_available_bytes":2147483648,"min_available_bytes":8589934592})"),
                       host),
            "spark-01: the memory guard stopped pid 4242 (python3) (SIGTERM): MemAvailable 2.0 GiB below the floor "
            "8.0 GiB");
  EXPECT_EQ(NoticeText("memory_guard", Rec(R"({"action":"would_terminate","pid":7,"name":"dd"})"), host),
            "spark-01: the memory guard would stop (dry run) pid 7 (dd)");
  EXPECT_EQ(NoticeText("memory_guard", Rec(R"({"action":"none","reason":"min_available"})"), host),
            "spark-01: the memory guard found nothing it may stop");
  EXPECT_EQ(NoticeText("throttle_start", Rec(R"({"reasons":"sw_thermal"})"), host),
            "spark-01: GPU clocks throttled (sw_thermal)");
  EXPECT_EQ(NoticeText("prochot_on", {}, host), "spark-01: PROCHOT on: the hardware brake fired");
  const auto j = NoticeJson("prochot_on", "t", Rec(R"({"time":"x","type":"prochot_on"})"), host);
  EXPECT_FALSE(j.contains("run_dir") || j.contains("job")) << j.dump();
  EXPECT_EQ(j["host"], "spark-01");
}

TEST(NotifyNotice, JsonHasTheSchemaThenTheRecordsFields) {
  auto j =
      NoticeJson("kernel_xid", "line",
                 Rec(R"({"time":"2026-12-06T03:00:00.000Z","type":"kernel_xid","code":79,"host":"x","pid":7})"), kCtx);
  EXPECT_EQ(
      j.dump(),
      R"({"schema":"sparkops.notify/1","event":"kernel_xid","time":"2026-12-06T03:00:00.000Z","run_dir":"runs/a",)"
      R"("host":"spark-01","job":"python train.py --lr 1e-4","text":"line","code":79,"pid":7})");
}

TEST(NotifyNotice, FilterTellsTheTableAndRateLimitsFloods) {
  NoticeFilter f(kCtx);
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  for (const char* quiet :
       {R"({"type":"memory_guard","action":"flush"})", R"({"type":"throttle","state":"end"})",
        R"({"type":"notify_failed","event":"exit"})", R"({"type":"process_start","pid":1})", R"({"type":"hot"})", "3"})
    EXPECT_FALSE(f.Select(Rec(quiet), t0)) << quiet;
  auto g = f.Select(Rec(R"({"type":"memory_guard","action":"terminate"})"), t0);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->event, "memory_guard");
  auto th = f.Select(Rec(R"({"type":"throttle","state":"start","reasons":"hw_slowdown"})"), t0);
  ASSERT_TRUE(th);
  EXPECT_EQ(th->event, "throttle_start");
  const auto body = nlohmann::json::parse(th->body);
  EXPECT_EQ(body["event"], "throttle_start");
  EXPECT_EQ(body["state"], "start");
  EXPECT_FALSE(f.Select(Rec(R"({"type":"throttle","state":"start"})"), t0 + 599s)) << "one per 10 minutes";
  EXPECT_TRUE(f.Select(Rec(R"({"type":"prochot_on"})"), t0 + 599s)) << "per type";
  EXPECT_TRUE(f.Select(Rec(R"({"type":"throttle","state":"start"})"), t0 + 600s));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(f.Select(Rec(R"({"type":"kernel_xid"})"), t0)) << "never limited";
  EXPECT_FALSE(f.Select(Rec(R"({"type":"oom","signature":"cuda_oom"})"), t0));
  auto e = f.Select(Rec(R"({"type":"exit","code":1})"), t0);
  ASSERT_TRUE(e);
  EXPECT_NE(e->text.find("(out of memory: cuda_oom)"), std::string::npos) << e->text;
}

TEST(NotifyQueue, ABusyDeliveryDropsTheOldestAndSaysSo) {
  NotifyOptions o;
  o.cmds = {"sleep 0.5"};
  o.queue = 4;
  o.drain = 100ms;
  std::mutex mu;
  std::vector<ordered_json> failures;
  auto n = Notifier::Start(o, kCtx, [&](const ordered_json& f) {
    std::lock_guard lock(mu);
    failures.push_back(f);
  });
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) n->Offer(Rec(R"({"type":"kernel_xid"})"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 400ms) << "offering never waits on a delivery";
  n->Close();
  std::lock_guard lock(mu);
  uint64_t dropped = 0, abandoned = 0;
  for (const auto& f : failures) {
    if (f["target"] == "queue") dropped += f["dropped"].get<uint64_t>();
    else if (f["why"].get<std::string>().find("abandoned") != std::string::npos) ++abandoned;
  }
  EXPECT_GE(dropped, 15u) << "20 offered, at most 1 taken at once, 4 kept";
  EXPECT_EQ(dropped + abandoned, 20u) << "every notice is delivered, dropped or abandoned, and said so";
}

TEST(NotifyQueue, ARefusedUrlIsTriedThreeTimesThenReported) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // a port nobody listens on: bound, then closed
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  NotifyOptions o;
  o.urls = {"http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/secret"};
  o.backoff = {10ms, 20ms};
  std::vector<ordered_json> failures;
  auto n = Notifier::Start(o, kCtx, [&](const ordered_json& f) { failures.push_back(f); });
  n->Offer(Rec(R"({"type":"exit","code":0})"));
  n->Close();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["event"], "exit");
  EXPECT_EQ(failures[0]["tries"], 3);
  EXPECT_EQ(failures[0]["target"], "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)));
  EXPECT_NE(failures[0]["why"].get<std::string>().find("connect"), std::string::npos) << failures[0].dump();
}

}  // namespace
}  // namespace sparkops
