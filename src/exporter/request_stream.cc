#include "exporter/request_stream.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sparkops {

namespace {

void IpAndPort(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  if (addr.ss_family == AF_INET)
    port = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  else if (addr.ss_family == AF_INET6)
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  else
    return;
  char host[NI_MAXHOST] = "";
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) == 0)
    ip = host;
}

}  // namespace

bool RequestStream::WaitFor(short events, Clock::time_point until) const {
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
    pollfd p{sock_, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::max<decltype(left)>(left, 0)));
    if (r < 0 && errno == EINTR) continue;
    return r > 0;  // POLLHUP/POLLERR count as ready: the recv/send that follows reports them
  }
}

bool RequestStream::WaitReadable() const {
  if (expired_) return false;
  const auto now = Clock::now();
  if (WaitFor(POLLIN, std::min(deadline_, now + read_timeout_))) return true;
  if (Clock::now() >= deadline_) expired_ = true;
  return false;
}

bool RequestStream::is_readable() const { return buf_off_ < buf_len_ || WaitReadable(); }

bool RequestStream::is_writable() const {
  if (expired_ || !WaitFor(POLLOUT, Clock::now() + write_timeout_)) return false;
  // Like httplib's own stream: a peer that has closed its side is not worth writing to.
  pollfd p{sock_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return true;
  char c;
  return ::recv(sock_, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

ssize_t RequestStream::read(char* ptr, size_t size) {
  if (buf_off_ == buf_len_) {
    buf_off_ = buf_len_ = 0;
    for (;;) {
      if (!WaitReadable()) return -1;
      ssize_t n = ::recv(sock_, buf_, sizeof buf_, MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n <= 0) return n;
      buf_len_ = static_cast<size_t>(n);
      break;
    }
  }
  size_t n = std::min(size, buf_len_ - buf_off_);
  std::memcpy(ptr, buf_ + buf_off_, n);
  buf_off_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t RequestStream::write(const char* ptr, size_t size) {
  if (size == 0) return 0;
  for (;;) {
    if (!is_writable()) return -1;
    ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    return n;
  }
}

void RequestStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) IpAndPort(addr, len, ip, port);
}

void RequestStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) IpAndPort(addr, len, ip, port);
}

}  // namespace sparkops
