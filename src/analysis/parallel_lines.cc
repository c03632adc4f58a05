#include "analysis/parallel_lines.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "analysis/mapped_range.h"
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

/// The first '\n' in [p, p+n) (npos if none), and whether a '\r' comes before it: one pass of
/// inline 16-byte blocks (a log line is ~100 bytes, where a memchr call per line costs about as
/// much as the scan).
size_t FindNewline(const char* p, size_t n, bool* cr) {
  *cr = false;
  return FindEitherByteWhere(std::string_view(p, n), '\n', '\r', [&](size_t i) {
    if (p[i] == '\n') return true;
    *cr = true;
    return false;
  });
}

/// Scans segment `k`: the lines that start in [k*S, (k+1)*S) of a file of `size` bytes, mapped
/// (no copy) with kMaxLineBytes + 1 bytes after it, so the last line is completed from the
/// next segment's bytes and one longer than kMaxLineBytes is cut there. Mappings are per segment
/// and unmapped after it (one mapping of the whole file, with pages dropped as they were
/// scanned, made the workers' page-table updates interrupt each other). Returns what went
/// wrong (a failed mmap, the file shrinking meanwhile), empty when nothing did.
std::string ScanSegment(int fd, uint64_t size, size_t k, size_t seg_bytes, LineSegment& seg, LineReadStats& st) {
  const uint64_t begin = static_cast<uint64_t>(k) * seg_bytes, end = std::min<uint64_t>(size, begin + seg_bytes);
  st.bytes = end - begin;
  // From begin-1: a '\n' there means a line starts exactly at `begin`.
  const uint64_t from = begin > 0 ? begin - 1 : 0, to = std::min<uint64_t>(size, end + kMaxLineBytes + 1);
  auto m = MappedRange::Map(fd, from, static_cast<size_t>(to - from));
  if (!m) return m.error().message;
  const char* d = m->data();
  const size_t n = m->size(), stop = static_cast<size_t>(end - from);
  const bool at_eof = to == size;
  size_t lo = 0;
  bool cr = false;  // a '\r' before the '\n' found last
  auto find_nl = [&](size_t at, size_t len) {
    const size_t i = FindNewline(d + at, len, &cr);
    return i == std::string_view::npos ? i : at + i;
  };
  // The line running into this segment is its starter's; if it runs past `end`, no line starts here.
  if (k > 0) {
    size_t nl = find_nl(0, stop);
    lo = nl == std::string_view::npos ? stop : nl + 1;
  }
  while (lo < stop) {
    ++st.lines;
    const size_t window = std::min(n - lo, kMaxLineBytes + 1);
    const size_t nl = find_nl(lo, window);
    if (nl != std::string_view::npos) {
      seg.Line(std::string_view(d + lo, nl - lo), cr);
      lo = nl + 1;
    } else if (window > kMaxLineBytes) {  // over-long: hand over its head, skip the rest
      ++st.truncated_lines;
      seg.Line(std::string_view(d + lo, kMaxLineBytes), cr);
      const size_t tail = find_nl(lo + kMaxLineBytes, n - lo - kMaxLineBytes);
      if (tail == std::string_view::npos) break;  // it runs past what is mapped, so past `end`
      lo = tail + 1;
    } else {  // the last line of the file, without a '\n'
      if (at_eof) seg.Line(std::string_view(d + lo, n - lo), cr);
      break;
    }
  }
  return m->Damaged() ? MappedRange::kShrankMessage : "";
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
  std::string read_error;
  auto work = [&] {
    std::unique_lock lock(mu);
    while (true) {
      cv.wait(lock, [&] { return next >= nseg || next < made; });
      if (next >= nseg) return;
      size_t k = next++;
      lock.unlock();
      LineReadStats st;
      std::string err = ScanSegment(fd, size, k, seg_bytes, *slots[k].seg, st);
      lock.lock();
      if (!err.empty() && read_error.empty()) read_error = std::move(err);
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
  if (!read_error.empty()) return IoError(path + ": " + read_error);
  return total;
}

}  // namespace sparkops
