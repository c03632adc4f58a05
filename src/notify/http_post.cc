#include "notify/http_post.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/strings.h"
#include "build_info.h"

namespace sparkops {

namespace {

constexpr std::string_view kCurlAdvice =
    "HTTPS is not built in (no TLS library in the glibc-only binary); use --notify-cmd "
    "'curl -fsS -m 10 -H \"Content-Type: application/json\" --data-binary @- https://...'";

using Clock = std::chrono::steady_clock;

/// Waits for `events` on `fd` until `deadline`; "" when ready, else why not.
std::string WaitFor(int fd, short events, Clock::time_point deadline, int stop_fd) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return "timed out";
    pollfd p[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    int r = ::poll(p, stop_fd >= 0 ? 2 : 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return std::strerror(errno);
    if (stop_fd >= 0 && p[1].revents) return "abandoned: run is ending";
    if (p[0].revents) return "";
  }
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string HttpUrl::Origin() const {
  return fmt::format("http://{}:{}", host.find(':') != std::string::npos ? "[" + host + "]" : host, port);
}

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  const std::string lower = ToLower(std::string(url.substr(0, std::min<size_t>(url.size(), 8))));
  if (lower.starts_with("https://")) return InputError(std::string(kCurlAdvice));
  if (!lower.starts_with("http://")) return InputError("not an http:// URL");
  for (char c : url)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return InputError("spaces or control characters in the URL");
  std::string_view rest = url.substr(7);
  if (auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  const size_t end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end);
  HttpUrl u;
  if (end != std::string_view::npos)
    u.path = rest[end] == '?' ? "/" + std::string(rest.substr(end)) : std::string(rest.substr(end));
  if (authority.find('@') != std::string_view::npos) return InputError("credentials in the URL are not supported");
  std::string_view port;
  if (authority.starts_with("[")) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return InputError("an unclosed [ in the host");
    u.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after[0] != ':') return InputError("text after the IPv6 address");
    if (!after.empty()) port = after.substr(1), u.port = -1;
  } else {
    const size_t colon = authority.find(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1), u.port = -1;
  }
  if (u.host.empty()) return InputError("no host in the URL");
  if (u.port == -1) {
    auto p = ParseUint(port);
    if (!p || *p < 1 || *p > 65535) return InputError(fmt::format("bad port '{}' (1-65535)", port));
    u.port = static_cast<int>(*p);
  }
  return u;
}

std::optional<int> ParseStatusLine(std::string_view line) {
  if (!line.starts_with("HTTP/1.") || line.size() < 12 || line[8] != ' ') return std::nullopt;
  auto code = ParseUint(line.substr(9, 3));
  if (!code || *code < 100 || *code > 599 || (line.size() > 12 && line[12] != ' ' && line[12] != '\r'))
    return std::nullopt;
  return static_cast<int>(*code);
}

std::string PostRequest(const HttpUrl& url, std::string_view body) {
  std::string host = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
  if (url.port != 80) host += fmt::format(":{}", url.port);
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: sparkops/{}\r\nContent-Type: application/json\r\n"
      "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
      url.path, host, SPARKOPS_VERSION, body.size(), body);
}

Result<int> PostJson(const HttpUrl& url, std::string_view body, std::chrono::milliseconds timeout, int stop_fd) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(url.host.c_str(), std::to_string(url.port).c_str(), &hints, &res); rc != 0 || !res)
    return IoError(fmt::format("resolve {}: {}", url.host, ::gai_strerror(rc)));
  const auto deadline = Clock::now() + timeout;
  Fd s;
  std::string why = "no address";
  for (addrinfo* ai = res; ai && s.fd < 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      why = std::strerror(errno), ::close(fd);
      continue;
    }
    if (why = WaitFor(fd, POLLOUT, deadline, stop_fd); why.empty()) {
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) s.fd = fd;
      else why = std::strerror(err);
    }
    if (s.fd < 0) ::close(fd);
  }
  ::freeaddrinfo(res);
  if (s.fd < 0) return IoError("connect: " + why);
  const std::string req = PostRequest(url, body);
  for (size_t sent = 0; sent < req.size();) {
    if (why = WaitFor(s.fd, POLLOUT, deadline, stop_fd); !why.empty()) return IoError("send: " + why);
    ssize_t n = ::send(s.fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) return IoError(std::string("send: ") + std::strerror(errno));
    sent += static_cast<size_t>(n);
  }
  std::string head;
  while (head.find('\n') == std::string::npos && head.size() < 4096) {
    if (why = WaitFor(s.fd, POLLIN, deadline, stop_fd); !why.empty()) return IoError("no reply: " + why);
    char buf[1024];
    ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return IoError(n == 0 ? "no reply: connection closed" : std::string("recv: ") + std::strerror(errno));
    head.append(buf, static_cast<size_t>(n));
  }
  auto code = ParseStatusLine(std::string_view(head).substr(0, head.find('\n')));
  if (!code) return IoError("not an HTTP reply");
  return *code;
}

}  // namespace sparkops
