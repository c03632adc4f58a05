#pragma once
/// The exporter's HTTP side: address parsing, request routing (a pure function, fuzzable) and the
/// serving loop (server_loop.cc, the project's own epoll server; docs/exporter-server.md).
#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops {

/// --listen HOST:PORT ("127.0.0.1:9842", "[::1]:9842", "0.0.0.0:9842"); port 0 picks a free one.
struct ListenAddress {
  std::string host;  ///< without brackets
  int port = 0;
};
Result<ListenAddress> ParseListenAddress(std::string_view text);
/// True for 127.0.0.0/8, ::1 and "localhost": reachable from this machine only.
bool IsLoopbackHost(std::string_view host);

/// One HTTP reply, decided without any I/O.
struct HttpReply {
  int status = 404;
  std::string content_type;
  std::string body;
  std::string allow;  ///< Allow header for 405
};

/// The exposition format's content type.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

/// Pure routing: GET/HEAD /metrics -> 200 with `metrics()`, GET/HEAD / -> 200 HTML index,
/// another method on those paths -> 405 (Allow: GET, HEAD), any other path -> 404.
/// `metrics` is only called for a /metrics GET or HEAD.
HttpReply Route(std::string_view method, std::string_view path, const std::function<std::string()>& metrics);

/// Bounds of the server (defaults are what `sparkops exporter` uses). One thread serves every
/// connection from an epoll loop over non-blocking sockets (server_loop.cc): no client can hold
/// it, and memory per connection is bounded by the 8 KiB request head cap (http_request.h).
struct ServerLimits {
  size_t max_connections = 1024;   ///< open connections in total; past it a new one is closed at once...
  size_t max_per_client = 512;     ///< ...and past this many from one peer address
  /// ...except that a connection from a peer that holds none at all takes the place of the
  /// oldest connection that is not being answered (an idle or incomplete one): a new scraper always
  /// gets in, however many connections others hold.
  size_t backlog = 128;            ///< kernel listen backlog (connections not yet accepted)
  /// Milliseconds a request (request line and headers) may take to arrive: counted from the
  /// accept for a connection's first request, from its first byte for a later keep-alive one.
  /// Then the connection is closed without a reply.
  int request_deadline_ms = 2000;
  int keep_alive_timeout_ms = 2000;  ///< an idle keep-alive connection is closed after this
  int write_timeout_ms = 5000;       ///< a reply that makes no progress for this long: closed
  size_t keep_alive_max = 100;       ///< requests per connection; the last is answered with close
};

/// Serves until `stop` becomes true (checked every 100 ms) or the listener fails. `on_listening`
/// gets the bound port once the socket is listening. Returns an error when the address cannot be
/// bound.
Result<void> Serve(const ListenAddress& addr, const ServerLimits& limits, const std::function<std::string()>& metrics,
                   const std::atomic<bool>& stop, const std::function<void(int port)>& on_listening);

}  // namespace sparkops
