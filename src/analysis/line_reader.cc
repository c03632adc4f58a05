#include "analysis/line_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace sparkops {

Result<LineReadStats> ForEachLine(const std::string& path,
                                  const std::function<bool(std::string_view, uint64_t)>& fn) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(errno == ENOENT ? Error::Kind::kInput : Error::Kind::kIo, path + ": " + std::strerror(errno));
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  constexpr size_t kBlock = 4u << 20;
  std::vector<char> buf(kBlock + kMaxLineBytes);
  size_t have = 0;        // bytes of a partial line kept at the front of buf
  bool skipping = false;  // inside the tail of an over-long line
  LineReadStats st;
  bool stop = false;
  while (!stop) {
    ssize_t n = ::read(fd, buf.data() + have, kBlock);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return IoError(path + ": read failed: " + std::strerror(e));
    }
    if (n == 0) break;
    st.bytes += static_cast<uint64_t>(n);
    const char* data = buf.data();
    size_t end = have + static_cast<size_t>(n);
    size_t start = 0;
    size_t scan = have;
    while (true) {
      const void* nl = std::memchr(data + scan, '\n', end - scan);
      if (!nl) break;
      size_t pos = static_cast<size_t>(static_cast<const char*>(nl) - data);
      if (!skipping) {
        ++st.lines;
        if (!fn(std::string_view(data + start, pos - start), st.lines)) {
          stop = true;
          break;
        }
      } else {
        skipping = false;
      }
      start = pos + 1;
      scan = start;
    }
    if (stop) break;
    size_t rest = end - start;
    if (skipping) {
      have = 0;
    } else if (rest > kMaxLineBytes) {
      ++st.lines;
      ++st.truncated_lines;
      if (!fn(std::string_view(data + start, kMaxLineBytes), st.lines)) break;
      skipping = true;
      have = 0;
    } else {
      std::memmove(buf.data(), data + start, rest);
      have = rest;
    }
  }
  if (!stop && have > 0 && !skipping) {
    ++st.lines;
    fn(std::string_view(buf.data(), have), st.lines);
  }
  ::close(fd);
  return st;
}

}  // namespace sparkops
