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
#include "base/encoding.h"

namespace sparkops {

unsigned DefaultScanThreads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int n = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp(n, 1, 16));
}

namespace {

/// Scans segment `k`: the lines that start in [k*S, (k+1)*S) of a file of `size` bytes, mapped
/// (no copy) with kMaxLineBytes + 1 bytes after it, so the last line is completed from the
/// next segment's bytes and one longer than kMaxLineBytes is cut there. Mappings are per segment
/// and unmapped after it (one mapping of the whole file, with pages dropped as they were
/// scanned, made the workers' page-table updates interrupt each other). Returns what went
/// wrong (a failed mmap, the file shrinking meanwhile), empty when nothing did. Line ends come
/// from LineBreakMasks, 64 bytes at a time (a log line is ~100 bytes: a memchr call, or a
/// 16-byte loop, per line cost about as much as the bytes it scanned).
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
  size_t lo = 0;             // where the current line starts
  bool skip = k > 0;         // the line running into the segment is its starter's: skip to its end
  bool pending_cr = false;   // a '\r' in the current line, in the blocks already passed
  for (size_t base = 0; base < n && lo < stop; base += 64) {
    uint64_t nl, cr;
    LineBreakMasks(d + base, n - base, &nl, &cr);
    while (nl) {
      const uint64_t upto = nl ^ (nl - 1);  // the bits up to and including the first '\n'
      const size_t pos = base + static_cast<size_t>(__builtin_ctzll(nl));
      const bool line_cr = pending_cr || (cr & upto) != 0;
      cr &= ~upto;
      nl &= nl - 1;
      pending_cr = false;
      if (skip) {
        skip = false;
      } else {
        ++st.lines;
        if (pos - lo > kMaxLineBytes) ++st.truncated_lines;  // over-long: hand over its head
        seg.Line(std::string_view(d + lo, std::min(pos - lo, kMaxLineBytes)), line_cr);
      }
      lo = pos + 1;
      if (lo >= stop) break;  // the next line is the next segment's
    }
    pending_cr = pending_cr || cr != 0;
  }
  // A line starting before `stop` with no '\n' in the mapping: one longer than kMaxLineBytes
  // (its head), or the file's last line.
  if (!skip && lo < stop && (n - lo > kMaxLineBytes || at_eof)) {
    ++st.lines;
    if (n - lo > kMaxLineBytes) ++st.truncated_lines;
    seg.Line(std::string_view(d + lo, std::min(n - lo, kMaxLineBytes)), pending_cr);
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
  {  // UTF-16/32 is an error (ForEachLine names it); a UTF-8 BOM is stripped there, on line 1
    char head[64];
    ssize_t got = ::pread(fd, head, sizeof head, 0);
    std::string_view h(head, got > 0 ? static_cast<size_t>(got) : 0);
    if (DescribeNonUtf8(h) || h.substr(0, kUtf8Bom.size()) == kUtf8Bom) {
      ::close(fd);
      return Sequential(path, make, merge);
    }
  }
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
