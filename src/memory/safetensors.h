#pragma once
/// safetensors headers: an 8-byte little-endian header length N, then N bytes of JSON
/// {"tensor": {"dtype": "BF16", "shape": [..], "data_offsets": [b, e]}, "__metadata__": {...}}.
/// Only headers are read (never tensor data); N is bounded before anything is allocated.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops::memory {

inline constexpr uint64_t kMaxSafetensorsHeader = 100ull * 1000 * 1000;  ///< 100 MB

struct SafetensorsInfo {
  std::map<std::string, uint64_t> params_by_dtype;  ///< elements per dtype ("BF16" -> n)
  uint64_t tensor_bytes = 0;  ///< sum of tensor data sizes (dtype bytes x elements)
  uint64_t file_bytes = 0;    ///< sum of file sizes on disk
  uint64_t largest_file_bytes = 0;
  int files = 0;
  uint64_t params() const;
};

/// Pure: the length prefix. `file_size` bounds it: N > 100 MB or 8 + N > file_size is an Input
/// error naming `file`.
Result<uint64_t> ParseHeaderLength(std::string_view first8, uint64_t file_size, const std::string& file);
/// Pure: the header JSON -> per-dtype element counts. Unknown dtype, bad shape or bad JSON is an
/// Input error naming `file` and the tensor. Every product and sum is overflow-checked (a tensor
/// over 2^50 elements, or totals past 2^64, are errors). With `data_bytes` (the file's size after
/// the header), each tensor's data_offsets must lie inside it and match its shape x dtype.
Result<SafetensorsInfo> ParseSafetensorsHeader(std::string_view json_text, const std::string& file,
                                               std::optional<uint64_t> data_bytes = std::nullopt);
/// Reads one .safetensors file's header (bounded), adds its size.
Result<SafetensorsInfo> ReadSafetensorsFile(const std::string& path);
/// A model directory: model.safetensors.index.json's shards when present, else every
/// *.safetensors. NotFound when the directory has none.
Result<SafetensorsInfo> ReadSafetensorsDir(const std::string& dir);

}  // namespace sparkops::memory
