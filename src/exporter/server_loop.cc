// The exporter's HTTP server: one thread, one epoll set, non-blocking sockets. No read or write
// ever waits for a client, so a slow or hostile client costs a scrape nothing but its share of a
// loop iteration; every connection is bounded (request head 8 KiB, one reply in flight, timers).
// Design, limits and measurements: docs/exporter-server.md.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "exporter/http_request.h"
#include "exporter/server.h"

namespace sparkops {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr uint64_t kListenTag = ~uint64_t{0};
constexpr size_t kRequestsPerTurn = 16;    ///< pipelined requests answered per connection per loop turn
constexpr size_t kAcceptsPerTurn = 256;    ///< new connections taken per loop turn
constexpr size_t kDrainMax = 1u << 20;     ///< bytes discarded from a connection being closed
constexpr milliseconds kDrainTime{1000};   ///< how long a closing connection's input is discarded
constexpr milliseconds kTick{50};          ///< timer resolution

struct Conn {
  enum class State { kReading, kWriting, kDraining };
  int fd = -1;
  uint32_t gen = 0;
  State state = State::kReading;
  std::string peer;  ///< peer address bytes (IPv4-mapped IPv6 as IPv4)
  std::string in;    ///< received and not yet answered; at most kMaxRequestHead bytes
  std::string out_head;
  std::shared_ptr<const std::string> out_body;  ///< shared: concurrent scrapes reuse one body
  size_t out_off = 0;
  bool close_after = false, peer_eof = false, reading = true, want_write = false;
  size_t served = 0, drained = 0;
  Clock::time_point since;  ///< start of the current wait: accept, first byte, idle, last write progress, drain
};

std::string PeerKey(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a).sin_addr;
    return std::string(reinterpret_cast<const char*>(&in), sizeof in);
  }
  if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&in6)) return std::string(reinterpret_cast<const char*>(&in6) + 12, 4);
    return std::string(reinterpret_cast<const char*>(&in6), sizeof in6);
  }
  return {};
}

class Loop {
 public:
  Loop(const ServerLimits& limits, const std::function<std::string()>& metrics) : limits_(limits), metrics_(metrics) {}
  ~Loop() {
    for (auto& c : conns_)
      if (c) ::close(c->fd);
    if (lfd_ >= 0) ::close(lfd_);
    if (ep_ >= 0) ::close(ep_);
    if (spare_ >= 0) ::close(spare_);
  }

