// The exporter's request head parser and reply head writer (exporter/http_request.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exporter/http_request.h"

namespace sparkops {
namespace {

using S = RequestHead::Status;

TEST(HttpRequestHead, CompleteHeads) {
  struct Case {
    std::string in;
    const char* method;
    const char* path;
    bool keep_alive, has_body;
  } cases[] = {
      {"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "GET", "/metrics", true, false},
      {"GET /metrics?x=1 HTTP/1.1\r\n\r\n", "GET", "/metrics", true, false},
      {"HEAD / HTTP/1.1\r\nConnection: close\r\n\r\n", "HEAD", "/", false, false},
      {"GET / HTTP/1.1\r\nconnection: Keep-Alive, CLOSE\r\n\r\n", "GET", "/", false, false},
      {"GET / HTTP/1.0\r\n\r\n", "GET", "/", false, false},
      {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "GET", "/", true, false},
      {"GET / HTTP/1.1\nHost: x\n\n", "GET", "/", true, false},  // bare LF line ends
      {"\r\n\r\nGET / HTTP/1.1\r\n\r\n", "GET", "/", true, false},  // leading blank lines skipped
      {"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", "POST", "/metrics", true, true},
      {"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "POST", "/", true, false},
      {"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "PUT", "/", true, true},
      {"GET / HTTP/1.1\r\nX-Empty:\r\nX-Tab:\tv\r\n\r\n", "GET", "/", true, false},
  };
  for (const Case& c : cases) {
    RequestHead h = ParseRequestHead(c.in);
    ASSERT_EQ(h.status, S::kComplete) << c.in;
    EXPECT_EQ(h.method, c.method) << c.in;
    EXPECT_EQ(h.path, c.path) << c.in;
    EXPECT_EQ(h.keep_alive, c.keep_alive) << c.in;
    EXPECT_EQ(h.has_body, c.has_body) << c.in;
    EXPECT_EQ(c.in.substr(h.consumed), c.has_body && c.in.ends_with("hello") ? "hello" : "") << c.in;
  }
}

TEST(HttpRequestHead, PipelinedHeadsAreConsumedOneAtATime) {
  const std::string two = "GET /metrics HTTP/1.1\r\n\r\nHEAD / HTTP/1.1\r\n\r\n";
  RequestHead a = ParseRequestHead(two);
  ASSERT_EQ(a.status, S::kComplete);
  EXPECT_EQ(a.method, "GET");
  RequestHead b = ParseRequestHead(std::string_view(two).substr(a.consumed));
  ASSERT_EQ(b.status, S::kComplete);
  EXPECT_EQ(b.method, "HEAD");
  EXPECT_EQ(a.consumed + b.consumed, two.size());
}

TEST(HttpRequestHead, IncompleteWantsMore) {
  for (const char* in : {"", "G", "GET /metrics HTTP/1.1", "GET /metrics HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: x\r\n",
                         "GET / HTTP/1.1\r\nHost: x\r\n\r"})
    EXPECT_EQ(ParseRequestHead(in).status, S::kNeedMore) << in;
}

TEST(HttpRequestHead, MalformedIsRejected400) {
  for (const std::string& in : std::vector<std::string>{
           "garbage\r\n\r\n", "GET /metrics HTTP/9.9\r\n\r\n", "BREW /metrics HTTP/1.1\r\n\r\n",
           "get / HTTP/1.1\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 \r\n\r\n", "GET HTTP/1.1\r\n\r\n",
           "GET ? HTTP/1.0\r\n\r\n" /* fuzz: no path */, "GET ?x=1 HTTP/1.1\r\n\r\n",
           "GET / HTTP/1.1\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
           "GET / HTTP/1.1\r\nBad Name: v\r\n\r\n", "GET / HTTP/1.1\r\nName : v\r\n\r\n",
           "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
           "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", "GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n",
           std::string("GET /\0 HTTP/1.1\r\n\r\n", 19), std::string("\x00\x01\x02\xff\r\n\r\n", 8)}) {
    RequestHead h = ParseRequestHead(in);
    EXPECT_EQ(h.status, S::kReject) << in;
    EXPECT_EQ(h.reject_status, 400) << in;
  }
}

TEST(HttpRequestHead, EightKibCap) {
  // A request line with no end within the cap: 400. Exactly at the cap but complete: accepted.
  RequestHead line = ParseRequestHead("GET /" + std::string(kMaxRequestHead, 'a'));
  EXPECT_EQ(line.status, S::kReject);
  EXPECT_EQ(line.reject_status, 400);
  // Headers over the cap: 431, whether or not the rest has arrived.
  std::string big = "GET / HTTP/1.1\r\nX-Big: " + std::string(kMaxRequestHead, 'b');
  RequestHead hdr = ParseRequestHead(big);
  EXPECT_EQ(hdr.status, S::kReject);
  EXPECT_EQ(hdr.reject_status, 431);
  EXPECT_EQ(ParseRequestHead(big + "\r\n\r\n").reject_status, 431);
  const std::string prefix = "GET / HTTP/1.1\r\nX: ";
  std::string exact = prefix + std::string(kMaxRequestHead - prefix.size() - 4, 'c') + "\r\n\r\n";
  ASSERT_EQ(exact.size(), kMaxRequestHead);
  RequestHead ok = ParseRequestHead(exact + "GET / HTTP/1.1\r\n");  // the next request may follow
  EXPECT_EQ(ok.status, S::kComplete);
  EXPECT_EQ(ok.consumed, kMaxRequestHead);
  // One byte more and it is over.
  EXPECT_EQ(ParseRequestHead(prefix + std::string(kMaxRequestHead - prefix.size() - 3, 'c') + "\r\n\r\n").reject_status,
            431);
}

TEST(HttpReplyHead, Fields) {
  EXPECT_EQ(ReplyHead(200, "text/plain", 12, "", false),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\n");
  EXPECT_EQ(ReplyHead(405, "text/plain", 3, "GET, HEAD", true),
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nAllow: GET, "
            "HEAD\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(ReplyHead(431, "", 0, "", true),
            "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace sparkops
