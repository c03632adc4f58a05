#pragma once
/// The exporter's connection stream: an httplib::Stream over a connected socket whose reads stop
/// waiting at a deadline. cpp-httplib 0.11 only bounds each read (a client trickling one byte per
/// second never trips a 5 s read timeout), so a whole request needs its own deadline; the server
/// (server.cc) gives each request one. Debian splits httplib into a shared library whose header
/// does not declare its own SocketStream, so this is a complete Stream of ours.
#include <httplib.h>

#include <chrono>

namespace sparkops {

class RequestStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;

  /// `deadline`: reads wait for the client until then and no longer; bytes that have already
  /// arrived are still read after it. Each wait is also bounded by `read_timeout` (reads) or
  /// `write_timeout` (writes). The stream does not own `sock`.
  RequestStream(int sock, Clock::time_point deadline, std::chrono::milliseconds read_timeout,
                std::chrono::milliseconds write_timeout)
      : sock_(sock), deadline_(deadline), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

  /// True once a read gave up at the deadline. Writes then fail too: a request that did not
  /// arrive in time gets no reply, its connection is closed.
  bool expired() const { return expired_; }

  bool is_readable() const override;
  bool is_writable() const override;
  /// Up to `size` bytes; 0 at end of stream; -1 on error, read timeout or deadline.
  ssize_t read(char* ptr, size_t size) override;
  /// Writes what fits (at least one byte) within the write timeout; -1 on error or timeout.
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

 private:
  /// Waits until `events` are ready on the socket or `until` passes; true when ready.
  bool WaitFor(short events, Clock::time_point until) const;
  /// Waits for bytes to read (read timeout, deadline); sets expired_ when the deadline ended it.
  bool WaitReadable() const;

  int sock_;
  Clock::time_point deadline_;
  std::chrono::milliseconds read_timeout_, write_timeout_;
  mutable bool expired_ = false;
  char buf_[4096];  ///< httplib reads request lines one byte at a time: read ahead
  size_t buf_off_ = 0, buf_len_ = 0;
};

}  // namespace sparkops
