#include "exporter/server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/strings.h"
#include "exporter/request_stream.h"

namespace sparkops {

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress a;
  std::string_view port;
  if (StartsWith(text, "[")) {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return InputError(fmt::format("--listen: '{}': expected [IPV6]:PORT", text));
    a.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon)
      return InputError(fmt::format("--listen: '{}': expected HOST:PORT (IPv6 in brackets)", text));
    a.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  if (a.host.empty()) return InputError(fmt::format("--listen: '{}': the host is empty (use 127.0.0.1)", text));
  auto p = ParseUint(port);
  if (!p || *p > 65535) return InputError(fmt::format("--listen: '{}': port '{}' is not 0..65535", text, port));
  a.port = static_cast<int>(*p);
  return a;
}

bool IsLoopbackHost(std::string_view host) {
  return host == "localhost" || host == "::1" || StartsWith(host, "127.");
}

HttpReply Route(std::string_view method, std::string_view path, const std::function<std::string()>& metrics) {
  HttpReply r;
  const bool known = path == "/metrics" || path == "/";
  if (!known) {
    r.status = 404;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "not found: this exporter serves /metrics\n";
    return r;
  }
  if (method != "GET" && method != "HEAD") {
    r.status = 405;
    r.allow = "GET, HEAD";
    r.content_type = "text/plain; charset=utf-8";
    r.body = "method not allowed: the exporter is read-only (GET, HEAD)\n";
    return r;
  }
  r.status = 200;
  if (path == "/metrics") {
    r.content_type = kMetricsContentType;
    r.body = metrics();
  } else {
    r.content_type = "text/html; charset=utf-8";
    r.body =
        "<!DOCTYPE html>\n<html><head><title>sparkops exporter</title></head><body>\n"
        "<h1>sparkops exporter</h1>\n"
        "<p>GPU, unified-memory, workload and preflight metrics for Prometheus.</p>\n"
        "<p><a href=\"/metrics\">/metrics</a></p>\n</body></html>\n";
  }
  return r;
}

namespace {
using Clock = std::chrono::steady_clock;

/// When the job this worker thread is running was enqueued: for httplib's accept loop, the moment
/// its connection was accepted. Unset outside a BoundedTaskQueue job.
thread_local std::optional<Clock::time_point> t_job_queued_at;

/// A fixed pool of worker threads whose queue holds at most `max_pending` accepted connections.
/// When it is full, enqueue() blocks the accept loop, so further clients wait in the kernel's
/// listen backlog instead of growing our memory (httplib 0.11's ThreadPool queue is unbounded).
class BoundedTaskQueue : public httplib::TaskQueue {
 public:
  BoundedTaskQueue(size_t threads, size_t max_pending) : max_pending_(max_pending ? max_pending : 1) {
    for (size_t i = 0; i < (threads ? threads : 1); ++i) workers_.emplace_back([this] { Work(); });
  }
  ~BoundedTaskQueue() override = default;

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait(lock, [this] { return jobs_.size() < max_pending_ || shutdown_; });
    jobs_.push_back({std::move(fn), Clock::now()});  // even after shutdown: the job owns the socket and closes it
    ready_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
    }
    ready_.notify_all();
    space_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  void Work() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [this] { return !jobs_.empty() || shutdown_; });
        if (jobs_.empty()) return;  // shut down and drained
        job = std::move(jobs_.front());
        jobs_.pop_front();
        space_.notify_one();
      }
      t_job_queued_at = job.queued_at;
      job.fn();
      t_job_queued_at.reset();
    }
  }

  struct Job {
    std::function<void()> fn;
    Clock::time_point queued_at;
  };
  const size_t max_pending_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<Job> jobs_;
  std::vector<std::thread> workers_;
  bool shutdown_ = false;
};

}  // namespace

std::unique_ptr<httplib::TaskQueue> NewBoundedTaskQueue(size_t threads, size_t max_pending) {
  return std::make_unique<BoundedTaskQueue>(threads, max_pending);
}

namespace {

/// httplib::Server with its listening socket reachable (0.11 listens with a fixed backlog of 5,
/// so a burst of clients beyond the bounded queue lost SYNs and waited seconds for retransmits),
/// and a deadline for each request.
class Server : public httplib::Server {
 public:
  explicit Server(std::chrono::milliseconds request_deadline) : request_deadline_(request_deadline) {}
  /// Re-arms listen() with `backlog` (Linux updates the backlog of a listening socket).
  void SetBacklog(int backlog) { ::listen(svr_sock_.load(), backlog); }

