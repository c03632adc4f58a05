#pragma once
/// The exporter's HTTP side: address parsing, request routing (a pure function, fuzzable), a
/// task queue that bounds pending connections, and the serving loop (cpp-httplib 0.11).
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/error.h"

namespace httplib {
class TaskQueue;
}

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

/// Bounds of the server (defaults are what `sparkops exporter` uses).
struct ServerLimits {
  size_t threads = 8;             ///< connections served at once
  size_t max_pending = 64;        ///< accepted connections waiting for a thread; beyond: the kernel backlog
  size_t backlog = 128;           ///< kernel listen backlog (connections not yet accepted)
  size_t payload_max = 1024;      ///< request body bytes (only GET is served; bodies are never read)
  int read_timeout_s = 5;         ///< per read on a connection
  int keep_alive_timeout_s = 2;   ///< idle keep-alive connection is closed after this
  size_t keep_alive_max = 100;    ///< requests per connection
  /// Milliseconds a request (request line and headers) may take to arrive: counted from the
  /// accept for a connection's first request (time queued for a thread included), from its first
  /// byte for a later keep-alive one. Then the server stops waiting for the client and closes the
  /// connection without a reply; bytes that have already arrived are still read, so a complete
  /// request that waited in the queue is answered. A scrape request is < 1 KB sent at once.
  int request_deadline_ms = 2000;
};

/// cpp-httplib task queue with `threads` workers holding at most `max_pending` queued connections:
/// enqueue() blocks while the queue is full (the accept loop then stops accepting, and further
/// clients wait in the kernel's listen backlog). shutdown() runs what is queued, then joins.
/// Serve() counts a connection's first request deadline from when its job was enqueued (the accept).
std::unique_ptr<httplib::TaskQueue> NewBoundedTaskQueue(size_t threads, size_t max_pending);

/// Serves until `stop` becomes true (checked every 100 ms) or the listener fails. `on_listening`
/// gets the bound port once the socket is listening. Returns an error when the address cannot be
/// bound.
Result<void> Serve(const ListenAddress& addr, const ServerLimits& limits,
                   const std::function<std::string()>& metrics, const std::atomic<bool>& stop,
                   const std::function<void(int port)>& on_listening);

}  // namespace sparkops
