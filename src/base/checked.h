#pragma once
/// Overflow-checked arithmetic for sizes and counts that come from files (safetensors shapes,
/// ELF offsets): nullopt instead of a silent wrap.
#include <cstdint>
#include <optional>

namespace sparkops {

inline std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace sparkops
