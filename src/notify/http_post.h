#pragma once
/// `run --notify URL`: the URL (plain http:// only) and one HTTP/1.1 POST of a JSON body, bounded
/// by a deadline and a stop descriptor. HTTPS is refused: a TLS library would have to be linked
/// into the glibc-only binary; `--notify-cmd` with curl reaches an HTTPS webhook (docs/notify.md).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops {

struct HttpUrl {
  std::string host;  ///< a name, an IPv4 address, or an IPv6 address without its brackets
  int port = 80;
  std::string path = "/";  ///< with its query; the fragment dropped
  /// `http://host:port`, the path left out (a webhook's path often holds its secret).
  std::string Origin() const;
};

/// Pure. Input error naming what is wrong: not http:// (HTTPS with the curl advice), no host, a bad
/// port (not 1-65535), credentials, spaces or control characters.
Result<HttpUrl> ParseHttpUrl(std::string_view url);

/// Pure: the status code of an HTTP/1.x status line (`HTTP/1.1 204 No Content`), else nullopt.
std::optional<int> ParseStatusLine(std::string_view line);

/// The request's bytes (pure): POST with Host, Content-Type application/json, Content-Length and
/// Connection: close.
std::string PostRequest(const HttpUrl& url, std::string_view body);

/// POSTs `body` to `url` and reads the status line: the status code, or an Io error (resolve,
/// connect, send, receive, timeout) naming the step. The whole exchange ends by `timeout`, or at
/// once when `stop_fd` (>= 0) becomes readable. Name resolution (getaddrinfo) is outside the bound.
Result<int> PostJson(const HttpUrl& url, std::string_view body, std::chrono::milliseconds timeout, int stop_fd);

}  // namespace sparkops
