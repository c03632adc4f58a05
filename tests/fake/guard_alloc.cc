// guard_alloc STEP_MIB INTERVAL_MS CAP_MIB: allocates STEP_MIB (pages written, so resident) every
// INTERVAL_MS until CAP_MIB, printing "allocated N MiB" after each step, then sleeps until signalled.
// With the environment variable GUARD_ALLOC_MARK=PATH it also writes the CLOCK_MONOTONIC time of
// each step ("N MiB <ns>") to PATH, for bench/guard.sh's reaction time.
// GUARD_ALLOC_MODE=clear-argv zeroes its argv in memory (an empty /proc/PID/cmdline);
// GUARD_ALLOC_MODE=zombie-leader allocates in a second thread while the main thread calls
// pthread_exit (the leader is a zombie with no VmRSS; the thread group holds the memory).
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
long step, interval, cap;

void* Allocate(void*);
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: guard_alloc STEP_MIB INTERVAL_MS CAP_MIB\n");
    return 2;
  }
  step = std::atol(argv[1]), interval = std::atol(argv[2]), cap = std::atol(argv[3]);
  if (step <= 0 || interval < 0 || cap <= 0 || cap > (1L << 20)) return 2;
  const char* mode = std::getenv("GUARD_ALLOC_MODE");
  if (mode && std::strcmp(mode, "clear-argv") == 0)
    for (int i = 0; i < argc; ++i) std::memset(argv[i], 0, std::strlen(argv[i]));
  if (mode && std::strcmp(mode, "zombie-leader") == 0) {
    pthread_t t;
    if (pthread_create(&t, nullptr, Allocate, nullptr) != 0) return 3;
    pthread_exit(nullptr);
  }
  Allocate(nullptr);
}

namespace {
void* Allocate(void*) {
  std::FILE* mark = nullptr;
  if (const char* m = std::getenv("GUARD_ALLOC_MARK")) mark = std::fopen(m, "w");
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("ready\n");
  for (long have = 0; have < cap;) {
    size_t bytes = static_cast<size_t>(step) << 20;
    char* p = static_cast<char*>(std::malloc(bytes));
    if (!p) std::exit(3);
    std::memset(p, 1, bytes);
    have += step;
    std::printf("allocated %ld MiB\n", have);
    if (mark) {
      timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      std::fprintf(mark, "%ld %lld\n", have, static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec);
      std::fflush(mark);
    }
    usleep(static_cast<useconds_t>(interval) * 1000);
  }
  for (;;) pause();
}
}  // namespace
