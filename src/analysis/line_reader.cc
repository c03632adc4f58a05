#include "analysis/line_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "analysis/mapped_range.h"
#include "base/encoding.h"
#include "host/hostfs.h"

namespace sparkops {

namespace {
// A regular file is mapped one window at a time (no copy into a buffer) and each window is
// unmapped after use, so resident memory stays bounded whatever the file's size. Returns
// nullopt when the file cannot be mapped (the caller falls back to read()). A file that shrinks
// meanwhile is an IoError (MappedRange reads the lost pages as zeros instead of a SIGBUS).
std::optional<Result<LineReadStats>> MappedLines(int fd, uint64_t size, const std::string& path,
                                                 const std::function<bool(std::string_view, uint64_t)>& fn,
                                                 size_t window) {
  long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) return std::nullopt;
  window = std::max<size_t>(static_cast<size_t>(page), window / static_cast<size_t>(page) * static_cast<size_t>(page));
  LineReadStats st;
  std::string carry;     // the start of a line that continues in the next window
  bool skipping = false;  // inside the tail of an over-long line
  auto deliver = [&](std::string_view line) {
    ++st.lines;
    if (line.size() > kMaxLineBytes) {
      ++st.truncated_lines;
      line = line.substr(0, kMaxLineBytes);
    }
    return fn(line, st.lines);
  };
  for (uint64_t off = 0; off < size; off += window) {
    size_t len = static_cast<size_t>(std::min<uint64_t>(window, size - off));
    auto m = MappedRange::Map(fd, off, len);
    if (!m) {
      if (off == 0) return std::nullopt;
      return Result<LineReadStats>(IoError(path + ": " + m.error().message));
    }
    ::madvise(const_cast<char*>(m->data()), len, MADV_SEQUENTIAL);
    const char* d = m->data();
    size_t start = 0;
    bool stop = false;
    while (const void* nl = std::memchr(d + start, '\n', len - start)) {
      size_t pos = static_cast<size_t>(static_cast<const char*>(nl) - d);
      if (skipping) {
        skipping = false;
      } else if (!carry.empty()) {
        carry.append(d + start, std::min(pos - start, kMaxLineBytes + 1 - std::min(carry.size(), kMaxLineBytes + 1)));
        stop = !deliver(carry);
        carry.clear();
      } else {
        stop = !deliver(std::string_view(d + start, pos - start));
      }
      start = pos + 1;
      if (stop) break;
    }
    if (!stop && !skipping && start < len) {
      size_t rest = len - start;
      if (carry.size() + rest > kMaxLineBytes) {  // an over-long line: hand over its head now
        carry.append(d + start, kMaxLineBytes + 1 - std::min(carry.size(), kMaxLineBytes + 1));
        stop = !deliver(carry);
        carry.clear();
        skipping = true;
      } else {
        carry.append(d + start, rest);
      }
    }
    if (m->Damaged()) return Result<LineReadStats>(IoError(path + ": " + MappedRange::kShrankMessage));
    st.bytes = off + len;
    if (stop) return Result<LineReadStats>(st);
  }
  st.last_unterminated = skipping || !carry.empty();
  if (!skipping && !carry.empty()) deliver(carry);
  return Result<LineReadStats>(st);
}
}  // namespace

Result<LineReadStats> ForEachLine(const std::string& path, const std::function<bool(std::string_view, uint64_t)>& fn,
                                  size_t window) {
  // A regular file or a pipe (streamed); a device (/dev/zero), socket or directory is refused, and a
  // FIFO nobody writes to is an error after a wait, never a hang.
  auto opened = OpenInput(path, InputKind::kRegularOrPipe);
  if (!opened) {
    Error e = opened.error();
    if (e.kind == Error::Kind::kNotFound) e.kind = Error::Kind::kInput;
    return std::unexpected(e);
  }
  int fd = *opened;
  // A UTF-8 byte-order mark is not part of the first line (it would hide a step 1).
  const std::function<bool(std::string_view, uint64_t)> fn_bom = [&fn](std::string_view line, uint64_t n) {
    if (n == 1 && line.substr(0, kUtf8Bom.size()) == kUtf8Bom) line.remove_prefix(kUtf8Bom.size());
    return fn(line, n);
  };
  struct stat sb {};
  if (::fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
    char head[64];
    ssize_t got = ::pread(fd, head, sizeof head, 0);
    if (auto enc = DescribeNonUtf8(std::string_view(head, got > 0 ? static_cast<size_t>(got) : 0))) {
      ::close(fd);
      return InputError(NonUtf8Message(path, *enc));
    }
    auto mapped = MappedLines(fd, static_cast<uint64_t>(sb.st_size), path, fn_bom, window);
    if (mapped) {
      ::close(fd);
      return std::move(*mapped);
    }
  }
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
    if (st.bytes == 0) {  // a pipe: the first block tells the encoding
      if (auto enc = DescribeNonUtf8(std::string_view(buf.data(), static_cast<size_t>(n)))) {
        ::close(fd);
        return InputError(NonUtf8Message(path, *enc));
      }
    }
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
        if (!fn_bom(std::string_view(data + start, pos - start), st.lines)) {
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
      if (!fn_bom(std::string_view(data + start, kMaxLineBytes), st.lines)) break;
      skipping = true;
      have = 0;
    } else {
      std::memmove(buf.data(), data + start, rest);
      have = rest;
    }
  }
  if (!stop) st.last_unterminated = have > 0 || skipping;
  if (!stop && have > 0 && !skipping) {
    ++st.lines;
    fn_bom(std::string_view(buf.data(), have), st.lines);
  }
  ::close(fd);
  return st;
}

}  // namespace sparkops
