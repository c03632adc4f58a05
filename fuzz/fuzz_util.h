#pragma once
/// Shared helpers for the libFuzzer targets: a property that fails stops the run like a crash.
#include <cstdio>
#include <cstdlib>
#include <string_view>

/// Aborts (libFuzzer records the input) when a parser's contract does not hold.
#define FUZZ_CHECK(cond)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}
