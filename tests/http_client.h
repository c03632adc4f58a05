#pragma once
/// A small blocking HTTP/1.1 client for the exporter tests (loopback only): keep-alive reuse,
/// Content-Length framing, a bound source address (127.0.0.x) to act as distinct clients, and raw
/// helpers for pipelining. Header-only, tests only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "base/strings.h"

namespace sparkops::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  ///< names lower-cased
  std::string body;
  std::string get_header_value(const std::string& name) const {
    auto it = headers.find(ToLower(name));
    return it == headers.end() ? std::string() : it->second;
  }
};

/// A TCP connection to 127.0.0.1:`port` from `source` (empty: any); -1 on failure.
inline int ConnectLoopback(int port, const std::string& source = "", bool nonblocking = false) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  if (!source.empty()) {
    sockaddr_in s{};
    s.sin_family = AF_INET;
    inet_pton(AF_INET, source.c_str(), &s.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&s), sizeof s) != 0) {
      close(fd);
      return -1;
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/// Reads one reply from `fd` within `timeout_ms`; `buf` keeps bytes read past it (pipelining).
/// `head_request`: the reply has no body whatever its Content-Length says. nullopt on timeout,
/// EOF or a malformed reply.
inline std::optional<HttpResponse> ReadReply(int fd, std::string& buf, int timeout_ms, bool head_request = false) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto fill = [&]() -> bool {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char tmp[65536];
    ssize_t n = recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
    return true;
  };
  size_t end;
  while ((end = buf.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return std::nullopt;
  HttpResponse r;
  std::string_view head(buf.data(), end);
  auto lines = Split(head, '\n');
  if (lines.empty() || lines[0].size() < 12 || lines[0].substr(0, 5) != "HTTP/") return std::nullopt;
  r.status = std::stoi(std::string(lines[0].substr(9, 3)));
  for (size_t i = 1; i < lines.size(); ++i) {
    auto colon = lines[i].find(':');
    if (colon == std::string_view::npos) continue;
    r.headers[ToLower(Trim(lines[i].substr(0, colon)))] = std::string(Trim(lines[i].substr(colon + 1)));
  }
  size_t length = head_request ? 0 : std::stoul("0" + r.get_header_value("Content-Length"));
  while (buf.size() < end + 4 + length)
    if (!fill()) return std::nullopt;
  r.body = buf.substr(end + 4, length);
  buf.erase(0, end + 4 + length);
  return r;
}

/// Just enough of an HTTP client for the tests: one keep-alive connection, reopened as needed.
class HttpClient {
 public:
  explicit HttpClient(int port, std::string source = "") : port_(port), source_(std::move(source)) {}
  ~HttpClient() { Drop(); }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  void set_read_timeout(int seconds, int /*usec*/ = 0) { timeout_ms_ = seconds * 1000; }

  std::optional<HttpResponse> Get(const std::string& path) { return Send("GET", path, ""); }
  std::optional<HttpResponse> Head(const std::string& path) { return Send("HEAD", path, ""); }
  std::optional<HttpResponse> Delete(const std::string& path) { return Send("DELETE", path, ""); }
  std::optional<HttpResponse> Post(const std::string& path, const std::string& body, const std::string& type) {
    return Send("POST", path, body, "Content-Type: " + type + "\r\n");
  }

  /// One request; a reused connection the server has closed meanwhile is reopened once.
  std::optional<HttpResponse> Send(const std::string& method, const std::string& path, const std::string& body,
                                   const std::string& extra_headers = "") {
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers;
    if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n" + body;
    for (int attempt = 0; attempt < 2; ++attempt) {
      const bool reused = fd_ >= 0;
      if (fd_ < 0 && (fd_ = ConnectLoopback(port_, source_)) < 0) return std::nullopt;
      buf_.clear();
      if (send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
        auto r = ReadReply(fd_, buf_, timeout_ms_, method == "HEAD");
        if (r) {
          if (ToLower(r->get_header_value("Connection")) == "close") Drop();
          return r;
        }
      }
      Drop();
      if (!reused) break;
    }
    return std::nullopt;
  }

 private:
  void Drop() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int port_;
  std::string source_;
  int fd_ = -1;
  int timeout_ms_ = 5000;
  std::string buf_;
};

}  // namespace sparkops::testing
