// RequestStream (exporter/request_stream.h): reads stop waiting at the request deadline, bytes
// that already arrived are still read, and a stream that expired writes nothing.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "exporter/request_stream.h"

namespace sparkops {
namespace {

using Clock = RequestStream::Clock;
using std::chrono::milliseconds;

/// A connected pair of stream sockets: [0] is the server's side, [1] the client's.
struct SocketPair {
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd), 0); }
  ~SocketPair() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
  void CloseClient() {
    close(fd[1]);
    fd[1] = -1;
  }
  int fd[2] = {-1, -1};
};

long MsSince(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
}

TEST(RequestStream, BytesThatArrivedAreReadAfterTheDeadlineThenItExpires) {
  SocketPair s;
  ASSERT_EQ(write(s.fd[1], "GET /", 5), 5);
  RequestStream strm(s.fd[0], Clock::now() - milliseconds(1000), milliseconds(5000), milliseconds(5000));
  char buf[16];
  ASSERT_EQ(strm.read(buf, 2), 2);  // read-ahead keeps the rest
  ASSERT_EQ(strm.read(buf + 2, sizeof buf - 2), 3);
  EXPECT_EQ(std::string(buf, 5), "GET /");
  EXPECT_FALSE(strm.expired());
  auto t0 = Clock::now();
  EXPECT_EQ(strm.read(buf, sizeof buf), -1);  // nothing more, and the deadline has passed: no wait
  EXPECT_LT(MsSince(t0), 500);
  EXPECT_TRUE(strm.expired());
  EXPECT_FALSE(strm.is_writable());
  EXPECT_EQ(strm.write("HTTP/1.1 400\r\n", 14), -1);  // no reply to a request that came too late
}

TEST(RequestStream, AReadWaitsUntilTheDeadlineAndNoLonger) {
  SocketPair s;
  RequestStream strm(s.fd[0], Clock::now() + milliseconds(300), milliseconds(5000), milliseconds(5000));
  auto t0 = Clock::now();
  char c;
  EXPECT_EQ(strm.read(&c, 1), -1);
  long waited = MsSince(t0);
  EXPECT_GE(waited, 250);
  EXPECT_LT(waited, 3000);  // not the 5 s read timeout
  EXPECT_TRUE(strm.expired());
}

TEST(RequestStream, ReadTimeoutBeforeTheDeadlineIsAnErrorNotExpiry) {
  SocketPair s;
  RequestStream strm(s.fd[0], Clock::now() + milliseconds(60000), milliseconds(100), milliseconds(100));
  char c;
  EXPECT_EQ(strm.read(&c, 1), -1);
  EXPECT_FALSE(strm.expired());
  EXPECT_TRUE(strm.is_writable());
}

TEST(RequestStream, TricklingBytesAreReadUntilTheDeadline) {
  SocketPair s;
  std::atomic<bool> stop{false};
  std::thread client([&] {  // 10 bytes a second: each read alone is far inside the 5 s read timeout
    for (int i = 0; i < 50 && !stop; ++i) {
      if (write(s.fd[1], "x", 1) != 1) break;
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  RequestStream strm(s.fd[0], Clock::now() + milliseconds(450), milliseconds(5000), milliseconds(5000));
  auto t0 = Clock::now();
  std::string got;
  char c;
  while (strm.read(&c, 1) == 1) got += c;
  const long took = MsSince(t0);
  stop = true;
  client.join();
  EXPECT_TRUE(strm.expired());
  EXPECT_GE(took, 400);
  EXPECT_LT(took, 3000);
  EXPECT_GE(got.size(), 2u);
  EXPECT_LE(got.size(), 6u);
}

TEST(RequestStream, EndOfStreamAndWrites) {
  SocketPair s;
  RequestStream strm(s.fd[0], Clock::now() + milliseconds(5000), milliseconds(1000), milliseconds(1000));
  EXPECT_EQ(strm.write("hello", 5), 5);
  char buf[8];
  ASSERT_EQ(read(s.fd[1], buf, sizeof buf), 5);
  EXPECT_EQ(strm.socket(), s.fd[0]);
  s.CloseClient();
  EXPECT_EQ(strm.read(buf, sizeof buf), 0);
  EXPECT_FALSE(strm.is_writable());  // the peer has gone
  EXPECT_FALSE(strm.expired());
}

}  // namespace
}  // namespace sparkops