 private:
  /// httplib's per-connection loop (a private virtual of httplib::Server, called from its accept
  /// loop's job), mirrored from 0.11.4 with two changes: each request is read through a
  /// RequestStream whose reads stop at the request's deadline, and idle keep-alive waits notice a
  /// stopping server within 100 ms. A worker held by a slow client is thus free again at the
  /// deadline; there is no watchdog thread, and no socket is ever shut down by another thread.
  bool process_and_close_socket(socket_t sock) override {
    using std::chrono::milliseconds;
    const auto to_ms = [](time_t s, time_t us) { return milliseconds(s * 1000 + us / 1000); };
    const milliseconds read_timeout = to_ms(read_timeout_sec_, read_timeout_usec_);
    const milliseconds write_timeout = to_ms(write_timeout_sec_, write_timeout_usec_);
    bool ret = false;
    for (size_t count = keep_alive_max_count_; count > 0 && svr_sock_ != INVALID_SOCKET; --count) {
      Clock::time_point started;
      if (count == keep_alive_max_count_) {
        started = t_job_queued_at.value_or(Clock::now());  // first request: from the accept
      } else {
        if (!WaitForNextRequest(sock)) break;
        started = Clock::now();
      }
      RequestStream strm(sock, started + request_deadline_, read_timeout, write_timeout);
      bool connection_closed = false;
      ret = process_request(strm, /*close_connection=*/count == 1, connection_closed, nullptr);
      if (!ret || connection_closed) break;
    }
    ::shutdown(sock, SHUT_RDWR);
    httplib::detail::close_socket(sock);
    return ret;
  }

  /// An idle keep-alive connection: true when the next request's first bytes arrived within the
  /// keep-alive timeout (httplib's own loop waits the same way, but does not watch for a stop).
  bool WaitForNextRequest(socket_t sock) const {
    const auto until = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
    while (svr_sock_ != INVALID_SOCKET) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{sock, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<decltype(left)>(left, 100)));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
    return false;
  }

  std::chrono::milliseconds request_deadline_;
};

}  // namespace

Result<void> Serve(const ListenAddress& addr, const ServerLimits& limits,
                   const std::function<std::string()>& metrics, const std::atomic<bool>& stop,
                   const std::function<void(int port)>& on_listening) {
  Server svr(std::chrono::milliseconds(limits.request_deadline_ms));
  svr.new_task_queue = [limits] { return NewBoundedTaskQueue(limits.threads, limits.max_pending).release(); };
  svr.set_payload_max_length(limits.payload_max);
  svr.set_tcp_nodelay(true);  // header and body go out in separate writes: no Nagle/delayed-ACK 40 ms stall
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second process
  // bind the same port and silently share (or steal) the scrapes.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  svr.set_read_timeout(limits.read_timeout_s, 0);
  svr.set_write_timeout(limits.read_timeout_s, 0);
  svr.set_keep_alive_timeout(limits.keep_alive_timeout_s);
  svr.set_keep_alive_max_count(limits.keep_alive_max);
  // Every request is routed here, before httplib reads any body.
  svr.set_pre_routing_handler([&metrics](const httplib::Request& req, httplib::Response& res) {
    HttpReply r = Route(req.method, req.path, metrics);
    res.status = r.status;
    if (!r.allow.empty()) res.set_header("Allow", r.allow);
    if (r.status != 200) res.set_header("Connection", "close");  // an unread body must not be parsed as a request
    res.set_content(std::move(r.body), r.content_type.c_str());
    return httplib::Server::HandlerResponse::Handled;
  });

  int port = addr.port;
  if (port == 0) {
    port = svr.bind_to_any_port(addr.host);
    if (port < 0) return IoError(fmt::format("--listen: cannot bind {}:0", addr.host));
  } else if (!svr.bind_to_port(addr.host, port)) {
    return IoError(fmt::format("--listen: cannot bind {}:{} (in use, or not an address of this machine)",
                               addr.host, port));
  }
  svr.SetBacklog(static_cast<int>(limits.backlog));
  std::atomic<bool> listener_done{false};
  std::thread listener([&svr, &listener_done] {
    svr.listen_after_bind();
    listener_done = true;
  });
  if (on_listening) on_listening(port);
  while (!stop.load() && !listener_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  bool failed = listener_done.load() && !stop.load();
  // httplib's stop() does nothing until listen_after_bind() has started running (a stop that
  // arrives right after the bind would be lost and join() would hang): repeat until it returns.
  while (!listener_done.load()) {
    svr.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  listener.join();
  if (failed) return IoError(fmt::format("the listener on {}:{} stopped unexpectedly", addr.host, port));
  return {};
}

}  // namespace sparkops
