#include "analysis/parallel_lines.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace sparkops {

unsigned DefaultScanThreads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int n = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp(n, 1, 16));
}

namespace {

constexpr size_t kReleaseBytes = 4u << 20;  // pages already scanned are dropped every 4 MiB

/// The file mapped read-only; `Release` drops scanned pages from this process's resident set
/// (they stay in the page cache; touching them again just maps them back).
struct Mapping {
  const char* data = nullptr;
  size_t size = 0;
  size_t page = 4096;
  void Release(size_t from, size_t to) const {
    from = from / page * page;
    to = to / page * page;
    if (to > from) ::madvise(const_cast<char*>(data) + from, to - from, MADV_DONTNEED);
  }
};

/// Position of the '\n' ending the line that starts at `pos` (or m.size), releasing the pages
/// of an over-long line's tail as it goes so a line of any length costs bounded memory.
size_t LineEnd(const Mapping& m, size_t pos) {
  size_t from = pos;
  while (from < m.size) {
    size_t len = std::min(m.size - from, kReleaseBytes);
    if (const void* nl = std::memchr(m.data + from, '\n', len)) return static_cast<size_t>(static_cast<const char*>(nl) - m.data);
    if (from - pos > kMaxLineBytes) m.Release(from, from + len);
    from += len;
  }
  return m.size;
}

/// Scans segment `k`: the lines that start in [k*S, (k+1)*S).
void ScanSegment(const Mapping& m, size_t k, size_t seg_bytes, LineSegment& seg, LineReadStats& st) {
  const size_t begin = k * seg_bytes, end = std::min(m.size, begin + seg_bytes);
  st.bytes = end - begin;
  size_t pos = begin;
  if (k > 0) {  // the line in progress at `begin` belongs to the previous segment
    size_t nl = LineEnd(m, begin - 1);
    if (nl >= m.size) return;
    pos = nl + 1;
  }
  size_t released = begin;
  while (pos < end) {
    size_t stop = LineEnd(m, pos);
    size_t len = stop - pos;
    ++st.lines;
    if (len > kMaxLineBytes) {
      ++st.truncated_lines;
      len = kMaxLineBytes;
    }
    seg.Line(std::string_view(m.data + pos, len));
    pos = stop + 1;
    if (pos - released >= kReleaseBytes) {
      m.Release(released, std::min(pos, m.size));
      released = std::min(pos, m.size) / m.page * m.page;
    }
  }
  m.Release(released, std::min(pos, m.size));
}

Result<LineReadStats> Sequential(const std::string& path, const std::function<std::unique_ptr<LineSegment>()>& make,
                                 const std::function<void(LineSegment&)>& merge) {
  constexpr size_t kBatchLines = 65536;
  auto seg = make();
  size_t n = 0;
  auto st = ForEachLine(path, [&](std::string_view line, uint64_t) {
    seg->Line(line);
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
  const size_t size = static_cast<size_t>(sb.st_size);
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (addr == MAP_FAILED) return Sequential(path, make, merge);
  ::madvise(addr, size, MADV_SEQUENTIAL);
  Mapping m{static_cast<const char*>(addr), size, static_cast<size_t>(std::max(::sysconf(_SC_PAGESIZE), 1L))};

  const size_t nseg = (size + seg_bytes - 1) / seg_bytes;
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
  auto work = [&] {
    std::unique_lock lock(mu);
    while (true) {
      cv.wait(lock, [&] { return next >= nseg || next < made; });
      if (next >= nseg) return;
      size_t k = next++;
      lock.unlock();
      LineReadStats st;
      ScanSegment(m, k, seg_bytes, *slots[k].seg, st);
      lock.lock();
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
  ::munmap(addr, size);
  return total;
}

}  // namespace sparkops