  /// Binds and listens; the bound port.
  Result<int> Listen(const ListenAddress& addr) {
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return IoError(fmt::format("epoll_create1: {}", std::strerror(errno)));
    spare_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(addr.port);
    const std::string where = fmt::format("{}:{}", addr.host, addr.port);
    // An address that is not this machine's is the user's mistake (an Input error: exit 2); a port in
    // use or a refusal is the machine's state (an Io error: exit 1).
    if (::getaddrinfo(addr.host.c_str(), port.c_str(), &hints, &res) != 0 || !res)
      return InputError(fmt::format("--listen: cannot bind {}: not an address of this machine", where));
    int last_errno = 0;
    bool only_not_ours = true;
    for (addrinfo* ai = res; ai && lfd_ < 0; ai = ai->ai_next) {
      int fd = ::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        last_errno = errno, only_not_ours = only_not_ours && errno == EAFNOSUPPORT;
        continue;
      }
      int yes = 1;  // SO_REUSEADDR only: SO_REUSEPORT would let a second exporter share the port
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, static_cast<int>(limits_.backlog)) == 0) {
        lfd_ = fd;
      } else {
        last_errno = errno, only_not_ours = only_not_ours && errno == EADDRNOTAVAIL;
        ::close(fd);
      }
    }
    ::freeaddrinfo(res);
    if (lfd_ < 0 && only_not_ours)
      return InputError(fmt::format("--listen: cannot bind {}: not an address of this machine", where));
    if (lfd_ < 0) return IoError(fmt::format("--listen: cannot bind {}: {}", where, std::strerror(last_errno)));
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(lfd_, reinterpret_cast<sockaddr*>(&bound), &len);
    int bound_port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(bound).sin6_port)
                                                 : ntohs(reinterpret_cast<sockaddr_in&>(bound).sin_port);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenTag;
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, lfd_, &ev) != 0)
      return IoError(fmt::format("epoll_ctl: {}", std::strerror(errno)));
    return bound_port;
  }

  void Run(const std::atomic<bool>& stop) {
    epoll_event events[64];
    auto next_sweep = Clock::now() + kTick;
    while (!stop.load()) {
      int timeout = ready_.empty() ? static_cast<int>(kTick.count()) : 0;
      int n = ::epoll_wait(ep_, events, 64, timeout);
      if (n < 0 && errno != EINTR) return;
      bool accept = false;
      for (int i = 0; i < n; ++i) {
        if (events[i].data.u64 == kListenTag) {
          accept = true;
        } else if (Conn* c = Find(events[i].data.u64)) {
          OnEvent(*c, events[i].events);
        }
      }
      if (accept) AcceptSome();
      RunReady();
      if (auto now = Clock::now(); now >= next_sweep) {
        Sweep(now);
        next_sweep = now + kTick;
      }
    }
  }

 private:
  static uint64_t Tag(const Conn& c) { return (uint64_t{c.gen} << 32) | static_cast<uint32_t>(c.fd); }
  Conn* Find(uint64_t tag) {
    size_t fd = static_cast<uint32_t>(tag);
    if (fd >= conns_.size() || !conns_[fd] || conns_[fd]->gen != static_cast<uint32_t>(tag >> 32)) return nullptr;
    return conns_[fd].get();
  }

  void Watch(Conn& c, bool read, bool write) {
    if (read == c.reading && write == c.want_write) return;
    c.reading = read;
    c.want_write = write;
    epoll_event ev{};
    ev.events = (read ? uint32_t{EPOLLIN} : 0u) | (write ? uint32_t{EPOLLOUT} : 0u);
    ev.data.u64 = Tag(c);
    ::epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
  }

  void AcceptSome() {
    for (size_t i = 0; i < kAcceptsPerTurn; ++i) {
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      int fd = ::accept4(lfd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if ((errno == EMFILE || errno == ENFILE) && spare_ >= 0) {
          // Out of descriptors: take the connection with the spare one and close it at once,
          // rather than leave it in the backlog waking epoll forever.
          ::close(spare_);
          int c = ::accept4(lfd_, nullptr, nullptr, SOCK_CLOEXEC);
          if (c >= 0) ::close(c);
          spare_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
          continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN: none left
      }
      Admit(fd, PeerKey(peer));
    }
  }

  void Admit(int fd, std::string peer) {
    size_t& from_peer = per_peer_[peer];
    const bool new_client = from_peer == 0;
    if (from_peer >= limits_.max_per_client || (open_ >= limits_.max_connections && !(new_client && EvictOne()))) {
      if (from_peer == 0) per_peer_.erase(peer);
      ::close(fd);  // past a cap: closed at once
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (static_cast<size_t>(fd) >= conns_.size()) conns_.resize(static_cast<size_t>(fd) + 1);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->gen = ++gen_;
    c->peer = std::move(peer);
    c->since = Clock::now();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = Tag(*c);
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      if (per_peer_[c->peer] == 0) per_peer_.erase(c->peer);
      ::close(fd);
      return;
    }
    ++per_peer_[c->peer];
    ++open_;
    conns_[static_cast<size_t>(fd)] = std::move(c);
  }

  /// Closes the connection that has waited longest without being answered (one being closed
  /// first, then an idle or incomplete one); false when every connection is receiving a reply.
  bool EvictOne() {
    Conn* victim = nullptr;
    for (auto& c : conns_) {
      if (!c || c->state == Conn::State::kWriting) continue;
      auto rank = [](const Conn& x) { return x.state == Conn::State::kDraining ? 0 : 1; };
      if (!victim || rank(*c) < rank(*victim) || (rank(*c) == rank(*victim) && c->since < victim->since))
        victim = c.get();
    }
    if (!victim) return false;
    Close(*victim);
    return true;
  }

  void Close(Conn& c) {
    ::close(c.fd);
    auto it = per_peer_.find(c.peer);
    if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
    --open_;
    conns_[static_cast<size_t>(c.fd)].reset();
  }

  void OnEvent(Conn& c, uint32_t events) {
    if (events & (EPOLLERR | EPOLLHUP)) {  // reset, or closed both ways: nobody to answer
      Close(c);
      return;
    }
    if (events & EPOLLIN) {
      if (!Read(c)) return;
    }
    if ((events & EPOLLOUT) && c.state == Conn::State::kWriting) {
      if (!Flush(c)) return;
    }
    Process(c);
  }

  /// Reads what fits under the head cap; false when the connection was closed.
  bool Read(Conn& c) {
    char buf[16384];
    if (c.state == Conn::State::kDraining) {
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) c.drained += static_cast<size_t>(n);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) || c.drained > kDrainMax) {
        Close(c);
        return false;
      }
      return true;
    }
    const size_t room = kMaxRequestHead - std::min(kMaxRequestHead, c.in.size());
    if (room == 0) {
      Watch(c, false, c.want_write);  // the buffered request is answered first
      return true;
    }
    ssize_t n = ::recv(c.fd, buf, std::min(room, sizeof buf), 0);
    if (n > 0) {
      if (c.in.empty() && c.state == Conn::State::kReading && c.served > 0)
        c.since = Clock::now();  // a new request's first byte
      c.in.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      c.peer_eof = true;  // half-closed: what was sent is still answered
      Watch(c, false, c.want_write);
      if (c.in.empty() && c.state == Conn::State::kReading) {
        Close(c);
        return false;
      }
    } else if (errno != EAGAIN && errno != EINTR) {
      Close(c);
      return false;
    }
    return true;
  }

  /// Answers complete requests in order while no reply is in flight (at most kRequestsPerTurn).
  void Process(Conn& c) {
    for (size_t turn = 0; c.state == Conn::State::kReading; ++turn) {
      if (turn == kRequestsPerTurn) {
        ready_.push_back(Tag(c));
        return;
      }
      RequestHead h = ParseRequestHead(c.in);
      if (h.status == RequestHead::Status::kNeedMore) {
        if (c.peer_eof) Close(c);  // an incomplete request will never be finished
        else if (!c.reading && c.in.size() < kMaxRequestHead) Watch(c, true, false);
        return;
      }
      if (h.status == RequestHead::Status::kReject) {
        c.in.clear();
        auto body = std::make_shared<const std::string>(fmt::format("{}\n", ReasonPhrase(h.reject_status)));
        Queue(c, ReplyHead(h.reject_status, "text/plain; charset=utf-8", body->size(), "", true), body, true);
      } else {
        Answer(c, h);
      }
      if (!Flush(c)) return;
    }
  }

  void Answer(Conn& c, const RequestHead& h) {
    HttpReply r = Route(h.method, h.path, metrics_);
    const bool head_only = h.method == "HEAD";
    const bool close = !h.keep_alive || h.has_body || ++c.served >= limits_.keep_alive_max;
    std::shared_ptr<const std::string> body;
    if (r.status == 200 && h.path == "/metrics" && last_body_ && *last_body_ == r.body) {
      body = last_body_;
    } else {
      body = std::make_shared<const std::string>(std::move(r.body));
      if (r.status == 200 && h.path == "/metrics") last_body_ = body;
    }
    c.in.erase(0, h.consumed);
    if (!c.in.empty()) c.since = Clock::now();  // the next pipelined request has begun
    Queue(c, ReplyHead(r.status, r.content_type, body->size(), r.allow, close), head_only ? nullptr : body, close);
  }

  void Queue(Conn& c, std::string head, std::shared_ptr<const std::string> body, bool close) {
    c.out_head = std::move(head);
    c.out_body = std::move(body);
    c.out_off = 0;
    c.close_after = close;
    c.state = Conn::State::kWriting;
    c.since = Clock::now();
  }

  /// Sends what the socket takes; false when the connection was closed.
  bool Flush(Conn& c) {
    const size_t body_size = c.out_body ? c.out_body->size() : 0;
    const size_t total = c.out_head.size() + body_size;
    while (c.out_off < total) {
      iovec iov[2];
      int n_iov = 0;
      if (c.out_off < c.out_head.size()) iov[n_iov++] = {c.out_head.data() + c.out_off, c.out_head.size() - c.out_off};
      size_t body_off = c.out_off > c.out_head.size() ? c.out_off - c.out_head.size() : 0;
      if (body_size > body_off) iov[n_iov++] = {const_cast<char*>(c.out_body->data()) + body_off, body_size - body_off};
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = static_cast<size_t>(n_iov);
      ssize_t n = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
          Watch(c, c.reading, true);
          return true;
        }
        Close(c);
        return false;
      }
      c.out_off += static_cast<size_t>(n);
      c.since = Clock::now();
    }
    c.out_head.clear();
    c.out_body.reset();
    if (c.close_after) {
      ::shutdown(c.fd, SHUT_WR);  // the reply is out; discard what the client still sends, briefly
      c.state = Conn::State::kDraining;
      c.in.clear();
      c.in.shrink_to_fit();
      if (c.peer_eof) {
        Close(c);
        return false;
      }
      Watch(c, true, false);
      return true;
    }
    c.state = Conn::State::kReading;
    if (c.in.empty()) c.in.shrink_to_fit();  // an idle connection holds no buffer
    Watch(c, !c.peer_eof, false);
    return true;
  }

  void RunReady() {
    std::vector<uint64_t> ready;
    ready.swap(ready_);
    for (uint64_t tag : ready)
      if (Conn* c = Find(tag)) Process(*c);
  }

  /// Closes connections whose current wait ran out.
  void Sweep(Clock::time_point now) {
    for (auto& c : conns_) {
      if (!c) continue;
      milliseconds limit = kDrainTime;
      switch (c->state) {
        case Conn::State::kReading:
          limit = milliseconds(c->in.empty() && c->served > 0 ? limits_.keep_alive_timeout_ms
                                                              : limits_.request_deadline_ms);
          break;
        case Conn::State::kWriting: limit = milliseconds(limits_.write_timeout_ms); break;
        case Conn::State::kDraining: limit = kDrainTime; break;
      }
      if (now - c->since >= limit) Close(*c);
    }
  }

  const ServerLimits limits_;
  const std::function<std::string()>& metrics_;
  int ep_ = -1, lfd_ = -1, spare_ = -1;
  std::vector<std::unique_ptr<Conn>> conns_;  ///< by descriptor
  std::unordered_map<std::string, size_t> per_peer_;
  size_t open_ = 0;
  uint32_t gen_ = 0;
  std::vector<uint64_t> ready_;  ///< connections with buffered requests left for the next turn
  std::shared_ptr<const std::string> last_body_;
};

/// Lets the process hold `want` descriptors when the hard limit allows (systemd's soft default is 1024).
void RaiseDescriptorLimit(rlim_t want) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &rl);
}

}  // namespace

Result<void> Serve(const ListenAddress& addr, const ServerLimits& limits, const std::function<std::string()>& metrics,
                   const std::atomic<bool>& stop, const std::function<void(int port)>& on_listening) {
  RaiseDescriptorLimit(static_cast<rlim_t>(limits.max_connections) + 64);
  Loop loop(limits, metrics);
  auto port = loop.Listen(addr);
  if (!port) return std::unexpected(port.error());
  if (on_listening) on_listening(*port);
  loop.Run(stop);
  return {};
}

}  // namespace sparkops
