#include "analysis/mapped_range.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

namespace sparkops {

namespace {

/// One live mapping, as the signal handler sees it: [lo, hi) in addresses; lo is 0 while the
/// slot is free or being filled (hi is stored first, lo last; cleared in the other order).
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uintptr_t> lo{0}, hi{0};
  std::atomic<bool> damaged{false};
};
static_assert(std::atomic<uintptr_t>::is_always_lock_free, "the SIGBUS handler reads these");

Slot g_slots[MappedRange::kMaxLive];
uintptr_t g_page = 4096;
struct sigaction g_previous {};

/// A page of ours past the file's end becomes a private page of zeros (mmap is a plain system
/// call, safe here); the faulting load then runs again and reads 0. Anything else: the previous
/// disposition takes over (a fault repeats by itself; a sent signal is raised again).
void OnSigbus(int sig, siginfo_t* info, void*) {
  const int saved_errno = errno;  // the interrupted code may be between a call and its errno check
  const uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr);
  if (info->si_code > 0) {  // from the kernel, for a memory access
    for (Slot& s : g_slots) {
      const uintptr_t lo = s.lo.load(std::memory_order_acquire);
      if (lo == 0 || a < lo || a >= s.hi.load(std::memory_order_acquire)) continue;
      // NOLINTNEXTLINE(performance-no-int-to-ptr): the faulting page, from the kernel's address
      void* page = reinterpret_cast<void*>(a & ~(g_page - 1));
      if (::mmap(page, g_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) break;
      s.damaged.store(true, std::memory_order_release);
      errno = saved_errno;
      return;
    }
  }
  ::sigaction(sig, &g_previous, nullptr);
  if (info->si_code <= 0) ::raise(sig);
  errno = saved_errno;
}

void InstallOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page = static_cast<uintptr_t>(page);
    struct sigaction sa {};
    sa.sa_sigaction = OnSigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
  });
}

}  // namespace

Result<MappedRange> MappedRange::Map(int fd, uint64_t off, size_t len) {
  InstallOnce();
  MappedRange m;
  const uint64_t aligned = off / g_page * g_page;
  m.base_len_ = static_cast<size_t>(off - aligned) + len;
  void* p = ::mmap(nullptr, m.base_len_, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(aligned));
  if (p == MAP_FAILED) return IoError(std::string("mmap failed: ") + std::strerror(errno));
  m.base_ = p;
  m.data_ = static_cast<const char*>(p) + (off - aligned);
  m.size_ = len;
  for (size_t i = 0; i < kMaxLive; ++i) {
    bool expected = false;
    if (!g_slots[i].used.compare_exchange_strong(expected, true)) continue;
    g_slots[i].damaged.store(false);
    g_slots[i].hi.store(reinterpret_cast<uintptr_t>(p) + m.base_len_, std::memory_order_release);
    g_slots[i].lo.store(reinterpret_cast<uintptr_t>(p), std::memory_order_release);
    m.slot_ = static_cast<int>(i);
    return m;
  }
  return IoError("mmap failed: too many mappings at once");  // m's destructor unmaps
}

MappedRange::MappedRange(MappedRange&& o) noexcept { *this = std::move(o); }

MappedRange& MappedRange::operator=(MappedRange&& o) noexcept {
  if (this != &o) {
    Release();
    base_ = std::exchange(o.base_, nullptr);
    base_len_ = std::exchange(o.base_len_, 0);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    slot_ = std::exchange(o.slot_, -1);
  }
  return *this;
}

MappedRange::~MappedRange() { Release(); }

bool MappedRange::Damaged() const { return slot_ >= 0 && g_slots[slot_].damaged.load(std::memory_order_acquire); }

void MappedRange::Release() {
  if (slot_ >= 0) {  // out of the handler's table before the addresses can be reused
    g_slots[slot_].lo.store(0, std::memory_order_release);
    g_slots[slot_].hi.store(0, std::memory_order_release);
    g_slots[slot_].used.store(false, std::memory_order_release);
    slot_ = -1;
  }
  if (base_) ::munmap(base_, base_len_);
  base_ = nullptr;
}

}  // namespace sparkops
