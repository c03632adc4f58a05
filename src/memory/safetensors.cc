#include "memory/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "host/hostfs.h"

namespace sparkops::memory {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Bytes per element; packed 4-bit types are not in the safetensors spec (MXFP4 ships as U8).
std::optional<double> DtypeBytes(const std::string& d) {
  static const std::map<std::string, double> kBytes = {
      {"F64", 8}, {"I64", 8}, {"U64", 8}, {"F32", 4}, {"I32", 4}, {"U32", 4}, {"F16", 2},
      {"BF16", 2}, {"I16", 2}, {"U16", 2}, {"I8", 1}, {"U8", 1}, {"BOOL", 1}, {"F8_E4M3", 1},
      {"F8_E5M2", 1}, {"F8_E8M0", 1}};
  auto it = kBytes.find(d);
  if (it == kBytes.end()) return std::nullopt;
  return it->second;
}

void Merge(SafetensorsInfo& into, const SafetensorsInfo& add) {
  for (const auto& [d, n] : add.params_by_dtype) into.params_by_dtype[d] += n;
  into.tensor_bytes += add.tensor_bytes;
  into.file_bytes += add.file_bytes;
  into.largest_file_bytes = std::max(into.largest_file_bytes, add.largest_file_bytes);
  into.files += add.files;
}

}  // namespace

uint64_t SafetensorsInfo::params() const {
  uint64_t n = 0;
  for (const auto& [d, c] : params_by_dtype) n += c;
  return n;
}

Result<uint64_t> ParseHeaderLength(std::string_view first8, uint64_t file_size, const std::string& file) {
  if (first8.size() < 8) return InputError(fmt::format("{}: too short for a safetensors header (under 8 bytes)", file));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(first8[i]);
  if (n > kMaxSafetensorsHeader)
    return InputError(fmt::format("{}: header length {} bytes is over the 100 MB limit", file, n));
  if (n + 8 > file_size)
    return InputError(fmt::format("{}: header length {} bytes runs beyond the end of the file ({} bytes)", file, n,
                                  file_size));
  if (n == 0) return InputError(fmt::format("{}: header length is 0", file));
  return n;
}

Result<SafetensorsInfo> ParseSafetensorsHeader(std::string_view json_text, const std::string& file) {
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InputError(fmt::format("{}: header is not a JSON object", file));
  SafetensorsInfo info;
  for (const auto& [name, t] : j.items()) {
    if (name == "__metadata__") continue;
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape") ||
        !t["shape"].is_array())
      return InputError(fmt::format("{}: tensor '{}' has no dtype/shape", file, name));
    std::string dtype = t["dtype"].get<std::string>();
    auto bytes = DtypeBytes(dtype);
    if (!bytes) return InputError(fmt::format("{}: tensor '{}' has unknown dtype '{}'", file, name, dtype));
    uint64_t n = 1;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<int64_t>() >= 0))
        return InputError(fmt::format("{}: tensor '{}' has a bad shape", file, name));
      uint64_t v = d.get<uint64_t>();
      if (v != 0 && n > (uint64_t{1} << 50) / v)
        return InputError(fmt::format("{}: tensor '{}' shape is implausibly large", file, name));
      n *= v;
    }
    info.params_by_dtype[dtype] += n;
    info.tensor_bytes += static_cast<uint64_t>(static_cast<double>(n) * *bytes);
  }
  return info;
}

Result<SafetensorsInfo> ReadSafetensorsFile(const std::string& path) {
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  if (ec) return InputError(fmt::format("{}: cannot read ({})", path, ec.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in) return InputError(fmt::format("{}: cannot open", path));
  std::string first8(8, '\0');
  in.read(first8.data(), 8);
  first8.resize(static_cast<size_t>(in.gcount()));
  auto n = ParseHeaderLength(first8, size, path);
  if (!n) return std::unexpected(n.error());
  std::string header(*n, '\0');  // bounded by kMaxSafetensorsHeader and the file size above
  in.read(header.data(), static_cast<std::streamsize>(*n));
  if (static_cast<uint64_t>(in.gcount()) != *n) return InputError(fmt::format("{}: header truncated", path));
  auto info = ParseSafetensorsHeader(header, path);
  if (!info) return info;
  info->file_bytes = size;
  info->largest_file_bytes = size;
  info->files = 1;
  return info;
}

Result<SafetensorsInfo> ReadSafetensorsDir(const std::string& dir) {
  std::set<std::string> files;
  const std::string index = (fs::path(dir) / "model.safetensors.index.json").string();
  if (fs::exists(index)) {
    auto text = ReadLocalFile(index, 64u << 20);
    if (!text) return std::unexpected(text.error());
    json j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      return InputError(fmt::format("{}: not a safetensors index (no 'weight_map' object)", index));
    for (const auto& [tensor, f] : j["weight_map"].items()) {
      if (!f.is_string()) return InputError(fmt::format("{}: weight_map entry '{}' is not a file name", index, tensor));
      std::string name = f.get<std::string>();
      if (name.find('/') != std::string::npos || name == "..")
        return InputError(fmt::format("{}: weight_map file '{}' is outside the directory", index, name));
      files.insert(name);
    }
    for (const auto& f : files)
      if (!fs::exists(fs::path(dir) / f))
        return InputError(fmt::format("{}: lists shard '{}', which is not in {}", index, f, dir));
  } else {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".safetensors") files.insert(e.path().filename().string());
  }
  if (files.empty()) return NotFound(fmt::format("{}: no *.safetensors files", dir));
  SafetensorsInfo all;
  for (const auto& f : files) {
    auto one = ReadSafetensorsFile((fs::path(dir) / f).string());
    if (!one) return one;
    Merge(all, *one);
  }
  return all;
}

}  // namespace sparkops::memory
