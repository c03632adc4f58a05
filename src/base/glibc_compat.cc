// Keeps the static build's glibc requirement at 2.35 (Ubuntu 22.04; tests/release.cmake checks it).
// libstdc++.a's std::random_device (pulled in by its COW-string instances, never used by sparkops)
// calls arc4random, which glibc only exports from 2.36 on. A definition here is what the static
// link resolves it to instead: the same contract (uniform 32 random bits, never fails), from
// getrandom(2) (glibc 2.25), falling back to /dev/urandom; abort() when neither gives bytes.
// Compiled only with SPARKOPS_STATIC_DEPS (cmake/static_deps.cmake).
#ifdef SPARKOPS_GLIBC_COMPAT
#include <fcntl.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

extern "C" uint32_t arc4random(void) noexcept {
  uint32_t v = 0;
  auto* p = reinterpret_cast<unsigned char*>(&v);
  size_t got = 0;
  while (got < sizeof v) {
    ssize_t n = getrandom(p + got, sizeof v - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  if (got < sizeof v) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && got < sizeof v) {
      ssize_t n = read(fd, p + got, sizeof v - got);
      if (n > 0) {
        got += static_cast<size_t>(n);
      } else if (!(n < 0 && errno == EINTR)) {
        break;
      }
    }
    if (fd >= 0) close(fd);
  }
  if (got < sizeof v) abort();
  return v;
}
#endif
