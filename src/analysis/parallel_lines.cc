#include "analysis/parallel_lines.h"

#include <fcntl.h>
#include <sched.h>
#include <string.h>  // memrchr
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "base/bytescan.h"

namespace sparkops {

unsigned DefaultScanThreads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int n = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp(n, 1, 16));
}

namespace {

/// The first '\n' in [p, p+n), or null: inline 16-byte blocks (a log line is ~100 bytes, where a
/// memchr call per line costs about as much as the scan).
const char* FindNewline(const char* p, size_t n) {
  size_t i = FindByteWhere(std::string_view(p, n), '\n', [](size_t) { return true; });
  return i == std::string_view::npos ? nullptr : p + i;
}

/// pread that retries short reads and EINTR; the bytes read (fewer only at end of file or on error).
size_t ReadAt(int fd, char* buf, size_t len, size_t off) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = ::pread(fd, buf + got, len - got, static_cast<off_t>(off + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

/// Reads a file forward from an offset in small chunks into a reused buffer (small enough to
/// stay in cache while the lines are parsed), keeping the unread bytes [lo, hi) at hand.
class ChunkReader {
 public:
  /// `chunk`: bytes per read (the segment size when that is smaller, so small segments read
  /// little beyond their end).
  ChunkReader(int fd, uint64_t size, uint64_t off, size_t chunk, std::vector<char>& buf)
      : chunk_(std::clamp<size_t>(chunk, 4096, kMaxChunk)), fd_(fd), size_(size), off_(off), buf_(buf) {
    buf_.resize(std::max(buf_.size(), kMaxChunk + kMaxLineBytes + 1));
  }
  /// Moves [lo, hi) to the front and reads the next chunk after it: bytes read (0 at end of file),
  /// or -errno. `lo`/`hi` and positions the caller holds shift by the old `lo` (returned in *shift).
  ssize_t Fill(size_t* shift) {
    *shift = lo;
    if (lo > 0) {
      std::memmove(buf_.data(), buf_.data() + lo, hi - lo);
      hi -= lo;
      last_cr_ -= static_cast<ssize_t>(lo);  // below 0: the '\r' was dropped
      lo = 0;
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(std::min(chunk_, buf_.size() - hi), size_ - off_));
    if (want == 0) return 0;
    errno = 0;
    size_t got = ReadAt(fd_, buf_.data() + hi, want, off_);
    if (got != want) return -(errno ? errno : EIO);
    if (const void* cr = ::memrchr(buf_.data() + hi, '\r', got))
      last_cr_ = static_cast<const char*>(cr) - buf_.data();
    hi += got;
    off_ += got;
    return static_cast<ssize_t>(got);
  }
  uint64_t Offset(size_t i) const { return off_ - (hi - i); }  ///< file offset of buf[i]
  /// False when no '\r' is buffered at or after buf[i].
  bool MayHaveCr(size_t i) const { return last_cr_ >= static_cast<ssize_t>(i); }
  const char* data() const { return buf_.data(); }
  size_t lo = 0, hi = 0;

 private:
  static constexpr size_t kMaxChunk = 256u << 10;
  size_t chunk_;
  int fd_;
  uint64_t size_, off_;
  std::vector<char>& buf_;
  ssize_t last_cr_ = -1;  ///< index of the last '\r' in the buffer, < 0 when there is none
};

/// Scans segment `k`: the lines that start in [k*S, (k+1)*S) of a file of `size` bytes, pread in
/// 256 KiB chunks into `buf` (reused across segments). A line that runs past the segment's end
/// is completed from the bytes after it; one longer than kMaxLineBytes is cut there and its
/// tail skipped. Returns 0, or the errno of a failed read (EIO when the file shrank meanwhile).
int ScanSegment(int fd, uint64_t size, size_t k, size_t seg_bytes, std::vector<char>& buf, LineSegment& seg,
                LineReadStats& st) {
  const uint64_t begin = static_cast<uint64_t>(k) * seg_bytes, end = std::min<uint64_t>(size, begin + seg_bytes);
  st.bytes = end - begin;
  // From begin-1: a '\n' there means a line starts exactly at `begin`.
  ChunkReader r(fd, size, begin > 0 ? begin - 1 : 0, seg_bytes + 1, buf);
  size_t shift = 0;
  // Skips through the next '\n' (the rest of a line that is not ours, or an over-long tail):
  // 1, or 0 at end of file or once every byte before `limit` was scanned without one, or -errno.
  auto skip_line = [&](uint64_t limit) -> ssize_t {
    while (true) {
      if (const void* nl = std::memchr(r.data() + r.lo, '\n', r.hi - r.lo)) {
        r.lo = static_cast<size_t>(static_cast<const char*>(nl) - r.data()) + 1;
        return 1;
      }
      r.lo = r.hi;
      if (r.Offset(r.hi) >= limit) return 0;
      ssize_t n = r.Fill(&shift);
      if (n <= 0) return n;
    }
  };
  // The line running into this segment is its starter's; if it runs past `end`, no line starts here.
  if (k > 0) {
    ssize_t n = skip_line(end);
    if (n <= 0) return static_cast<int>(-n);
  }
  while (true) {
    if (r.lo == r.hi) {  // nothing buffered: read on (or stop at end of file)
      ssize_t n = r.Fill(&shift);
      if (n < 0) return static_cast<int>(-n);
      if (n == 0) return 0;
    }
    if (r.Offset(r.lo) >= end) return 0;  // this line belongs to the next segment
    size_t scan = r.lo;
    const void* nl = nullptr;
    while (!(nl = FindNewline(r.data() + scan, r.hi - scan)) && r.hi - r.lo <= kMaxLineBytes) {
      scan = r.hi;
      ssize_t n = r.Fill(&shift);
      scan -= shift;
      if (n < 0) return static_cast<int>(-n);
      if (n == 0) break;  // the last line, without a '\n'
    }
    ++st.lines;
    if (nl) {
      size_t stop = static_cast<size_t>(static_cast<const char*>(nl) - r.data());
      if (stop - r.lo > kMaxLineBytes) ++st.truncated_lines;
      seg.Line(std::string_view(r.data() + r.lo, std::min(stop - r.lo, kMaxLineBytes)), r.MayHaveCr(r.lo));
      r.lo = stop + 1;
    } else if (r.hi - r.lo > kMaxLineBytes) {  // over-long: hand over its head, skip the rest
      ++st.truncated_lines;
      seg.Line(std::string_view(r.data() + r.lo, kMaxLineBytes), r.MayHaveCr(r.lo));
      r.lo += kMaxLineBytes;
      ssize_t n = skip_line(UINT64_MAX);
      if (n <= 0) return static_cast<int>(-n);
    } else {  // end of file
      seg.Line(std::string_view(r.data() + r.lo, r.hi - r.lo), r.MayHaveCr(r.lo));
      return 0;
    }
  }
}

Result<LineReadStats> Sequential(const std::string& path, const std::function<std::unique_ptr<LineSegment>()>& make,
                                 const std::function<void(LineSegment&)>& merge) {
  constexpr size_t kBatchLines = 65536;
  auto seg = make();
  size_t n = 0;
  auto st = ForEachLine(path, [&](std::string_view line, uint64_t) {
    seg->Line(line, true);
    if (++n == kBatchLines) {
      merge(*seg);
      seg->Clear();
      n = 0;
    }
    return true;
  });
  if (st) merge(*seg);
  return st;
}

}  // namespace

Result<LineReadStats> ForEachLineParallel(const std::string& path,
                                          const std::function<std::unique_ptr<LineSegment>()>& make,
                                          const std::function<void(LineSegment&)>& merge, ParallelLineOptions opt) {
  const unsigned threads = opt.threads ? opt.threads : DefaultScanThreads();
  const size_t seg_bytes = std::max<size_t>(opt.segment_bytes, 1);
  // stat, not open: opening a FIFO here would consume the writer ForEachLine needs.
  struct stat sb {};
  if (threads < 2 || ::stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode) ||
      static_cast<uint64_t>(sb.st_size) < 2 * seg_bytes)
    return Sequential(path, make, merge);  // ForEachLine reports a missing file, naming it
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Sequential(path, make, merge);
  if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || static_cast<uint64_t>(sb.st_size) < 2 * seg_bytes) {
    ::close(fd);
    return Sequential(path, make, merge);
  }
  const uint64_t size = static_cast<uint64_t>(sb.st_size);
  const size_t nseg = static_cast<size_t>((size + seg_bytes - 1) / seg_bytes);
  const size_t ahead = 2 * static_cast<size_t>(threads);  // segments parsed but not yet merged, at most
  struct Slot {
    std::unique_ptr<LineSegment> seg;
    LineReadStats st;
    bool done = false;
  };
  std::vector<Slot> slots(nseg);
  for (size_t k = 0; k < std::min(nseg, ahead); ++k) slots[k].seg = make();
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0, made = std::min(nseg, ahead);
  int read_error = 0;
  auto work = [&] {
    std::vector<char> buf;
    std::unique_lock lock(mu);
    while (true) {
      cv.wait(lock, [&] { return next >= nseg || next < made; });
      if (next >= nseg) return;
      size_t k = next++;
      lock.unlock();
      LineReadStats st;
      int err = ScanSegment(fd, size, k, seg_bytes, buf, *slots[k].seg, st);
      lock.lock();
      if (err && !read_error) read_error = err;
      slots[k].st = st;
      slots[k].done = true;
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < std::min<size_t>(threads, nseg); ++i) pool.emplace_back(work);
  LineReadStats total;
  for (size_t k = 0; k < nseg; ++k) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return slots[k].done; });
    }
    merge(*slots[k].seg);
    total.bytes += slots[k].st.bytes;
    total.lines += slots[k].st.lines;
    total.truncated_lines += slots[k].st.truncated_lines;
    std::unique_ptr<LineSegment> done = std::move(slots[k].seg);
    if (made < nseg) {  // reused for the segment this merge frees room for
      done->Clear();
      std::lock_guard lock(mu);
      slots[made++].seg = std::move(done);
      cv.notify_all();
    }
  }
  for (auto& t : pool) t.join();
  ::close(fd);
  if (read_error) return IoError(path + ": read failed: " + std::strerror(read_error));
  return total;
}

}  // namespace sparkops
